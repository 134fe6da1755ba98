// SPDX-License-Identifier: Apache-2.0
// The connection half of our HTTP servers, apart from any HTTP parsing so that vigild's small
// GET server (get_server.h) needs neither cpp-httplib nor OpenSSL, and vigil-fleet's
// (guarded_server.h) shares the same guards: its own bind (SO_REUSEADDR only, never
// SO_REUSEPORT, backlog 1024), one request per connection, each connection on a thread of its
// own while it lasts (a worker that finished one waits up to kWorkerIdle for the next, so a
// scrape once a second does not start and join a thread each time), connections
// capped in total (more wait in the kernel's backlog) and per client (more are answered 503 at
// once; loopback clients are told apart by uid since every local user connects from 127.0.0.1,
// others by address), and a bounded linger after a refusal so the client can read it.
// docs/protocols.md "HTTP servers" says why each guard exists. Owner: httpd. Start/Stop from one
// thread; the handler runs on connection threads.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "base/status.h"

namespace vigil {

struct HttpLimits {
  size_t max_head_bytes = 32 << 10;       // Request line and headers.
  size_t max_body_bytes = 64 << 10;       // As sent (before any inflate the handler does).
  int64_t request_deadline_ms = 10'000;   // Whole head and body, from accept (TLS included).
  int64_t reply_deadline_ms = 60'000;     // Whole reply, from its first byte.
  size_t max_connections = 64;            // More wait in the kernel's backlog.
  size_t max_connections_per_client = 8;  // More are answered 503 at once.
  // PEM files: both set = TLS only (the httplib server only; the GET server has no TLS).
  std::string tls_cert_file = {};
  std::string tls_key_file = {};
};

// One accepted connection, as its handler sees it.
struct ServedConnection {
  int fd = -1;              // Non-blocking, TCP_NODELAY; closed by the listener after the handler.
  std::string client;       // "uid N" for a loopback caller, else its address; for logs.
  int64_t accepted_ns = 0;  // MonotonicNanos() at accept: request deadlines start here.
};

// Serves one connection. True when the request was refused from its head: the listener then
// lingers so that a client still sending its body reads the refusal instead of a reset.
using ConnectionHandler = std::function<bool(const ServedConnection& conn)>;

// {"error": message}, as both servers answer errors.
std::string JsonErrorBody(std::string_view message);

class GuardedListener {
 public:
  static constexpr int64_t kWorkerIdleMs = 30'000;  // Then an idle worker thread ends.

  GuardedListener(HttpLimits limits, ConnectionHandler handler);
  ~GuardedListener();
  GuardedListener(const GuardedListener&) = delete;
  GuardedListener& operator=(const GuardedListener&) = delete;

  // Binds host:port (0 = any free port) and starts accepting. Returns the bound port;
  // Unavailable when the address cannot be bound.
  StatusOr<int> Start(const std::string& host, int port);
  // Stops accepting, cuts open connections short and waits for their threads.
  void Stop();

  size_t open_connections() const;
  const HttpLimits& limits() const { return limits_; }

 private:
  struct Connection {
    ServedConnection served;
    bool started = false;  // A worker took it.
  };
  struct Worker {
    std::thread thread;
    bool exited = false;
  };

  void AcceptLoop();
  // Hands `conn` to an idle worker, or starts one when none is free.
  void DispatchLocked(Connection* conn);
  void WorkerLoop(Worker* self);
  void Serve(Connection* conn);
  void ReapLocked();

  const HttpLimits limits_;
  const ConnectionHandler handler_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  std::thread accept_thread_;
  mutable std::mutex mu_;
  std::condition_variable changed_;  // A connection ended or a worker exited.
  std::condition_variable work_;     // A connection is waiting for a worker.
  bool stopping_ = false;
  std::list<Connection> connections_;  // Accepted and not yet closed.
  std::list<Connection*> pending_;     // Accepted, no worker yet.
  std::list<Worker> workers_;
  size_t idle_workers_ = 0;  // Free to take a pending connection.
  std::map<std::string, size_t> per_client_;
};

}  // namespace vigil
