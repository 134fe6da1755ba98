// SPDX-License-Identifier: Apache-2.0
// The stream cpp-httplib parses one request from and writes its reply to, with the limits
// httplib's own socket stream lacks: one deadline for the whole request (head and body, not per
// read, so a client dribbling a byte a second is cut off), a cap on the bytes read (httplib grows
// a request line or header without bound until it sees a newline), and a deadline for the whole
// reply. Plain TCP or TLS (an OpenSSL session over the same non-blocking socket). Owner: httpd.
// One connection, one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <httplib.h>

namespace vigil {

class DeadlineStream : public httplib::Stream {
 public:
  // `fd` must be non-blocking; `ssl` (may be null) is an accepted session on it. Deadlines are
  // MonotonicNanos() values; the reply's starts at its first write.
  DeadlineStream(int fd, SSL* ssl, int64_t read_deadline_ns, size_t max_read_bytes,
                 int64_t write_budget_ns);

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  int socket() const override { return fd_; }

  // Why the last read failed: "" (end of stream or an error), or the limit that stopped it.
  const std::string& limit_hit() const { return limit_hit_; }

 private:
  // Waits until `events` are ready or `deadline_ns`; false on timeout.
  bool Wait(short events, int64_t deadline_ns) const;
  ssize_t Fill();

  const int fd_;
  SSL* const ssl_;
  const int64_t read_deadline_ns_;
  const size_t max_read_bytes_;
  const int64_t write_budget_ns_;
  int64_t write_deadline_ns_ = 0;
  size_t read_bytes_ = 0;
  std::string limit_hit_;
  char buf_[4096];
  size_t buf_pos_ = 0, buf_len_ = 0;
};

// Completes a TLS handshake on non-blocking `fd` by `deadline_ns`; false on failure or timeout.
bool AcceptTls(SSL* ssl, int fd, int64_t deadline_ns);

}  // namespace vigil
