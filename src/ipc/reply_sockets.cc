// SPDX-License-Identifier: Apache-2.0
#include "ipc/reply_sockets.h"

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace vigil {
namespace {

// Bytes this socket sent that their receivers have not read yet (-1 when unknown).
int Unread(int fd) {
  int queued = 0;
  return ioctl(fd, SIOCOUTQ, &queued) == 0 ? queued : -1;
}

}  // namespace

ReplySockets::ReplySockets(ReplySocketsOptions options) : options_(options) {}

size_t ReplySockets::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return slots_.size();
}

std::string ReplySockets::IdleSlot(std::optional<int> uid) const {
  const std::string* best = nullptr;
  uint64_t best_used = 0;
  for (const auto& [key, slot] : slots_) {
    if ((uid && slot.uid != *uid) || (best != nullptr && slot.last_used >= best_used)) {
      continue;
    }
    if (Unread(slot.fd.get()) == 0) {
      best = &key;
      best_used = slot.last_used;
    }
  }
  return best == nullptr ? std::string() : *best;
}

ReplySockets::Slot* ReplySockets::SlotFor(int uid, const std::string& key, Status* error) {
  if (auto it = slots_.find(key); it != slots_.end()) {
    return &it->second;
  }
  auto count = per_uid_.find(uid);
  const size_t used = count == per_uid_.end() ? 0 : count->second;
  std::string reuse;
  if (used >= options_.max_per_uid) {
    reuse = IdleSlot(uid);
  } else if (slots_.size() >= options_.max_total) {
    reuse = IdleSlot(std::nullopt);
  }
  Slot slot;
  if (!reuse.empty()) {
    auto node = slots_.extract(reuse);
    if (--per_uid_[node.mapped().uid] == 0) {
      per_uid_.erase(node.mapped().uid);
    }
    slot.fd = std::move(node.mapped().fd);
  } else if (used >= options_.max_per_uid || slots_.size() >= options_.max_total) {
    *error = ResourceExhaustedError(
        fmt::format("no reply socket free for uid {}: every one holds unread replies", uid));
    return nullptr;
  } else {
    slot.fd.Reset(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!slot.fd.valid()) {
      *error = ErrnoStatus(errno, "socket(AF_UNIX, SOCK_DGRAM) for replies");
      return nullptr;
    }
    // The kernel may cap it at net.core.wmem_max; a reply it cannot hold fails and is counted.
    (void)setsockopt(slot.fd.get(), SOL_SOCKET, SO_SNDBUF, &options_.send_buffer_bytes,
                     sizeof(options_.send_buffer_bytes));
    // Replies only: a peer that sends to this socket's (autobound) name gets EPIPE.
    (void)shutdown(slot.fd.get(), SHUT_RD);
  }
  slot.uid = uid;
  ++per_uid_[uid];
  return &slots_.emplace(key, std::move(slot)).first->second;
}

ReplyOutcome ReplySockets::Send(int uid, const IpcAddress& to, std::string_view bytes,
                                Status* error) {
  const std::string key(reinterpret_cast<const char*>(&to.addr), to.len);
  std::lock_guard<std::mutex> lock(mu_);
  Slot* slot = SlotFor(uid, key, error);
  if (slot == nullptr) {
    return ReplyOutcome::kOverBudget;
  }
  slot->last_used = ++clock_;
  const ssize_t n = sendto(slot->fd.get(), bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                           reinterpret_cast<const sockaddr*>(&to.addr), to.len);
  if (n == static_cast<ssize_t>(bytes.size())) {
    return ReplyOutcome::kSent;
  }
  const int err = n < 0 ? errno : EMSGSIZE;
  *error = ErrnoStatus(err, "reply to " + to.DisplayName());
  // EAGAIN: the peer's receive queue or this destination's own send buffer is full; either way
  // only this peer's unread replies are in the way.
  return err == EAGAIN || err == EWOULDBLOCK ? ReplyOutcome::kUnread : ReplyOutcome::kFailed;
}

}  // namespace vigil
