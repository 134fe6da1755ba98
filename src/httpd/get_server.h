// SPDX-License-Identifier: Apache-2.0
// vigild's HTTP server: GET and HEAD only, one request a connection, no request body ever read,
// no TLS. Its own head parser instead of cpp-httplib's, so that the daemon maps neither
// cpp-httplib nor the OpenSSL it links (Debian's build initializes OpenSSL before main: ~4 MiB of
// resident memory in a daemon whose target is 12). Connections, deadlines and per-client limits
// are the listener's (guarded_listener.h); here: the head is read within max_head_bytes (else
// 431) by the request deadline (else 408); a method other than GET/HEAD is 405, a body 413, a
// Content-Encoding 415 and a Transfer-Encoding 411, all before anything of a body is read.
// Replies carry Content-Length and Connection: close, and text or JSON bodies of 1 KiB and more
// are gzipped when the client accepts gzip (as Prometheus does). Owner: httpd. Routes are added
// before Start; handlers run on connection threads.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "httpd/guarded_listener.h"

namespace vigil {

struct GetRequest {
  std::string method;  // "GET" or "HEAD".
  std::string path;    // Percent-decoded, without the query.
  std::string rest;    // For a prefix route: the path after the prefix.
  std::vector<std::pair<std::string, std::string>> params;   // Decoded query ('+' is a space).
  std::vector<std::pair<std::string, std::string>> headers;  // Names lower-cased.

  bool HasParam(std::string_view name) const;
  std::string Param(std::string_view name) const;   // The first value; "" when absent.
  std::string Header(std::string_view name) const;  // Any case; "" when absent.
};

struct GetReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // Sent as given.
};

using GetHandler = std::function<void(const GetRequest& req, GetReply& reply)>;

// Parses "METHOD TARGET HTTP/1.x\r\nName: value\r\n...\r\n\r\n" (the blank line included or
// not); false for a malformed head. Exposed for tests.
bool ParseRequestHead(std::string_view head, GetRequest* req);

// Percent-decoding; `plus_is_space` for query components. Malformed escapes stay as they are.
std::string PercentDecode(std::string_view text, bool plus_is_space);

// True when an Accept-Encoding value accepts gzip (listed, or "*", without q=0).
bool AcceptsGzip(std::string_view accept_encoding);

class GetServer {
 public:
  explicit GetServer(HttpLimits limits);
  ~GetServer();
  GetServer(const GetServer&) = delete;
  GetServer& operator=(const GetServer&) = delete;

  // `path` exactly.
  void Route(std::string path, GetHandler handler);
  // Any path that starts with `prefix` and is longer; the handler finds the remainder in `rest`.
  void RoutePrefix(std::string prefix, GetHandler handler);

  // Binds host:port (0 = any free port) and starts accepting; the bound port, or Unavailable.
  StatusOr<int> Start(const std::string& host, int port);
  void Stop();
  size_t open_connections() const { return listener_.open_connections(); }

 private:
  bool Serve(const ServedConnection& conn);
  void Dispatch(GetRequest& req, GetReply& reply) const;

  std::vector<std::pair<std::string, GetHandler>> exact_;
  std::vector<std::pair<std::string, GetHandler>> prefixes_;
  GuardedListener listener_;
};

// A JSON {"error": message} reply with `status`.
void SetJsonError(GetReply& reply, int status, std::string_view message);

}  // namespace vigil
