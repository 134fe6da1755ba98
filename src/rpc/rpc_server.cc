// SPDX-License-Identifier: Apache-2.0
#include "rpc/rpc_server.h"

#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/logging.h"
#include "base/time_util.h"
#include "rpc/framing.h"
#include "rpc/net_util.h"

namespace vigil {
namespace {

constexpr size_t kReadChunk = 64 << 10;

std::string ReplyText(const nlohmann::json& reply) {
  return reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ErrorText(const std::string& message) {
  return ReplyText(nlohmann::json{{"error", message}});
}

struct Connection {
  ScopedFd fd;
  CallerInfo caller;
  FrameDecoder decoder;
  std::string out;
  size_t out_sent = 0;
  int64_t deadline_ns = 0;  // Monotonic; the connection is closed when it passes.
  bool close_after_write = false;
  bool draining = false;  // Reply sent and write side shut: discarding input until EOF.
  uint32_t events = 0;    // What epoll currently watches.

  explicit Connection(size_t max_frame) : decoder(max_frame) {}
  bool writing() const { return out_sent < out.size(); }
};

}  // namespace

struct RpcServer::Impl {
  RpcServerOptions options;
  const RpcDispatcher* dispatcher;
  ScopedFd tcp_fd, unix_fd, epoll_fd, wake_fd;
  bool unix_bound = false;
  int64_t accept_paused_until_ns = 0;  // Out of fds: listeners unwatched until then (0 = watched).
  std::atomic<int> port{0};
  std::thread thread;
  std::atomic<bool> stopping{false};
  std::unordered_map<int, std::unique_ptr<Connection>> conns;  // Loop thread only.

  std::atomic<uint64_t> n_connections{0}, n_open{0}, n_requests{0}, n_bad_frame{0}, n_too_large{0},
      n_timeout{0}, n_refused{0};

  Impl(RpcServerOptions o, const RpcDispatcher* d) : options(std::move(o)), dispatcher(d) {}

  Status Watch(int fd, uint32_t events, int op) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    if (epoll_ctl(epoll_fd.get(), op, fd, &ev) < 0) {
      return ErrnoStatus(errno, "epoll_ctl");
    }
    return OkStatus();
  }

  void SetEvents(Connection* c, uint32_t events) {
    if (c->events != events && Watch(c->fd.get(), events, EPOLL_CTL_MOD).ok()) {
      c->events = events;
    }
  }

  void Close(int fd) {
    auto it = conns.find(fd);
    if (it == conns.end()) {
      return;
    }
    epoll_ctl(epoll_fd.get(), EPOLL_CTL_DEL, fd, nullptr);
    conns.erase(it);
    n_open.fetch_sub(1);
  }

  void Accept(int listen_fd, bool is_unix) {
    for (;;) {
      sockaddr_storage addr{};
      socklen_t len = sizeof(addr);
      ScopedFd fd(accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len,
                          SOCK_NONBLOCK | SOCK_CLOEXEC));
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
        return;
      }
      n_connections.fetch_add(1);
      if (conns.size() >= options.max_connections) {
        n_refused.fetch_add(1);
        StatusOr<std::string> frame = EncodeFrame(ErrorText("server busy: too many connections"));
        if (frame.ok()) {
          // Best effort on a fresh socket: the small reply fits the send buffer.
          [[maybe_unused]] ssize_t n =
              send(fd.get(), frame->data(), frame->size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        continue;
      }
      auto conn = std::make_unique<Connection>(options.max_frame_bytes);
      CallerInfo& caller = conn->caller;
      if (is_unix) {
        caller.transport = CallerInfo::Transport::kUnix;
        caller.loopback = true;
        ucred cred{};
        socklen_t cred_len = sizeof(cred);
        if (getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) == 0) {
          caller.pid = cred.pid;
          caller.uid = static_cast<int>(cred.uid);
          caller.gid = static_cast<int>(cred.gid);
        }
        caller.peer = fmt::format("unix:pid={},uid={}", caller.pid, caller.uid);
      } else {
        caller.transport = CallerInfo::Transport::kTcp;
        caller.loopback = IsLoopbackAddress(reinterpret_cast<sockaddr*>(&addr));
        caller.peer = FormatSocketAddress(reinterpret_cast<sockaddr*>(&addr));
      }
      conn->deadline_ns = MonotonicNanos() + options.read_deadline_ns;
      conn->events = EPOLLIN | EPOLLRDHUP;
      const int key = fd.get();
      if (!Watch(key, conn->events, EPOLL_CTL_ADD).ok()) {
        continue;
      }
      conn->fd = std::move(fd);
      conns.emplace(key, std::move(conn));
      n_open.fetch_add(1);
    }
  }

  std::string HandleRequest(const std::string& payload, CallerInfo caller) {
    nlohmann::json request = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
    if (request.is_discarded()) {
      n_bad_frame.fetch_add(1);
      return ErrorText("request is not valid JSON");
    }
    if (!request.is_object()) {
      n_bad_frame.fetch_add(1);
      return ErrorText("request must be a JSON object");
    }
    if (auto token = request.find("token"); token != request.end()) {
      caller.authenticated =
          token->is_string() && !options.token.empty() &&
          ConstantTimeEquals(token->get_ref<const std::string&>(), options.token);
      request.erase("token");  // Handlers never see (or log) the secret.
    }
    return ReplyText(dispatcher->Dispatch(request, caller));
  }

