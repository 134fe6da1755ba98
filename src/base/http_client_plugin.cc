// SPDX-License-Identifier: Apache-2.0
// The HTTP(S) client behind HttpExchange and HttpSession, built as a plugin so that only the
// programs that call out over HTTP map cpp-httplib and OpenSSL (see http_exchange.h).
#include <chrono>
#include <memory>
#include <string_view>

#include <httplib.h>

#include "base/http_exchange.h"

namespace vigil {
namespace {

// A client kept between calls, with the base URL it was made for.
struct Session {
  std::string base_url;
  std::unique_ptr<httplib::Client> client;
};

std::unique_ptr<httplib::Client> MakeClient(const HttpRequest& r) {
  auto client = std::make_unique<httplib::Client>(r.base_url);
  if (!client->is_valid()) return nullptr;
  const auto micros = [](int64_t ns) {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::nanoseconds(ns));
  };
  client->set_connection_timeout(
      micros(r.connect_timeout_ns > 0 ? r.connect_timeout_ns : r.timeout_ns));
  client->set_read_timeout(micros(r.timeout_ns));
  client->set_write_timeout(micros(r.timeout_ns));
  if (!r.ca_file.empty()) client->set_ca_cert_path(r.ca_file.c_str());
  return client;
}

StatusOr<HttpReply> Exchange(httplib::Client& client, const HttpRequest& r) {
  client.set_compress(r.gzip);
  const httplib::Headers headers(r.headers.begin(), r.headers.end());
  const std::string_view method = r.method;
  httplib::Result res =
      method == "GET" ? client.Get(r.path, headers)
      : !r.form.empty()
          ? client.Post(r.path, headers, httplib::Params(r.form.begin(), r.form.end()))
          : client.Post(r.path, headers, r.body, r.content_type);
  if (!res) return UnavailableError(httplib::to_string(res.error()));
  return HttpReply{res->status, std::move(res->body)};
}

void ExchangeEntry(void** session, const HttpRequest& r, StatusOr<HttpReply>* reply) {
  if (session == nullptr) {
    std::unique_ptr<httplib::Client> client = MakeClient(r);
    *reply =
        client ? Exchange(*client, r)
               : StatusOr<HttpReply>(InvalidArgumentError("not an http[s]:// URL: " + r.base_url));
    return;
  }
  auto* s = static_cast<Session*>(*session);
  if (s == nullptr || s->base_url != r.base_url) {
    delete s;
    s = new Session{r.base_url, MakeClient(r)};
    if (s->client) s->client->set_keep_alive(true);
    *session = s;
  }
  *reply = s->client
               ? Exchange(*s->client, r)
               : StatusOr<HttpReply>(InvalidArgumentError("not an http[s]:// URL: " + r.base_url));
}

void CloseEntry(void* session) { delete static_cast<Session*>(session); }

constexpr HttpPluginApi kApi = {ExchangeEntry, CloseEntry};

}  // namespace
}  // namespace vigil

extern "C" __attribute__((visibility("default"))) const vigil::HttpPluginApi*
vigil_http_client_v2() {
  return &vigil::kApi;
}
