// SPDX-License-Identifier: Apache-2.0
// Listening, accepting (with the peer's identity and admission), the event loop and deadlines.
#include "rpc/rpc_server.h"

#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "base/logging.h"
#include "base/time_util.h"
#include "rpc/net_util.h"
#include "rpc/rpc_server_impl.h"

namespace vigil {
namespace {

using rpc_internal::Connection;
using rpc_internal::DescribeTcpPeer;
using rpc_internal::ErrorText;
using rpc_internal::IdentifyUnixPeer;
using rpc_internal::PeerKey;
using rpc_internal::PendingIdentity;

}  // namespace

Status RpcServer::Impl::Watch(int fd, uint32_t events, int op) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_fd.get(), op, fd, &ev) < 0) {
    return ErrnoStatus(errno, "epoll_ctl");
  }
  return OkStatus();
}

void RpcServer::Impl::SetEvents(Connection* c, uint32_t events) {
  if (c->events != events && Watch(c->fd.get(), events, EPOLL_CTL_MOD).ok()) {
    c->events = events;
  }
}

void RpcServer::Impl::Close(int fd) {
  auto it = conns.find(fd);
  if (it == conns.end()) {
    return;
  }
  epoll_ctl(epoll_fd.get(), EPOLL_CTL_DEL, fd, nullptr);
  Connection* c = it->second.get();
  budget.Recharge(c->peer_key, c->charged, 0);
  if (c->admitted) {
    budget.Leave(c->pool, c->peer_key);
  }
  if (c->identifying) {
    --identifying;
  }
  n_buffered.store(budget.buffered_bytes());
  read_paused.erase(fd);
  conns.erase(it);
  n_open.fetch_sub(1);
}

