// SPDX-License-Identifier: Apache-2.0
// Internals of the RPC server, shared by rpc_server.cc (listening, accepting and identifying
// peers, the event loop, deadlines) and rpc_server_io.cc (reading, framing, dispatching, worker
// replies and writing on each connection). Not part of the module's interface. Everything here
// belongs to the loop thread unless a member says otherwise.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "rpc/admission.h"
#include "rpc/dispatcher.h"
#include "rpc/framing.h"
#include "rpc/rpc_server.h"
#include "rpc/rpc_workers.h"

namespace vigil {
namespace rpc_internal {

struct Connection {
  ScopedFd fd;
  uint64_t id = 0;  // Unique for the server's life (fds are reused).
  CallerInfo caller;
  ConnectionPool pool = ConnectionPool::kTcp;
  std::string peer_key;        // "uid:N", or "addr:IP" when the uid is unknown.
  size_t charged = 0;          // Bytes counted against the budget.
  bool identifying = false;    // Its uid is being looked up: not read, not yet admitted.
  bool admitted = false;       // Holds a slot of `pool` for `peer_key`.
  bool heavy_running = false;  // A worker is answering its request.
  FrameDecoder decoder;
  std::string out;
  size_t out_sent = 0;
  int64_t deadline_ns = 0;  // Monotonic; the connection is closed when it passes.
  bool close_after_write = false;
  bool draining = false;  // Reply sent and write side shut: discarding input until EOF.
  uint32_t events = 0;    // What epoll currently watches.

  explicit Connection(size_t max_frame) : decoder(max_frame) {}
  bool writing() const { return out_sent < out.size(); }
  size_t footprint() const { return decoder.footprint() + out.capacity(); }
};

struct Completion {
  int fd = -1;
  uint64_t id = 0;
  std::string reply;
};

// A loopback TCP connection whose uid is being looked up, and the answer.
struct PendingIdentity {
  int fd = -1;
  uint64_t id = 0;
  sockaddr_storage local{};
  sockaddr_storage peer{};
};
struct Identified {
  int fd = -1;
  uint64_t id = 0;
  int uid = -1;
  std::string error;
};

// Fills what SO_PEERCRED says about a unix peer.
void IdentifyUnixPeer(int fd, CallerInfo* caller);
// A TCP peer's address and whether it is on loopback (its uid comes later).
void DescribeTcpPeer(const sockaddr* addr, CallerInfo* caller);
// What a peer's budget share is keyed by: "uid:N", or "addr:IP" when the uid is unknown.
std::string PeerKey(const CallerInfo& caller);

// Serialises a reply (invalid UTF-8 replaced); an {"error": message} reply.
std::string ReplyText(const nlohmann::json& reply);
std::string ErrorText(const std::string& message);

}  // namespace rpc_internal

struct RpcServer::Impl {
  RpcServerOptions options;
  const RpcDispatcher* dispatcher;
  ScopedFd tcp_fd, unix_fd, epoll_fd, wake_fd;
  bool unix_bound = false;
  int64_t accept_paused_until_ns = 0;  // Out of fds: listeners unwatched until then (0 = watched).
  std::atomic<int> port{0};
  std::thread thread;
  std::atomic<bool> stopping{false};
  std::unordered_map<int, std::unique_ptr<rpc_internal::Connection>> conns;  // Loop thread only.
  AdmissionBudget budget;                                                    // Loop thread only.
  std::set<int> read_paused;  // Connections not read until the byte budget has room.
  uint64_t next_id = 1;
  ScopedFd done_fd;  // Workers signal finished heavy calls here.
  std::mutex done_mu;
  std::vector<rpc_internal::Completion> done;  // Guarded by done_mu.
  std::unique_ptr<RpcWorkers> workers;
  std::unique_ptr<RpcWorkers> identifier;            // Looks up TCP peers' uids.
  std::vector<rpc_internal::Identified> identified;  // Guarded by done_mu.
  size_t identifying = 0;                            // Connections waiting for their uid.

  std::atomic<uint64_t> n_connections{0}, n_open{0}, n_requests{0}, n_bad_frame{0}, n_too_large{0},
      n_timeout{0}, n_refused{0}, n_busy{0}, n_buffered{0}, n_read_paused{0};

  Impl(RpcServerOptions o, const RpcDispatcher* d)
      : options(std::move(o)), dispatcher(d), budget(options.admission) {}

  void Recharge(rpc_internal::Connection* c);
  Status Watch(int fd, uint32_t events, int op);
  void SetEvents(rpc_internal::Connection* c, uint32_t events);
  void Close(int fd);
  static void Refuse(int fd, const std::string& why);
  void Accept(int listen_fd, bool is_unix);
  void StartIdentifying(std::vector<rpc_internal::PendingIdentity> batch);
  void FinishIdentifying(const rpc_internal::Identified& result);
  // Parses a request and takes its token; the reply text instead when it is malformed.
  std::optional<std::string> Decode(const std::string& payload, nlohmann::json* request,
                                    CallerInfo* caller);
  // Answers on the loop, or hands a heavy request to a worker (the reply comes back through
  // done_fd). Returns the reply text, or nullopt when a worker took it.
  std::optional<std::string> Handle(rpc_internal::Connection* c, const std::string& payload);
  // Takes the replies workers finished and sends them.
  void OnCompletions();
  void Queue(rpc_internal::Connection* c, const std::string& reply_text);
  // Sends what is queued. Returns false when the connection was closed.
  bool Flush(rpc_internal::Connection* c);
  // Answers every complete frame while nothing is waiting to be written.
  bool ProcessFrames(rpc_internal::Connection* c);
  void OnReadable(rpc_internal::Connection* c);
  void OnEvent(int fd, uint32_t events);
  // Reads again from connections the byte budget held back, once it has room for them.
  void ResumePaused();
  void PauseAccepting();
  void MaybeResumeAccepting();
  int NextTimeoutMs() const;
  void ExpireDeadlines();
  void Loop();
};

}  // namespace vigil
