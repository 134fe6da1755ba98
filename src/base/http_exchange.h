// SPDX-License-Identifier: Apache-2.0
// Vigil's one way to make an HTTP(S) call, for the CLI and the daemon's sinks alike. The client
// (cpp-httplib, which links OpenSSL) lives in a plugin loaded on the first call (plugin.h), so a
// program that never speaks HTTP out, `vigil analyze` or a vigild without sinks, does not map
// OpenSSL: ~4 MiB of resident memory and a few milliseconds at every start. Owner: base.
// HttpExchange is stateless and thread-safe; an HttpSession is used by one thread at a time.
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
  // http[s]://HOST[:PORT]; https trusts `ca_file` when set, else the system CAs or SSL_CERT_FILE.
  std::string base_url;
  const char* method = "GET";  // GET, or POST of `form` when it is non-empty, else of `body`.
  std::string path = "/";      // With its query string (WithQuery).
  HttpParams headers = {};
  std::string body = "";
  std::string content_type = "application/json";
  HttpParams form = {};    // application/x-www-form-urlencoded.
  bool gzip = false;       // Let the client gzip the body (a body gzipped already says so itself).
  int64_t timeout_ns = 0;  // Each read and write.
  int64_t connect_timeout_ns = 0;  // 0: timeout_ns.
  std::string ca_file = "";        // PEM CA bundle for https.
};

struct HttpReply {
  int status = 0;
  std::string body;
};

// Any reply the server gave (any status), or: InvalidArgument for a URL the client cannot use,
// Unavailable when the server cannot be reached, FailedPrecondition when the plugin is missing.
// One connection per call.
StatusOr<HttpReply> HttpExchange(const HttpRequest& request);

// A connection kept open between exchanges with one server (keep-alive), as a sink that posts
// every few seconds wants. Made on the first Exchange; a request to another base_url replaces it.
class HttpSession {
 public:
  HttpSession() = default;
  ~HttpSession();
  HttpSession(const HttpSession&) = delete;
  HttpSession& operator=(const HttpSession&) = delete;

  // As HttpExchange.
  StatusOr<HttpReply> Exchange(const HttpRequest& request);

 private:
  void* client_ = nullptr;  // The plugin's; closed through it.
};

// Percent-encodes all but RFC 3986's unreserved characters: one path segment or query value.
std::string PercentEncode(std::string_view text);

// `path` with `params` appended as its query string.
std::string WithQuery(std::string path, const HttpParams& params);

// The plugin's entry point returns this table. Both sides are built together, so C++ types may
// cross. `exchange` with a null `session` uses a connection for one call; with one, it keeps the
// client it makes in *session until `close`.
struct HttpPluginApi {
  void (*exchange)(void** session, const HttpRequest& request, StatusOr<HttpReply>* reply);
  void (*close)(void* session);
};
inline constexpr char kHttpPluginFile[] = "http_client.so";
inline constexpr char kHttpPluginSymbol[] = "vigil_http_client_v2";
using HttpPluginEntry = const HttpPluginApi* (*)();

}  // namespace vigil
