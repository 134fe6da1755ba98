// SPDX-License-Identifier: Apache-2.0
#include "httpd/guarded_listener.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <utility>

#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "httpd/peer_uid.h"
#include "httpd/socket_io.h"

namespace vigil {
namespace {

constexpr int kBacklog = 1024;  // Hundreds of daemons may push at once.

// A listening socket on the first address of host:port that binds, or -1 with `why` filled.
int BindListener(const std::string& host, int port, std::string* why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int rc =
      getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0) {
    *why = gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* ai = found; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) continue;
    int yes = 1, no = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    // "::" serves IPv4 too, as it did under cpp-httplib.
    if (ai->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof(no));
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, kBacklog) != 0) {
      *why = ErrnoStatus(errno, "bind").message();
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  return fd;
}

// Loopback clients are told apart by uid (every local user connects from 127.0.0.1), others by
// address.
std::string ClientKey(int fd, std::string* address) {
  sockaddr_storage peer{}, local{};
  socklen_t plen = sizeof(peer), llen = sizeof(local);
  getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &plen);
  getsockname(fd, reinterpret_cast<sockaddr*>(&local), &llen);
  *address = AddressText(peer);
  if (std::optional<uid_t> uid = LoopbackPeerUid(peer, local)) {
    return "uid " + std::to_string(*uid);
  }
  return *address;
}

// Lets the client read a refusal sent before its body: closing with unread input would reset the
// connection and could discard the reply. Bounded in time and bytes; the caller closes.
void Linger(int fd) {
  ::shutdown(fd, SHUT_WR);
  const int64_t deadline = MonotonicNanos() + 500 * kNanosPerMilli;
  char sink[16 << 10];
  size_t drained = 0;
  while (drained < (1 << 20)) {
    if (!WaitFd(fd, POLLIN, deadline)) break;
    const ssize_t n = ::recv(fd, sink, sizeof(sink), 0);
    if (n <= 0) break;
    drained += static_cast<size_t>(n);
  }
}

}  // namespace

std::string JsonErrorBody(std::string_view message) {
  std::string body = "{\"error\":";
  AppendJsonString(message, &body);
  body += "}";
  return body;
}

GuardedListener::GuardedListener(HttpLimits limits, ConnectionHandler handler)
    : limits_(std::move(limits)), handler_(std::move(handler)) {}

GuardedListener::~GuardedListener() { Stop(); }

StatusOr<int> GuardedListener::Start(const std::string& host, int port) {
  std::string why;
  listen_fd_ = BindListener(host, port, &why);
  if (listen_fd_ < 0) {
    return UnavailableError("cannot listen on " + host + ":" + std::to_string(port) + ": " + why);
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  int bound_port = 0;
  AddressText(bound, &bound_port);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  stopping_ = false;
  accept_thread_ = std::thread([this] { AcceptLoop(); });
  return bound_port;
}

void GuardedListener::Stop() {
  if (!accept_thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (Connection& c : connections_) {
      if (c.started) ::shutdown(c.served.fd, SHUT_RDWR);
    }
  }
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
  changed_.notify_all();
  work_.notify_all();
  accept_thread_.join();
  for (Worker& w : workers_) w.thread.join();
  workers_.clear();
  for (Connection* c : pending_) ::close(c->served.fd);  // Never served: no worker took them.
  pending_.clear();
  connections_.clear();
  per_client_.clear();
  idle_workers_ = 0;
  ::close(listen_fd_);
  ::close(wake_fd_);
  listen_fd_ = wake_fd_ = -1;
}

size_t GuardedListener::open_connections() const {
  std::lock_guard<std::mutex> lock(mu_);
  return connections_.size();
}

void GuardedListener::ReapLocked() {
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (!it->exited) {
      ++it;
      continue;
    }
    it->thread.join();  // It has left WorkerLoop: this returns at once.
    it = workers_.erase(it);
  }
}

void GuardedListener::DispatchLocked(Connection* conn) {
  pending_.push_back(conn);
  if (pending_.size() <= idle_workers_) {
    work_.notify_one();
    return;
  }
  ++idle_workers_;  // Free from now on, so the next connection does not start another.
  Worker& w = workers_.emplace_back();
  w.thread = std::thread([this, self = &w] { WorkerLoop(self); });
}

void GuardedListener::WorkerLoop(Worker* self) {
  std::unique_lock<std::mutex> lock(mu_);  // Counted free by DispatchLocked already.
  while (work_.wait_for(lock, std::chrono::milliseconds(kWorkerIdleMs), [&] {
    return stopping_ || !pending_.empty();
  }) && !stopping_) {
    --idle_workers_;
    Connection* conn = pending_.front();
    pending_.pop_front();
    conn->started = true;
    lock.unlock();
    Serve(conn);
    lock.lock();
    // Closed under the lock: Stop() shuts down only sockets of connections still listed. This
    // worker counts as free in the same step, so a client that saw the close and connects again
    // is handed to it.
    ::close(conn->served.fd);
    if (--per_client_[conn->served.client] == 0) per_client_.erase(conn->served.client);
    connections_.remove_if([conn](const Connection& c) { return &c == conn; });
    ++idle_workers_;
    changed_.notify_all();
  }
  --idle_workers_;
  self->exited = true;
  changed_.notify_all();
}

void GuardedListener::AcceptLoop() {
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      ReapLocked();
      // At the cap, leave new connections in the kernel's backlog until one ends.
      changed_.wait(lock, [&] {
        ReapLocked();
        return stopping_ || connections_.size() < limits_.max_connections;
      });
      if (stopping_) return;
    }
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (::poll(fds, 2, 1000) <= 0 || (fds[1].revents & POLLIN) != 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) continue;
    const int64_t accepted = MonotonicNanos();
    int yes = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    std::string address;
    const std::string client = ClientKey(fd, &address);
    std::lock_guard<std::mutex> lock(mu_);
    if (per_client_[client] >= limits_.max_connections_per_client) {
      if (per_client_[client] == 0) per_client_.erase(client);
      VIGIL_LOG_EVERY_N_SEC(WARN, 10, "http: refused a connection from {} ({}): {} open already",
                            address, client, limits_.max_connections_per_client);
      const std::string body = JsonErrorBody("too many connections from this client");
      const std::string reply =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
          "Connection: close\r\nContent-Length: " +
          std::to_string(body.size()) + "\r\n\r\n" + body;
      (void)!::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      ::close(fd);
      continue;
    }
    ++per_client_[client];
    Connection& conn = connections_.emplace_back();
    conn.served = ServedConnection{fd, client, accepted};
    DispatchLocked(&conn);
  }
}

void GuardedListener::Serve(Connection* conn) {
  if (handler_(conn->served)) Linger(conn->served.fd);
}

}  // namespace vigil