void RpcServer::Impl::Refuse(int fd, const std::string& why) {
  StatusOr<std::string> frame = EncodeFrame(ErrorText(why));
  if (frame.ok()) {
    // Best effort on a fresh socket: the small reply fits the send buffer.
    [[maybe_unused]] ssize_t n =
        send(fd, frame->data(), frame->size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
}

void RpcServer::Impl::Accept(int listen_fd, bool is_unix) {
  std::vector<PendingIdentity> batch;
  for (;;) {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    ScopedFd fd(
        accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd.valid()) {
      const int err = errno;
      if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
        // The pending connection stays queued and would wake epoll forever: stop listening
        // for a moment instead of spinning.
        PauseAccepting();
      }
      if (err != EAGAIN && err != EWOULDBLOCK && err != EINTR) {
        VIGIL_LOG_EVERY_N_SEC(WARN, 60, "rpc accept failed: err={}", strerrordesc_np(err));
      }
      break;
    }
    n_connections.fetch_add(1);
    auto conn = std::make_unique<Connection>(options.max_frame_bytes);
    CallerInfo& caller = conn->caller;
    conn->id = next_id++;
    PendingIdentity pending{fd.get(), conn->id, {}, addr};
    socklen_t local_len = sizeof(pending.local);
    if (is_unix) {
      IdentifyUnixPeer(fd.get(), &caller);
      const bool privileged = caller.uid == 0 || caller.uid == static_cast<int>(geteuid());
      conn->pool = privileged ? ConnectionPool::kPrivilegedUnix : ConnectionPool::kUnix;
    } else {
      DescribeTcpPeer(reinterpret_cast<sockaddr*>(&addr), &caller);
      conn->pool = ConnectionPool::kTcp;
      conn->identifying =
          caller.loopback &&
          getsockname(fd.get(), reinterpret_cast<sockaddr*>(&pending.local), &local_len) == 0;
    }
    conn->peer_key = PeerKey(caller);
    // A connection whose uid is being looked up holds a slot of its pool; its peer's share is
    // checked once the uid is known.
    Status admitted =
        !conn->identifying ? budget.Admit(conn->pool, conn->peer_key)
        : budget.connections(ConnectionPool::kTcp) + identifying <
                options.admission.max_tcp_connections
            ? OkStatus()
            : ResourceExhaustedError("server busy: the tcp connections are all taken");
    if (!admitted.ok()) {
      n_refused.fetch_add(1);
      VIGIL_LOG_EVERY_N_SEC(WARN, 60, "rpc: refused {}: {}", caller.peer, admitted.message());
      Refuse(fd.get(), admitted.message());
      continue;
    }
    conn->admitted = !conn->identifying;
    conn->deadline_ns = MonotonicNanos() + options.read_deadline_ns;
    conn->events = conn->identifying ? 0 : EPOLLIN | EPOLLRDHUP;  // Not read before admitted.
    const int key = fd.get();
    if (!Watch(key, conn->events, EPOLL_CTL_ADD).ok()) {
      if (conn->admitted) {
        budget.Leave(conn->pool, conn->peer_key);
      }
      continue;
    }
    if (conn->identifying) {
      ++identifying;
      batch.push_back(pending);
    }
    conn->fd = std::move(fd);
    conns.emplace(key, std::move(conn));
    n_open.fetch_add(1);
  }
  StartIdentifying(std::move(batch));
}

void RpcServer::Impl::PauseAccepting() {
  if (accept_paused_until_ns != 0) {
    return;
  }
  accept_paused_until_ns = MonotonicNanos() + 100 * kNanosPerMilli;
  for (int fd : {tcp_fd.get(), unix_fd.get()}) {
    if (fd >= 0) {
      epoll_ctl(epoll_fd.get(), EPOLL_CTL_DEL, fd, nullptr);
    }
  }
}

void RpcServer::Impl::MaybeResumeAccepting() {
  if (accept_paused_until_ns == 0 || MonotonicNanos() < accept_paused_until_ns) {
    return;
  }
  accept_paused_until_ns = 0;
  for (int fd : {tcp_fd.get(), unix_fd.get()}) {
    if (fd >= 0) {
      Watch(fd, EPOLLIN, EPOLL_CTL_ADD).IgnoreError();
    }
  }
}

int RpcServer::Impl::NextTimeoutMs() const {
  int64_t next = accept_paused_until_ns != 0 ? accept_paused_until_ns : INT64_MAX;
  for (const auto& [fd, c] : conns) {
    next = std::min(next, c->deadline_ns);
  }
  if (!read_paused.empty()) {
    next = std::min(next, MonotonicNanos() + 50 * kNanosPerMilli);  // Budget may free up.
  }
  if (next == INT64_MAX) {
    return -1;
  }
  const int64_t left = next - MonotonicNanos();
  return static_cast<int>(
      std::clamp<int64_t>((left + kNanosPerMilli - 1) / kNanosPerMilli, 0, 1000));
}

void RpcServer::Impl::ExpireDeadlines() {
  const int64_t now = MonotonicNanos();
  std::vector<int> expired;
  for (const auto& [fd, c] : conns) {
    if (c->deadline_ns <= now) {
      expired.push_back(fd);
      if (!c->draining) {
        n_timeout.fetch_add(1);
      }
    }
  }
  for (int fd : expired) {
    Close(fd);
  }
}

void RpcServer::Impl::Loop() {
  epoll_event events[64];
  while (!stopping.load()) {
    const int n = epoll_wait(epoll_fd.get(), events, 64, NextTimeoutMs());
    if (n < 0 && errno != EINTR) {
      VIGIL_LOG_ERROR("rpc epoll_wait failed: err={}", strerrordesc_np(errno));
      break;
    }
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake_fd.get()) {
        stopping.store(true);
      } else if (fd == done_fd.get()) {
        OnCompletions();
      } else if (fd == tcp_fd.get() || fd == unix_fd.get()) {
        Accept(fd, fd == unix_fd.get());
      } else {
        OnEvent(fd, events[i].events);
      }
    }
    ExpireDeadlines();
    MaybeResumeAccepting();
    ResumePaused();
  }
  n_open.fetch_sub(conns.size());
  conns.clear();
}

