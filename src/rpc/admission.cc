// SPDX-License-Identifier: Apache-2.0
#include "rpc/admission.h"

#include <algorithm>

#include <fmt/format.h>

namespace vigil {
namespace {

const char* PoolName(ConnectionPool pool) {
  switch (pool) {
    case ConnectionPool::kTcp:
      return "tcp";
    case ConnectionPool::kUnix:
      return "unix socket";
    case ConnectionPool::kPrivilegedUnix:
      return "unix socket (root)";
  }
  return "?";
}

}  // namespace

size_t AdmissionBudget::Limit(ConnectionPool pool) const {
  switch (pool) {
    case ConnectionPool::kTcp:
      return limits_.max_tcp_connections;
    case ConnectionPool::kUnix:
      return limits_.max_unix_connections;
    case ConnectionPool::kPrivilegedUnix:
      return limits_.max_privileged_unix_connections;
  }
  return 0;
}

Status AdmissionBudget::Admit(ConnectionPool pool, const std::string& peer) {
  const size_t index = static_cast<size_t>(pool);
  if (open_[index] >= Limit(pool)) {
    return ResourceExhaustedError(fmt::format("server busy: {} connections on the {} (the limit)",
                                              open_[index], PoolName(pool)));
  }
  if (pool == ConnectionPool::kPrivilegedUnix) {
    ++open_[index];  // Only root's and the daemon's user's: the pool's cap is their share.
    return OkStatus();
  }
  auto it = peers_.find(peer);
  const size_t held = it == peers_.end() ? 0 : it->second.connections;
  if (held >= limits_.max_connections_per_peer) {
    return ResourceExhaustedError(fmt::format(
        "server busy: {} already holds {} connections (the limit per peer)", peer, held));
  }
  ++peers_[peer].connections;
  ++open_[index];
  return OkStatus();
}

void AdmissionBudget::Leave(ConnectionPool pool, const std::string& peer) {
  const size_t index = static_cast<size_t>(pool);
  if (open_[index] > 0) {
    --open_[index];
  }
  if (pool == ConnectionPool::kPrivilegedUnix) {
    return;
  }
  auto it = peers_.find(peer);
  if (it == peers_.end()) {
    return;
  }
  if (it->second.connections > 0) {
    --it->second.connections;
  }
  if (it->second.connections == 0 && it->second.bytes == 0) {
    peers_.erase(it);
  }
}

void AdmissionBudget::Recharge(const std::string& peer, size_t before, size_t after) {
  if (before == after) {
    return;
  }
  Peer& p = peers_[peer];
  p.bytes = p.bytes - std::min(p.bytes, before) + after;
  buffered_ = buffered_ - std::min(buffered_, before) + after;
  if (p.connections == 0 && p.bytes == 0) {
    peers_.erase(peer);
  }
}

bool AdmissionBudget::MayBuffer(const std::string& peer, size_t held) const {
  if (held < limits_.free_buffer_bytes) {
    return true;
  }
  if (buffered_ >= limits_.max_buffered_bytes) {
    return false;
  }
  auto it = peers_.find(peer);
  return it == peers_.end() || it->second.bytes < limits_.max_buffered_bytes_per_peer;
}

}  // namespace vigil
