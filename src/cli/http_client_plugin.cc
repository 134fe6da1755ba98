// SPDX-License-Identifier: Apache-2.0
// The HTTP(S) client behind HttpExchange, built as a plugin so only the commands that call
// vigil-fleet, Prometheus or VictoriaMetrics map cpp-httplib and OpenSSL (see http_exchange.h).
#include <chrono>
#include <string_view>

#include <httplib.h>

#include "cli/http_exchange.h"

namespace vigil {
namespace {

StatusOr<HttpReply> Exchange(const HttpRequest& r) {
  httplib::Client client(r.base_url);
  if (!client.is_valid()) return InvalidArgumentError("not an http[s]:// URL: " + r.base_url);
  const auto timeout =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::nanoseconds(r.timeout_ns));
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  client.set_write_timeout(timeout);
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

}  // namespace
}  // namespace vigil

extern "C" __attribute__((visibility("default"))) void vigil_http_exchange_v1(
    const vigil::HttpRequest& request, vigil::StatusOr<vigil::HttpReply>* reply) {
  *reply = vigil::Exchange(request);
}
