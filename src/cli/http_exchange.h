// SPDX-License-Identifier: Apache-2.0
// The CLI's one way to make an HTTP(S) call. The client (cpp-httplib, which links OpenSSL) lives
// in a plugin loaded on the first call, so commands that never speak HTTP, `vigil analyze` above
// all, do not map OpenSSL: that is ~4 MB of resident memory and a few milliseconds at every start.
// Owner: cli. Stateless; the plugin stays loaded once loaded.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace vigil {

using HttpParams = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string base_url;  // http[s]://HOST[:PORT]; https trusts the system CAs or SSL_CERT_FILE.
  const char* method = "GET";  // GET, or POST of `form` when it is non-empty, else of `body`.
  std::string path = "/";      // With its query string (WithQuery).
  HttpParams headers = {};
  std::string body = "";
  std::string content_type = "application/json";
  HttpParams form = {};  // application/x-www-form-urlencoded.
  bool gzip = false;     // Send the body with Content-Encoding: gzip.
  int64_t timeout_ns = 0;
};

struct HttpReply {
  int status = 0;
  std::string body;
};

// Any reply the server gave (any status), or: InvalidArgument for a URL the client cannot use,
// Unavailable when the server cannot be reached, FailedPrecondition when the plugin is missing.
StatusOr<HttpReply> HttpExchange(const HttpRequest& request);

// Percent-encodes all but RFC 3986's unreserved characters: one path segment or query value.
std::string PercentEncode(std::string_view text);

// `path` with `params` appended as its query string.
std::string WithQuery(std::string path, const HttpParams& params);

// The plugin's one entry point. Both sides are built together, so C++ types may cross.
inline constexpr char kHttpPluginFile[] = "vigil/http_client.so";
inline constexpr char kHttpPluginSymbol[] = "vigil_http_exchange_v1";
using HttpPluginEntry = void (*)(const HttpRequest& request, StatusOr<HttpReply>* reply);

}  // namespace vigil
