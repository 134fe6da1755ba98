// SPDX-License-Identifier: Apache-2.0
// The HTTP server layer of vigild and vigil-fleet: cpp-httplib's request parsing, routing and
// replies, behind our own accept loop and connection handling, because httplib 0.11 alone can be
// taken down by any client that reaches the port (docs/protocols.md "HTTP servers"):
//  - its thread pool is fixed (4 or 8 threads) and a read timeout restarts on every byte, so a
//    few connections dribbling bytes hold every thread;
//  - its payload limit covers Content-Length only: chunked bodies are unlimited, a request line
//    or header grows without bound until a newline, and Content-Encoding gzip/br bodies are
//    inflated into memory, unlimited, before any handler (or token check) runs.
// Here each connection has its own thread, one request, one deadline for its whole head and body,
// a cap on the bytes read, and a reply deadline; connections are capped in total and per client
// (per uid for loopback clients, else per address). Before a byte of the body is read, the head
// must pass the server's HeadCheck (authentication, method, encoding) and the generic rules (no
// Transfer-Encoding, a Content-Length within the cap). Owner: httpd. Start/Shutdown from one
// thread; handlers run on connection threads.
#pragma once

#include <sys/socket.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <httplib.h>

#include "base/status.h"

namespace vigil {

struct HttpLimits {
  size_t max_head_bytes = 32 << 10;       // Request line and headers.
  size_t max_body_bytes = 64 << 10;       // As sent (before any inflate the handler does).
  int64_t request_deadline_ms = 10'000;   // Whole head and body, from accept (TLS included).
  int64_t reply_deadline_ms = 60'000;     // Whole reply, from its first byte.
  size_t max_connections = 64;            // More wait in the kernel's backlog.
  size_t max_connections_per_client = 8;  // More are answered 503 at once.
  // PEM files: both set = TLS only.
  std::string tls_cert_file = {};
  std::string tls_key_file = {};
};

// Judges a request from its head alone; false after filling `res` with the refusal. It may edit
// the request's headers (e.g. drop a Content-Encoding the handler inflates itself).
using HeadCheck = std::function<bool(httplib::Request& req, httplib::Response& res)>;

class GuardedServer : public httplib::Server {
 public:
  GuardedServer(HttpLimits limits, HeadCheck check);
  ~GuardedServer() override;
  GuardedServer(const GuardedServer&) = delete;
  GuardedServer& operator=(const GuardedServer&) = delete;

  // Binds host:port (0 = any free port; SO_REUSEADDR only, backlog 1024) and starts accepting.
  // Returns the bound port; Unavailable when the address cannot be bound, InvalidArgument for a
  // bad TLS certificate or key. Routes must be registered before.
  StatusOr<int> Start(const std::string& host, int port);
  // Stops accepting, cuts open connections short and waits for their threads.
  void Stop();

  size_t open_connections() const;

 private:
  struct Connection {
    int fd = -1;
    std::string client;
    std::thread thread;
    bool done = false;
  };

  Status SetUpTls();
  void AcceptLoop();
  void Serve(Connection* conn);
  std::string ClientKey(int fd, std::string* address) const;
  void ReapLocked();

  const HttpLimits limits_;
  const HeadCheck check_;
  SSL_CTX* tls_ = nullptr;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  std::thread accept_thread_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  bool stopping_ = false;
  std::list<Connection> connections_;
  std::map<std::string, size_t> per_client_;
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
