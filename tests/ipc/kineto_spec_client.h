// SPDX-License-Identifier: Apache-2.0
// A Kineto IPC client written for the tests from the byte-level description of the fabric
// (docs/protocols.md, "Kineto IPC fabric"), deliberately sharing no code with src/ipc: raw
// sockets, hand-built Metadata {size_t size; char type[32]} headers, two-iovec sends like
// Kineto's FabricManager, and the peek-the-header-then-read receive it uses. Test-only.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vigil::testing_util {

class KinetoSpecClient {
 public:
  // Binds "\0<name>\0" (abstract) or <socket_dir>/<name>; sends to daemon_name likewise.
  KinetoSpecClient(const std::string& name, const std::string& daemon_name,
                   const std::string& socket_dir = "");
  ~KinetoSpecClient();
  bool ok() const { return fd_ >= 0; }

  // Kineto's registerInstance(): "ctxt" {gpu, pid, jobid}; returns the int32 reply.
  std::optional<int32_t> RegisterContext(int32_t gpu, int32_t pid, int64_t job_id);
  // Kineto's getLibkinetoOndemandConfig(): "req" {type, n, jobid, pids[n]}; returns the config.
  std::optional<std::string> Poll(int32_t type, int64_t job_id, const std::vector<int32_t>& pids);
  // The same poll, waiting for the reply as Kineto itself does: `tries` non-blocking receives
  // `sleep_us` apart (current Kineto: 9 x 10 ms, about 90 ms; older releases 5 x 10 ms). nullopt
  // when no reply came within that window.
  std::optional<std::string> PollAsKineto(int32_t type, int64_t job_id,
                                          const std::vector<int32_t>& pids, int tries = 9,
                                          int sleep_us = 10000);
  // Sends a "req" without waiting for (or ever reading) the reply; blocks while the daemon's
  // queue is full, as a flooding client would.
  bool SendPoll(int32_t type, int64_t job_id, const std::vector<int32_t>& pids);
  // Sends arbitrary bytes to the daemon (malformed-datagram tests).
  bool SendRaw(const std::string& bytes);
  // One reply: header type and payload, or nullopt after timeout_ms.
  std::optional<std::pair<std::string, std::string>> Receive(int timeout_ms);
  bool Send(const std::string& type, const std::string& payload, int flags = MSG_DONTWAIT);

 private:
  int fd_ = -1;
  sockaddr_un daemon_{};
  socklen_t daemon_len_ = 0;
  std::string unlink_path_;
};

// This process and its ancestors, leaf first (what Kineto's pidCommandPairsOfAncestors gives).
std::vector<int32_t> OwnAncestorPids();

}  // namespace vigil::testing_util
