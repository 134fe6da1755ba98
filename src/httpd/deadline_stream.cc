// SPDX-License-Identifier: Apache-2.0
#include "httpd/deadline_stream.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "base/time_util.h"
#include "httpd/socket_io.h"

namespace vigil {

DeadlineStream::DeadlineStream(int fd, SSL* ssl, int64_t read_deadline_ns, size_t max_read_bytes,
                               int64_t write_budget_ns)
    : fd_(fd),
      ssl_(ssl),
      read_deadline_ns_(read_deadline_ns),
      max_read_bytes_(max_read_bytes),
      write_budget_ns_(write_budget_ns) {}

bool DeadlineStream::Wait(short events, int64_t deadline_ns) const {
  return WaitFd(fd_, events, deadline_ns);
}

bool DeadlineStream::is_readable() const {
  if (buf_pos_ < buf_len_ || (ssl_ != nullptr && SSL_pending(ssl_) > 0)) return true;
  return Wait(POLLIN, read_deadline_ns_);
}

bool DeadlineStream::is_writable() const {
  const int64_t deadline =
      write_deadline_ns_ != 0 ? write_deadline_ns_ : MonotonicNanos() + write_budget_ns_;
  return Wait(POLLOUT, deadline);
}

// One read from the socket (or TLS session) into buf_, by the request's deadline.
ssize_t DeadlineStream::Fill() {
  while (true) {
    if (MonotonicNanos() >= read_deadline_ns_) {
      limit_hit_ = "request deadline";
      return -1;
    }
    ssize_t n = 0;
    short want = POLLIN;
    if (ssl_ != nullptr) {
      const int rc = SSL_read(ssl_, buf_, sizeof(buf_));
      if (rc > 0) return rc;
      const int err = SSL_get_error(ssl_, rc);
      if (err == SSL_ERROR_ZERO_RETURN) return 0;
      if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) return -1;
      want = err == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN;
    } else {
      n = ::recv(fd_, buf_, sizeof(buf_), 0);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
    }
    if (!Wait(want, read_deadline_ns_)) {
      limit_hit_ = "request deadline";
      return -1;
    }
  }
}

ssize_t DeadlineStream::read(char* ptr, size_t size) {
  if (buf_pos_ == buf_len_) {
    const ssize_t n = Fill();
    if (n <= 0) return n;
    buf_pos_ = 0;
    buf_len_ = static_cast<size_t>(n);
  }
  const size_t n = std::min(size, buf_len_ - buf_pos_);
  if (read_bytes_ + n > max_read_bytes_) {
    limit_hit_ = "request size";
    return -1;
  }
  std::copy(buf_ + buf_pos_, buf_ + buf_pos_ + n, ptr);
  buf_pos_ += n;
  read_bytes_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t DeadlineStream::write(const char* ptr, size_t size) {
  if (write_deadline_ns_ == 0) write_deadline_ns_ = MonotonicNanos() + write_budget_ns_;
  size_t done = 0;
  while (done < size) {
    short want = POLLOUT;
    if (ssl_ != nullptr) {
      const int rc =
          SSL_write(ssl_, ptr + done, static_cast<int>(std::min<size_t>(size - done, 1 << 20)));
      if (rc > 0) {
        done += static_cast<size_t>(rc);
        continue;
      }
      const int err = SSL_get_error(ssl_, rc);
      if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) return -1;
      want = err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
    } else {
      const ssize_t n = ::send(fd_, ptr + done, size - done, MSG_NOSIGNAL);
      if (n > 0) {
        done += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) return -1;
    }
    if (!Wait(want, write_deadline_ns_)) return -1;
  }
  return static_cast<ssize_t>(size);
}

void DeadlineStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    ip = AddressText(addr, &port);
}

void DeadlineStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    ip = AddressText(addr, &port);
}

bool AcceptTls(SSL* ssl, int fd, int64_t deadline_ns) {
  while (true) {
    const int rc = SSL_accept(ssl);
    if (rc == 1) return true;
    const int err = SSL_get_error(ssl, rc);
    if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) return false;
    if (!WaitFd(fd, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline_ns)) return false;
  }
}

}  // namespace vigil
