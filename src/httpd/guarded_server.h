// SPDX-License-Identifier: Apache-2.0
// vigil-fleet's HTTP server: cpp-httplib's request parsing, routing and replies (and TLS through
// OpenSSL) on top of our own listener (guarded_listener.h), because httplib 0.11 alone can be
// taken down by any client that reaches the port (docs/protocols.md "HTTP servers"):
//  - its thread pool is fixed (4 or 8 threads) and a read timeout restarts on every byte, so a
//    few connections dribbling bytes hold every thread;
//  - its payload limit covers Content-Length only: chunked bodies are unlimited, a request line
//    or header grows without bound until a newline, and Content-Encoding gzip/br bodies are
//    inflated into memory, unlimited, before any handler (or token check) runs.
// Here each connection has one request, one deadline for its whole head and body, a cap on the
// bytes read, and a reply deadline. Before a byte of the body is read, the head must pass the
// server's HeadCheck (authentication, method, encoding) and the generic rules (no
// Transfer-Encoding, a Content-Length within the cap). Owner: httpd. Start/Shutdown from one
// thread; handlers run on connection threads.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include <httplib.h>

#include "base/status.h"
#include "httpd/guarded_listener.h"

namespace vigil {

// Judges a request from its head alone; false after filling `res` with the refusal. It may edit
// the request's headers (e.g. drop a Content-Encoding the handler inflates itself).
using HeadCheck = std::function<bool(httplib::Request& req, httplib::Response& res)>;

class GuardedServer : public httplib::Server {
 public:
  GuardedServer(HttpLimits limits, HeadCheck check);
  ~GuardedServer() override;
  GuardedServer(const GuardedServer&) = delete;
  GuardedServer& operator=(const GuardedServer&) = delete;

  // Binds host:port (0 = any free port) and starts accepting. Returns the bound port;
  // Unavailable when the address cannot be bound, InvalidArgument for a bad TLS certificate or
  // key. Routes must be registered before.
  StatusOr<int> Start(const std::string& host, int port);
  // Stops accepting, cuts open connections short and waits for their threads.
  void Stop();

  size_t open_connections() const { return listener_.open_connections(); }

 private:
  Status SetUpTls();
  bool Serve(const ServedConnection& conn);

  const HeadCheck check_;
  SSL_CTX* tls_ = nullptr;
  GuardedListener listener_;
};

// A JSON {"error": message} reply, as both servers answer errors.
void SetJsonError(httplib::Response& res, int code, const std::string& message);

// What a route accepts as a request body; a HeadCheck applies it with CheckBody.
enum class BodyRule {
  kNone,      // No body at all (Content-Length 0 or absent), no Content-Encoding.
  kIdentity,  // A body, but no Content-Encoding.
  kGzip,      // A body, optionally "Content-Encoding: gzip", which is removed from the request so
              // httplib passes the bytes as sent: the handler inflates them with Gunzip's cap.
};
bool CheckBody(httplib::Request& req, httplib::Response& res, BodyRule rule);

}  // namespace vigil
