// SPDX-License-Identifier: Apache-2.0
// Where the IPC fabric's replies leave from. A unix datagram that its receiver has not read yet
// stays charged to the send buffer of the socket that sent it, so if every reply left the
// daemon's one bound socket, a few hundred peers that never read would fill that buffer and
// every other peer's reply would fail with EAGAIN (reply starvation). Instead each destination
// gets its own unbound, non-blocking sending socket with a send buffer of its own: a peer that
// does not read fills only that buffer, its further replies are dropped and counted (a send
// never blocks), and every other peer's replies still go out. Sockets are capped per sender uid
// and in total; when a cap is reached, a socket whose replies have all been read (SIOCOUTQ 0,
// nothing of it is pinned in a peer's queue) is taken over for the new destination, and when
// there is none the reply is dropped as over budget. Owner: ipc. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/file_util.h"
#include "base/status.h"
#include "ipc/endpoint.h"

namespace vigil {

struct ReplySocketsOptions {
  // Destinations with a socket at once, per sender uid and in all. A host's training processes
  // number in the tens; the caps bound the kernel memory non-reading peers can pin to
  // max_total * send_buffer_bytes (the kernel doubles the value).
  size_t max_per_uid = 64;
  size_t max_total = 256;
  // Large enough for one reply of the biggest datagram the fabric sends (40 + 64 KiB).
  int send_buffer_bytes = 80 << 10;
};

enum class ReplyOutcome {
  kSent,
  kUnread,      // The peer's own backlog is full: it does not read. Dropped.
  kOverBudget,  // No socket free for this destination within the uid's or the total cap.
  kFailed,      // Peer gone, or another send error.
};

class ReplySockets {
 public:
  explicit ReplySockets(ReplySocketsOptions options = {});

  // Sends `bytes` to `to` from the destination's own socket, never blocking.
  ReplyOutcome Send(int uid, const IpcAddress& to, std::string_view bytes, Status* error);
  size_t size() const;

 private:
  struct Slot {
    ScopedFd fd;
    int uid = -1;
    uint64_t last_used = 0;
  };
  // The destination's slot: its own, a fresh one, or an idle one taken over; null when the caps
  // leave none. Called with mu_ held.
  Slot* SlotFor(int uid, const std::string& key, Status* error);
  // An idle slot (nothing unread) to take over: the least recently used of `uid`'s, or of all
  // without a uid. Returns its key, or "" when none is idle.
  std::string IdleSlot(std::optional<int> uid) const;

  ReplySocketsOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, Slot> slots_;  // By destination address bytes.
  std::map<int, size_t> per_uid_;
  uint64_t clock_ = 0;
};

}  // namespace vigil
