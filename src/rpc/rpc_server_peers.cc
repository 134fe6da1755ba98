// SPDX-License-Identifier: Apache-2.0
// Who is calling: a unix peer's SO_PEERCRED, a TCP peer's address, and the uid of a loopback TCP
// peer, looked up in the socket tables on the identifier thread (a read of the tables walks
// every socket of the host, so it stays off the event loop and serves a batch at once) before
// the connection is admitted against its uid's share.
#include <sys/epoll.h>
#include <sys/socket.h>

#include <utility>

#include <fmt/format.h>

#include "base/logging.h"
#include "rpc/net_util.h"
#include "rpc/peer_uid.h"
#include "rpc/rpc_server_impl.h"

namespace vigil {
namespace rpc_internal {

// Fills what SO_PEERCRED says about a unix peer.
void IdentifyUnixPeer(int fd, CallerInfo* caller) {
  caller->transport = CallerInfo::Transport::kUnix;
  caller->loopback = true;
  ucred cred{};
  socklen_t cred_len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) == 0) {
    caller->pid = cred.pid;
    caller->uid = static_cast<int>(cred.uid);
    caller->gid = static_cast<int>(cred.gid);
  }
  caller->peer = fmt::format("unix:pid={},uid={}", caller->pid, caller->uid);
}

// A TCP peer's address; its uid is looked up off the loop (Impl::StartIdentifying).
void DescribeTcpPeer(const sockaddr* addr, CallerInfo* caller) {
  caller->transport = CallerInfo::Transport::kTcp;
  caller->loopback = IsLoopbackAddress(addr);
  caller->peer = FormatSocketAddress(addr);
}

std::string PeerKey(const CallerInfo& caller) {
  if (caller.uid >= 0) {
    return fmt::format("uid:{}", caller.uid);
  }
  const size_t colon = caller.peer.rfind(':');
  return "addr:" + caller.peer.substr(0, colon);
}

}  // namespace rpc_internal

using rpc_internal::Connection;
using rpc_internal::Identified;
using rpc_internal::PeerKey;
using rpc_internal::PendingIdentity;

// Looks up the uids of a batch of loopback TCP connections on the identifier thread, with one
// read of the socket tables for the whole batch (the read walks every socket of the host).
void RpcServer::Impl::StartIdentifying(std::vector<PendingIdentity> batch) {
  if (batch.empty()) {
    return;
  }
  auto job = [this, batch] {
    SocketTables tables(options.proc_root);
    std::vector<Identified> found;
    for (const PendingIdentity& p : batch) {
      StatusOr<int> uid = tables.PeerUid(reinterpret_cast<const sockaddr*>(&p.local),
                                         reinterpret_cast<const sockaddr*>(&p.peer));
      found.push_back({p.fd, p.id, uid.ok() ? *uid : -1, uid.ok() ? "" : uid.status().message()});
    }
    {
      std::lock_guard<std::mutex> lock(done_mu);
      identified.insert(identified.end(), found.begin(), found.end());
    }
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(done_fd.get(), &one, sizeof(one));
  };
  if (!identifier->Submit("identify", std::move(job))) {
    for (const PendingIdentity& p : batch) {  // Overloaded: these stay without a uid.
      FinishIdentifying(Identified{p.fd, p.id, -1, "identifier queue full"});
    }
  }
}

void RpcServer::Impl::FinishIdentifying(const Identified& result) {
  auto it = conns.find(result.fd);
  if (it == conns.end() || it->second->id != result.id || !it->second->identifying) {
    return;  // Gone meanwhile.
  }
  Connection* c = it->second.get();
  c->identifying = false;
  --identifying;
  if (result.uid >= 0) {
    c->caller.uid = result.uid;
    c->caller.peer += fmt::format(",uid={}", result.uid);
  } else {
    VIGIL_LOG_EVERY_N_SEC(DEBUG, 60, "rpc: no uid for {}: {}", c->caller.peer, result.error);
  }
  c->peer_key = PeerKey(c->caller);
  if (Status admitted = budget.Admit(c->pool, c->peer_key); !admitted.ok()) {
    n_refused.fetch_add(1);
    VIGIL_LOG_EVERY_N_SEC(WARN, 60, "rpc: refused {}: {}", c->caller.peer, admitted.message());
    Refuse(result.fd, admitted.message());
    Close(result.fd);
    return;
  }
  c->admitted = true;
  SetEvents(c, EPOLLIN | EPOLLRDHUP);
}

}  // namespace vigil