RpcServer::RpcServer(RpcServerOptions options, const RpcDispatcher* dispatcher)
    : impl_(std::make_unique<Impl>(std::move(options), dispatcher)) {}

RpcServer::~RpcServer() { Stop(); }

Status RpcServer::Start() {
  Impl& s = *impl_;
  if (s.thread.joinable()) {
    return FailedPreconditionError("rpc server already started");
  }
  if (s.options.tcp_listen.empty() && s.options.unix_path.empty()) {
    return InvalidArgumentError("rpc server: neither a TCP address nor a unix socket configured");
  }
  if (!s.options.tcp_listen.empty()) {
    VIGIL_ASSIGN_OR_RETURN(bool loopback, IsLoopbackListenAddress(s.options.tcp_listen));
    if (!loopback && s.options.token.empty()) {
      return FailedPreconditionError(
          fmt::format("rpc: refusing to listen on {}: listening beyond loopback needs a token "
                      "(--token-file); use 127.0.0.1:PORT or configure a token",
                      s.options.tcp_listen));
    }
    VIGIL_ASSIGN_OR_RETURN(TcpListener listener, ListenTcp(s.options.tcp_listen));
    s.tcp_fd = std::move(listener.fd);
    s.port.store(listener.port);
  }
  if (!s.options.unix_path.empty()) {
    VIGIL_ASSIGN_OR_RETURN(s.unix_fd, ListenUnix(s.options.unix_path, s.options.unix_mode));
    s.unix_bound = true;
  }
  s.epoll_fd = ScopedFd(epoll_create1(EPOLL_CLOEXEC));
  s.wake_fd = ScopedFd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  s.done_fd = ScopedFd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!s.epoll_fd.valid() || !s.wake_fd.valid() || !s.done_fd.valid()) {
    Status err = ErrnoStatus(errno, "rpc: epoll/eventfd");
    Stop();
    return err;
  }
  for (int fd : {s.tcp_fd.get(), s.unix_fd.get(), s.wake_fd.get(), s.done_fd.get()}) {
    if (fd >= 0) {
      if (Status st = s.Watch(fd, EPOLLIN, EPOLL_CTL_ADD); !st.ok()) {
        Stop();
        return st;
      }
    }
  }
  s.stopping.store(false);
  s.identifier = std::make_unique<RpcWorkers>(1, 1024);
  s.workers =
      std::make_unique<RpcWorkers>(std::max<size_t>(s.options.worker_threads, 1),
                                   std::max<size_t>(s.options.max_heavy_queued_per_peer, 1));
  s.thread = std::thread([this] { impl_->Loop(); });
  return OkStatus();
}

void RpcServer::Stop() {
  Impl& s = *impl_;
  if (s.thread.joinable()) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(s.wake_fd.get(), &one, sizeof(one));
    s.stopping.store(true);
    s.thread.join();
  }
  for (std::unique_ptr<RpcWorkers>* w : {&s.workers, &s.identifier}) {
    if (*w) {
      (*w)->Stop();  // Before done_fd closes: running jobs still write to it.
      w->reset();
    }
  }
  s.done.clear();
  s.identified.clear();
  s.tcp_fd.Reset();
  s.unix_fd.Reset();
  s.epoll_fd.Reset();
  s.wake_fd.Reset();
  s.done_fd.Reset();
  if (s.unix_bound) {
    unlink(s.options.unix_path.c_str());
    s.unix_bound = false;
  }
}

int RpcServer::tcp_port() const { return impl_->port.load(); }

RpcServerStats RpcServer::stats() const {
  const Impl& s = *impl_;
  RpcServerStats out;
  out.connections = s.n_connections.load();
  out.open_connections = s.n_open.load();
  out.requests = s.n_requests.load();
  out.bad_frame = s.n_bad_frame.load();
  out.too_large = s.n_too_large.load();
  out.timeout = s.n_timeout.load();
  out.refused = s.n_refused.load();
  out.busy = s.n_busy.load();
  out.buffered_bytes = s.n_buffered.load();
  out.read_paused = s.n_read_paused.load();
  return out;
}

}  // namespace vigil
