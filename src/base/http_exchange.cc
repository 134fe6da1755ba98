// SPDX-License-Identifier: Apache-2.0
#include "base/http_exchange.h"

#include "base/plugin.h"

namespace vigil {

namespace {

StatusOr<const HttpPluginApi*> Plugin() {
  VIGIL_ASSIGN_OR_RETURN(void* entry,
                         LoadPluginSymbol(kHttpPluginFile, kHttpPluginSymbol, "HTTP client"));
  return reinterpret_cast<HttpPluginEntry>(entry)();
}

}  // namespace

StatusOr<HttpReply> HttpExchange(const HttpRequest& request) {
  VIGIL_ASSIGN_OR_RETURN(const HttpPluginApi* api, Plugin());
  StatusOr<HttpReply> reply = InternalError("no reply");
  api->exchange(nullptr, request, &reply);
  return reply;
}

HttpSession::~HttpSession() {
  if (client_ == nullptr) return;
  // A client exists only where the plugin loaded.
  if (StatusOr<const HttpPluginApi*> api = Plugin(); api.ok()) (*api)->close(client_);
}

StatusOr<HttpReply> HttpSession::Exchange(const HttpRequest& request) {
  VIGIL_ASSIGN_OR_RETURN(const HttpPluginApi* api, Plugin());
  StatusOr<HttpReply> reply = InternalError("no reply");
  api->exchange(&client_, request, &reply);
  return reply;
}

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const unsigned char c : text) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string WithQuery(std::string path, const HttpParams& params) {
  char sep = path.find('?') == std::string::npos ? '?' : '&';
  for (const auto& [key, value] : params) {
    path += sep;
    path += PercentEncode(key);
    path += '=';
    path += PercentEncode(value);
    sep = '&';
  }
  return path;
}

}  // namespace vigil