  void Queue(Connection* c, const std::string& reply_text) {
    StatusOr<std::string> frame = EncodeFrame(reply_text);
    if (!frame.ok()) {
      frame = EncodeFrame(ErrorText("reply too large: " + frame.status().message()));
    }
    if (c->out_sent == c->out.size()) {
      c->out.clear();
      c->out_sent = 0;
    }
    c->out.append(*frame);
  }

  // Sends what is queued. Returns false when the connection was closed.
  bool Flush(Connection* c) {
    while (c->writing()) {
      const ssize_t n = send(c->fd.get(), c->out.data() + c->out_sent, c->out.size() - c->out_sent,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        SetEvents(c, EPOLLOUT | EPOLLRDHUP);  // Stop reading until the reply is out.
        return true;
      }
      if (n <= 0) {
        Close(c->fd.get());
        return false;
      }
      c->out_sent += static_cast<size_t>(n);
    }
    c->out.clear();
    c->out_sent = 0;
    if (c->close_after_write) {
      // Half-close and drain rather than close(): closing with unread input sends a reset,
      // which can destroy the error reply before the client reads it.
      shutdown(c->fd.get(), SHUT_WR);
      c->draining = true;
      c->deadline_ns = std::min(c->deadline_ns, MonotonicNanos() + kNanosPerSecond);
      SetEvents(c, EPOLLIN | EPOLLRDHUP);
      return true;
    }
    SetEvents(c, EPOLLIN | EPOLLRDHUP);
    return true;
  }

  // Answers every complete frame while nothing is waiting to be written.
  bool ProcessFrames(Connection* c) {
    while (!c->writing() && !c->close_after_write) {
      StatusOr<std::optional<std::string>> frame = c->decoder.Next();
      if (!frame.ok()) {
        (frame.status().code() == StatusCode::kResourceExhausted ? n_too_large : n_bad_frame)
            .fetch_add(1);
        c->close_after_write = true;
        Queue(c, ErrorText(frame.status().message()));
        return Flush(c);
      }
      if (!frame->has_value()) {
        return true;
      }
      n_requests.fetch_add(1);
      Queue(c, HandleRequest(**frame, c->caller));
      c->deadline_ns = MonotonicNanos() + options.read_deadline_ns;
      if (!Flush(c)) {
        return false;
      }
    }
    return true;
  }

  void OnReadable(Connection* c) {
    char buf[kReadChunk];
    for (;;) {
      const ssize_t n = recv(c->fd.get(), buf, sizeof(buf), MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      }
      if (n <= 0) {
        Close(c->fd.get());
        return;
      }
      if (c->draining) {
        continue;
      }
      c->decoder.Append(std::string_view(buf, static_cast<size_t>(n)));
      if (!ProcessFrames(c) || c->writing()) {
        return;  // Closed, or the rest waits until the reply has gone out.
      }
    }
  }

  void OnEvent(int fd, uint32_t events) {
    auto it = conns.find(fd);
    if (it == conns.end()) {
      return;
    }
    Connection* c = it->second.get();
    if ((events & EPOLLERR) != 0) {
      Close(fd);
      return;
    }
    if ((events & EPOLLOUT) != 0) {
      if (!Flush(c) || !ProcessFrames(c)) {
        return;
      }
    }
    if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) != 0 && !c->writing()) {
      OnReadable(c);
    }
  }

  void PauseAccepting() {
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

  void MaybeResumeAccepting() {
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

  int NextTimeoutMs() const {
    int64_t next = accept_paused_until_ns != 0 ? accept_paused_until_ns : INT64_MAX;
    for (const auto& [fd, c] : conns) {
      next = std::min(next, c->deadline_ns);
    }
    if (next == INT64_MAX) {
      return -1;
    }
    const int64_t left = next - MonotonicNanos();
    return static_cast<int>(
        std::clamp<int64_t>((left + kNanosPerMilli - 1) / kNanosPerMilli, 0, 1000));
  }

  void ExpireDeadlines() {
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

  void Loop() {
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
        } else if (fd == tcp_fd.get() || fd == unix_fd.get()) {
          Accept(fd, fd == unix_fd.get());
        } else {
          OnEvent(fd, events[i].events);
        }
      }
      ExpireDeadlines();
      MaybeResumeAccepting();
    }
    n_open.fetch_sub(conns.size());
    conns.clear();
  }
};

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
  if (!s.epoll_fd.valid() || !s.wake_fd.valid()) {
    Status err = ErrnoStatus(errno, "rpc: epoll/eventfd");
    Stop();
    return err;
  }
  for (int fd : {s.tcp_fd.get(), s.unix_fd.get(), s.wake_fd.get()}) {
    if (fd >= 0) {
      if (Status st = s.Watch(fd, EPOLLIN, EPOLL_CTL_ADD); !st.ok()) {
        Stop();
        return st;
      }
    }
  }
  s.stopping.store(false);
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
  s.tcp_fd.Reset();
  s.unix_fd.Reset();
  s.epoll_fd.Reset();
  s.wake_fd.Reset();
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
  return out;
}

}  // namespace vigil
