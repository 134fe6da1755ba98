// SPDX-License-Identifier: Apache-2.0
// Raw-socket HTTP clients for the tests that attack our HTTP servers over loopback: requests no
// well-behaved library sends (dribbled heads, chunked or gzip bombs, bodies behind a bad token),
// the server's answer with a deadline, and the resident memory of a process. Test-only;
// header-only so the daemon's and the fleet's tests share it. Each function is self-contained.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <zlib.h>

#include "base/time_util.h"

namespace vigil::http_attack {

// A blocking TCP connection to 127.0.0.1:port, or -1.
inline int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

// Sends what the peer takes before `timeout_ms` (a server that stops reading blocks the rest).
inline size_t SendSome(int fd, std::string_view data, int64_t timeout_ms = 2000) {
  const int64_t deadline = MonotonicNanos() + timeout_ms * kNanosPerMilli;
  size_t sent = 0;
  while (sent < data.size()) {
    pollfd p{fd, POLLOUT, 0};
    const int64_t left = (deadline - MonotonicNanos()) / kNanosPerMilli;
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) break;
    const ssize_t n =
        ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  return sent;
}

// What the peer sends until it closes, resets, or `timeout_ms` passes.
inline std::string ReadUntilClose(int fd, int64_t timeout_ms) {
  const int64_t deadline = MonotonicNanos() + timeout_ms * kNanosPerMilli;
  std::string out;
  char buf[4096];
  while (true) {
    pollfd p{fd, POLLIN, 0};
    const int64_t left = (deadline - MonotonicNanos()) / kNanosPerMilli;
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) break;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// The status code of an HTTP reply ("HTTP/1.1 413 ..." -> 413), 0 for none.
inline int StatusOf(std::string_view reply) {
  if (reply.size() < 12 || reply.substr(0, 5) != "HTTP/") return 0;
  return std::atoi(std::string(reply.substr(9, 3)).c_str());
}

// One request on a fresh connection: its status (0 for none) within `timeout_ms`.
inline int Exchange(int port, std::string_view request, int64_t timeout_ms = 3000) {
  const int fd = Connect(port);
  if (fd < 0) return 0;
  SendSome(fd, request, timeout_ms);
  const int status = StatusOf(ReadUntilClose(fd, timeout_ms));
  ::close(fd);
  return status;
}

// The resident set of `pid` (0 = this process) in bytes, from /proc/PID/status.
inline int64_t VmRssBytes(pid_t pid = 0) {
  const std::string path =
      pid == 0 ? std::string("/proc/self/status") : "/proc/" + std::to_string(pid) + "/status";
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return -1;
  char line[256];
  int64_t kib = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  }
  std::fclose(f);
  return kib < 0 ? -1 : kib * 1024;
}

// gzip of `n` zero bytes (a multiple of 1 MiB), a decompression bomb: 1 GiB inflates from ~1 MiB.
// One MiB of zeros is deflated once and its blocks repeated (each is complete and refers to
// nothing before it), so a bomb takes milliseconds to make.
inline std::string GzipOfZeros(size_t n) {
  constexpr size_t kPiece = 1 << 20;
  const std::vector<char> zeros(kPiece, 0);
  z_stream zs{};
  deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY);  // Raw deflate.
  std::string piece(kPiece, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
  zs.avail_in = kPiece;
  zs.next_out = reinterpret_cast<Bytef*>(piece.data());
  zs.avail_out = kPiece;
  deflate(&zs, Z_FULL_FLUSH);  // Non-final blocks, ending byte-aligned.
  piece.resize(kPiece - zs.avail_out);
  deflateEnd(&zs);
  std::string out("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);
  const uLong piece_crc = crc32(0, reinterpret_cast<const Bytef*>(zeros.data()), kPiece);
  uLong crc = 0;
  for (size_t done = 0; done < n; done += kPiece) {
    out += piece;
    crc = done == 0 ? piece_crc : crc32_combine(crc, piece_crc, kPiece);
  }
  out.append("\x03\x00", 2);  // An empty final block.
  for (uint32_t v : {static_cast<uint32_t>(crc), static_cast<uint32_t>(n)}) {
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((v >> (8 * b)) & 0xff));
  }
  return out;
}

// `n` connections that each send the start of a request head and then a byte every
// `interval_ms`, from a child process (as uid `uid` when >= 0 and we are root), until the
// returned stop fd is closed. Returns the child's pid; *stop_fd is the write end to close. The
// child writes one byte to *ready_fd per connection it opened.
inline pid_t StartDribblers(int port, int n, int interval_ms, int uid, int* stop_fd,
                            int* ready_fd) {
  int stop[2], ready[2];
  if (::pipe(stop) != 0 || ::pipe(ready) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid != 0) {
    ::close(stop[0]);
    ::close(ready[1]);
    *stop_fd = stop[1];
    *ready_fd = ready[0];
    return pid;
  }
  ::close(stop[1]);
  ::close(ready[0]);
  if (uid >= 0 && ::geteuid() == 0 && (::setgid(uid) != 0 || ::setuid(uid) != 0)) ::_exit(2);
  std::vector<int> fds;
  for (int i = 0; i < n; ++i) {
    const int fd = Connect(port);
    if (fd < 0) ::_exit(3);
    static constexpr char kHead[] = "GET /healthz HTTP/1.1\r\nHost: a\r\nX-Slow: ";
    (void)!::send(fd, kHead, sizeof(kHead) - 1, MSG_NOSIGNAL);
    fds.push_back(fd);
    (void)!::write(ready[1], "c", 1);
  }
  while (true) {
    pollfd p{stop[0], POLLIN, 0};
    if (::poll(&p, 1, interval_ms) != 0) ::_exit(0);
    for (int fd : fds) (void)!::send(fd, "x", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  }
}

// StartDribblers' connections for one test: open (all `n` of them) once ready() is true, stopped
// and reaped on destruction.
class Dribblers {
 public:
  Dribblers(int port, int n, int uid) : n_(n) {
    child_ = StartDribblers(port, n, 100, uid, &stop_fd_, &ready_fd_);
  }
  ~Dribblers() {
    for (int fd : {stop_fd_, ready_fd_}) {
      if (fd >= 0) ::close(fd);
    }
    if (child_ > 0) ::waitpid(child_, nullptr, 0);
  }
  Dribblers(const Dribblers&) = delete;
  Dribblers& operator=(const Dribblers&) = delete;

  // Waits until every connection is open; false when the child failed.
  bool ready() {
    char c;
    for (int i = 0; i < n_; ++i) {
      if (child_ <= 0 || ::read(ready_fd_, &c, 1) != 1) return false;
    }
    n_ = 0;
    return true;
  }

 private:
  int n_;
  pid_t child_ = -1;
  int stop_fd_ = -1, ready_fd_ = -1;
};

// A GET of `path` on a fresh connection: its status, and the time it took in *ms.
inline int TimedGet(int port, int64_t* ms, const char* path = "/healthz") {
  const int64_t t0 = MonotonicNanos();
  const int status = Exchange(port, std::string("GET ") + path + " HTTP/1.1\r\nHost: a\r\n\r\n");
  *ms = (MonotonicNanos() - t0) / kNanosPerMilli;
  return status;
}

}  // namespace vigil::http_attack
