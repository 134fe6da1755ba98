// SPDX-License-Identifier: Apache-2.0
// The control RPC server: Dynolog-compatible length-prefixed JSON over TCP and a unix socket (see
// rpc/framing.h and docs/protocols.md, "Control RPC"). One event-loop thread (epoll) serves every
// connection; each request is decoded, checked (token, peer credentials: SO_PEERCRED on the unix
// socket, the kernel's socket tables for loopback TCP) and handed to the RpcDispatcher. Cheap
// handlers run on the loop and must not block; kHeavy ones run on worker threads (one at a time
// per connection). Connection slots and buffered bytes are budgeted per transport and per peer
// (rpc/admission.h), and every connection has a read deadline, so no client, slow or greedy,
// holds up others. Start()/Stop() from one owning thread; stats() and tcp_port() from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "rpc/admission.h"
#include "rpc/dispatcher.h"

namespace vigil {

struct RpcServerOptions {
  std::string tcp_listen = "127.0.0.1:1778";  // "" disables TCP; "host:port", port 0 = ephemeral.
  std::string unix_path;                      // "" disables the unix socket.
  std::string token;                          // "" = no token configured.
  size_t max_frame_bytes = 4 << 20;
  size_t max_reply_bytes = 64 << 20;         // Larger replies become an error reply.
  int64_t read_deadline_ns = 5'000'000'000;  // A client must send a whole frame within this.
  AdmissionLimits admission;                 // Connection and buffered-byte budgets.
  size_t worker_threads = 2;                 // For RpcCost::kHeavy methods.
  size_t max_heavy_queued_per_peer = 8;
  int unix_mode = 0660;             // Permissions of the unix socket file.
  std::string proc_root = "/proc";  // Where the socket tables are (net/tcp, net/tcp6).
};

struct RpcServerStats {
  uint64_t connections = 0;       // Accepted since Start().
  uint64_t open_connections = 0;  // Open now.
  uint64_t requests = 0;          // Complete frames received.
  uint64_t bad_frame = 0;         // Length <= 0, invalid JSON, or not a JSON object.
  uint64_t too_large = 0;         // Length above max_frame_bytes.
  uint64_t timeout = 0;           // Closed by the read deadline.
  uint64_t refused = 0;           // Over a connection budget (admission).
  uint64_t busy = 0;              // Heavy calls refused: the peer's worker queue was full.
  uint64_t buffered_bytes = 0;    // Request and reply bytes held now.
  uint64_t read_paused = 0;       // Times a connection was not read for the byte budget.
};

class RpcServer {
 public:
  // `dispatcher` is borrowed, must outlive the server and is not modified after Start().
  RpcServer(RpcServerOptions options, const RpcDispatcher* dispatcher);
  ~RpcServer();  // Stops and joins.
  RpcServer(const RpcServer&) = delete;
  RpcServer& operator=(const RpcServer&) = delete;

  // Binds the configured endpoints and starts the event-loop thread. Refuses (FailedPrecondition)
  // a TCP address beyond loopback when no token is configured.
  Status Start();
  // Closes every connection, joins the thread and removes the unix socket file. Idempotent.
  void Stop();
  int tcp_port() const;  // The bound port (useful with port 0); 0 before Start() or without TCP.
  RpcServerStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigil
