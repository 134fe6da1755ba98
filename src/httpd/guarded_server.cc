// SPDX-License-Identifier: Apache-2.0
#include "httpd/guarded_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <optional>
#include <utility>

#include "base/listen_socket.h"
#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "httpd/deadline_stream.h"
#include "httpd/peer_uid.h"

namespace vigil {
namespace {

std::string JsonError(const std::string& message) {
  std::string body = "{\"error\":";
  AppendJsonString(message, &body);
  body += "}";
  return body;
}

// Set on a connection's thread when its head was refused: the body may still be on its way.
thread_local bool refused_head = false;

// Lets the client read a refusal sent before its body: closing with unread input would reset the
// connection and could discard the reply. Bounded in time and bytes; the caller closes.
void Linger(int fd) {
  ::shutdown(fd, SHUT_WR);
  const int64_t deadline = MonotonicNanos() + 500 * kNanosPerMilli;
  char sink[16 << 10];
  size_t drained = 0;
  while (drained < (1 << 20)) {
    const int64_t left_ms = (deadline - MonotonicNanos()) / kNanosPerMilli;
    pollfd p{fd, POLLIN, 0};
    if (left_ms <= 0 || ::poll(&p, 1, static_cast<int>(left_ms)) <= 0) break;
    const ssize_t n = ::recv(fd, sink, sizeof(sink), 0);
    if (n <= 0) break;
    drained += static_cast<size_t>(n);
  }
}

}  // namespace

void SetJsonError(httplib::Response& res, int code, const std::string& message) {
  res.status = code;
  res.set_content(JsonError(message), "application/json");
}

bool CheckBody(httplib::Request& req, httplib::Response& res, BodyRule rule) {
  const bool has_body =
      req.get_header_value("Content-Length") != "" && req.get_header_value("Content-Length") != "0";
  if (rule == BodyRule::kNone && has_body) {
    SetJsonError(res, 413, "this endpoint takes no request body");
    return false;
  }
  if (!req.has_header("Content-Encoding")) return true;
  const std::string encoding = ToLower(Trim(req.get_header_value("Content-Encoding")));
  if (rule == BodyRule::kGzip && (encoding == "gzip" || encoding == "identity")) {
    // httplib would inflate it, unbounded, before the handler; the handler inflates it instead.
    req.headers.erase("Content-Encoding");
    return true;
  }
  SetJsonError(res, 415,
               "Content-Encoding " + SanitizeForLog(encoding) + " is not accepted here" +
                   (rule == BodyRule::kGzip ? " (gzip is)" : ""));
  return false;
}

GuardedServer::GuardedServer(HttpLimits limits, HeadCheck check)
    : limits_(std::move(limits)), check_(std::move(check)) {
  set_payload_max_length(limits_.max_body_bytes);
  // Runs after the head is parsed and before httplib reads any of the body. The request is
  // httplib's own mutable object; only the handler signature is const.
  set_pre_routing_handler([this](const httplib::Request& creq, httplib::Response& res) {
    auto& req = const_cast<httplib::Request&>(creq);
    refused_head = true;
    // The server's rules first (a token, a method), so a refusal says what matters most.
    if (check_ && !check_(req, res)) return HandlerResponse::Handled;
    if (req.has_header("Transfer-Encoding")) {
      SetJsonError(res, 411, "Transfer-Encoding is not accepted: send a Content-Length");
      return HandlerResponse::Handled;
    }
    if (req.has_header("Content-Length")) {
      const std::optional<uint64_t> length = ParseUint64(req.get_header_value("Content-Length"));
      if (!length) {
        SetJsonError(res, 400, "bad Content-Length");
        return HandlerResponse::Handled;
      }
      if (*length > limits_.max_body_bytes) {
        SetJsonError(res, 413,
                     "request body larger than " + std::to_string(limits_.max_body_bytes));
        return HandlerResponse::Handled;
      }
    }
    refused_head = false;
    return HandlerResponse::Unhandled;
  });
}

GuardedServer::~GuardedServer() {
  Stop();
  if (tls_ != nullptr) SSL_CTX_free(tls_);
}

Status GuardedServer::SetUpTls() {
  tls_ = SSL_CTX_new(TLS_server_method());
  if (tls_ == nullptr) return InternalError("TLS: cannot create a context");
  SSL_CTX_set_min_proto_version(tls_, TLS1_2_VERSION);
  SSL_CTX_set_options(tls_, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  if (SSL_CTX_use_certificate_chain_file(tls_, limits_.tls_cert_file.c_str()) != 1) {
    return InvalidArgumentError("TLS: cannot use certificate " + limits_.tls_cert_file +
                                " (want a PEM certificate chain)");
  }
  if (SSL_CTX_use_PrivateKey_file(tls_, limits_.tls_key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(tls_) != 1) {
    return InvalidArgumentError("TLS: cannot use key " + limits_.tls_key_file + " with " +
                                limits_.tls_cert_file +
                                " (want a PEM key matching the certificate)");
  }
  return OkStatus();
}

StatusOr<int> GuardedServer::Start(const std::string& host, int port) {
  if (!limits_.tls_cert_file.empty() || !limits_.tls_key_file.empty()) {
    VIGIL_RETURN_IF_ERROR(SetUpTls());
  }
  ListenSocket listen_socket;
  set_socket_options(listen_socket.Options());
  const int bound = port == 0 ? bind_to_any_port(host) : bind_to_port(host, port) ? port : -1;
  if (bound <= 0) {
    return UnavailableError("cannot listen on " + host + ":" + std::to_string(port));
  }
  listen_socket.RaiseBacklog();
  listen_fd_ = svr_sock_.exchange(INVALID_SOCKET);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  stopping_ = false;
  accept_thread_ = std::thread([this] { AcceptLoop(); });
  return bound;
}

void GuardedServer::Stop() {
  if (!accept_thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (Connection& c : connections_) {
      if (!c.done) ::shutdown(c.fd, SHUT_RDWR);
    }
  }
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
  changed_.notify_all();
  accept_thread_.join();
  for (Connection& c : connections_) c.thread.join();
  connections_.clear();
  per_client_.clear();
  ::close(listen_fd_);
  ::close(wake_fd_);
  listen_fd_ = wake_fd_ = -1;
}

size_t GuardedServer::open_connections() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const Connection& c : connections_) n += c.done ? 0 : 1;
  return n;
}

// Loopback clients are told apart by uid (every local user connects from 127.0.0.1), others by
// address.
std::string GuardedServer::ClientKey(int fd, std::string* address) const {
  sockaddr_storage peer{}, local{};
  socklen_t plen = sizeof(peer), llen = sizeof(local);
  getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &plen);
  getsockname(fd, reinterpret_cast<sockaddr*>(&local), &llen);
  DeadlineStream probe(fd, nullptr, 0, 0, 0);
  int port = 0;
  probe.get_remote_ip_and_port(*address, port);
  if (std::optional<uid_t> uid = LoopbackPeerUid(peer, local)) {
    return "uid " + std::to_string(*uid);
  }
  return *address;
}

void GuardedServer::ReapLocked() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (!it->done) {
      ++it;
      continue;
    }
    it->thread.join();
    if (--per_client_[it->client] == 0) per_client_.erase(it->client);
    it = connections_.erase(it);
  }
}

void GuardedServer::AcceptLoop() {
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
    int yes = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    std::string address;
    const std::string client = ClientKey(fd, &address);
    std::lock_guard<std::mutex> lock(mu_);
    if (per_client_[client] >= limits_.max_connections_per_client) {
      if (per_client_[client] == 0) per_client_.erase(client);
      VIGIL_LOG_EVERY_N_SEC(WARN, 10, "http: refused a connection from {} ({}): {} open already",
                            address, client, limits_.max_connections_per_client);
      const std::string body = JsonError("too many connections from this client");
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
    conn.fd = fd;
    conn.client = client;
    conn.thread = std::thread([this, c = &conn] { Serve(c); });
  }
}

void GuardedServer::Serve(Connection* conn) {
  const int64_t deadline = MonotonicNanos() + limits_.request_deadline_ms * kNanosPerMilli;
  SSL* ssl = nullptr;
  bool ok = true;
  if (tls_ != nullptr) {
    ssl = SSL_new(tls_);
    ok = ssl != nullptr && SSL_set_fd(ssl, conn->fd) == 1 && AcceptTls(ssl, conn->fd, deadline);
  }
  std::string limit;
  refused_head = false;
  if (ok) {
    DeadlineStream stream(conn->fd, ssl, deadline, limits_.max_head_bytes + limits_.max_body_bytes,
                          limits_.reply_deadline_ms * kNanosPerMilli);
    bool closed = false;
    // One request a connection: its deadline and byte cap cover the connection's whole life.
    process_request(stream, /*close_connection=*/true, closed, [](httplib::Request&) {});
    limit = stream.limit_hit();
  } else {
    limit = "TLS handshake";
  }
  if (!limit.empty()) {
    VIGIL_LOG_EVERY_N_SEC(INFO, 10, "http: cut off a request from {}: {}", conn->client, limit);
  }
  if (ssl != nullptr) {
    if (ok) SSL_shutdown(ssl);
    SSL_free(ssl);
  }
  if (refused_head) Linger(conn->fd);
  // Closed under the lock: Stop() shuts down only sockets of connections not done.
  std::lock_guard<std::mutex> lock(mu_);
  ::close(conn->fd);
  conn->done = true;
  changed_.notify_all();
}

}  // namespace vigil
