// SPDX-License-Identifier: Apache-2.0
#include "ipc/endpoint.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "base/logging.h"
#include "base/strings.h"

namespace vigil {
namespace {

constexpr size_t kSunPathBytes = sizeof(sockaddr_un::sun_path);
constexpr socklen_t kPathOffset = offsetof(sockaddr_un, sun_path);

}  // namespace

std::string IpcAddress::DisplayName() const {
  if (len <= kPathOffset) {
    return "(unnamed)";
  }
  const size_t path_len = static_cast<size_t>(len - kPathOffset);
  std::string_view path(addr.sun_path, path_len);
  if (!path.empty() && path[0] == '\0') {
    path.remove_prefix(1);
    while (!path.empty() && path.back() == '\0') {
      path.remove_suffix(1);
    }
    return SanitizeForLog(path, kSunPathBytes);
  }
  const size_t nul = path.find('\0');
  return SanitizeForLog(path.substr(0, nul), kSunPathBytes);
}

bool IpcAddress::operator==(const IpcAddress& other) const {
  return len == other.len && addr.sun_family == other.addr.sun_family &&
         (len <= kPathOffset ||
          std::memcmp(addr.sun_path, other.addr.sun_path, len - kPathOffset) == 0);
}

StatusOr<IpcAddress> MakeIpcAddress(std::string_view name, std::string_view socket_dir) {
  IpcAddress out;
  out.addr.sun_family = AF_UNIX;
  if (socket_dir.empty()) {
    // "\0" + name + "\0": Kineto counts the trailing NUL in the length, so we must as well or
    // the names differ.
    if (name.empty()) {
      out.len = sizeof(sa_family_t);  // Autobind.
      return out;
    }
    if (name.size() + 2 > kSunPathBytes) {
      return InvalidArgumentError(fmt::format("ipc name of {} bytes is too long", name.size()));
    }
    std::memcpy(out.addr.sun_path + 1, name.data(), name.size());
    out.len = static_cast<socklen_t>(kPathOffset + name.size() + 2);
    return out;
  }
  std::string path = JoinPath(socket_dir, name);
  if (path.size() + 1 > kSunPathBytes) {
    return InvalidArgumentError("ipc socket path is too long: " + path);
  }
  std::memcpy(out.addr.sun_path, path.data(), path.size());
  out.len = static_cast<socklen_t>(kPathOffset + path.size() + 1);
  return out;
}

StatusOr<std::unique_ptr<IpcEndpoint>> IpcEndpoint::Bind(const IpcEndpointOptions& options) {
  std::unique_ptr<IpcEndpoint> ep(new IpcEndpoint());
  ep->options_ = options;
  VIGIL_ASSIGN_OR_RETURN(ep->address_, MakeIpcAddress(options.name, options.socket_dir));
  ep->fd_.Reset(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!ep->fd_.valid()) {
    return ErrnoStatus(errno, "socket(AF_UNIX, SOCK_DGRAM)");
  }
  const int one = 1;
  if (options.pass_credentials &&
      setsockopt(ep->fd_.get(), SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0) {
    return ErrnoStatus(errno, "setsockopt(SO_PASSCRED)");
  }
  if (options.receive_buffer_bytes > 0) {
    // Best effort: the kernel caps it at net.core.rmem_max.
    (void)setsockopt(ep->fd_.get(), SOL_SOCKET, SO_RCVBUF, &options.receive_buffer_bytes,
                     sizeof(options.receive_buffer_bytes));
  }
  if (!options.socket_dir.empty()) {
    ep->unlink_path_ = JoinPath(options.socket_dir, options.name);
    unlink(ep->unlink_path_.c_str());  // A stale socket from a previous run.
  }
  if (bind(ep->fd_.get(), reinterpret_cast<const sockaddr*>(&ep->address_.addr),
           ep->address_.len) != 0) {
    ep->unlink_path_.clear();
    return ErrnoStatus(errno, "bind ipc endpoint " + ep->address_.DisplayName());
  }
  if (!ep->unlink_path_.empty()) {
    chmod(ep->unlink_path_.c_str(), 0666);  // Processes of every user may talk to the daemon.
  }
  if (options.name.empty()) {
    // Learn the autobound name so the peer's replies can be addressed.
    ep->address_.len = sizeof(ep->address_.addr);
    if (getsockname(ep->fd_.get(), reinterpret_cast<sockaddr*>(&ep->address_.addr),
                    &ep->address_.len) != 0) {
      return ErrnoStatus(errno, "getsockname");
    }
  }
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    return ErrnoStatus(errno, "pipe2");
  }
  ep->stop_read_.Reset(pipe_fds[0]);
  ep->stop_write_.Reset(pipe_fds[1]);
  return ep;
}

IpcEndpoint::~IpcEndpoint() {
  Stop();
  if (!unlink_path_.empty()) {
    unlink(unlink_path_.c_str());
  }
}

Status IpcEndpoint::SendTo(const IpcAddress& to, std::string_view bytes) {
  ssize_t n = sendto(fd_.get(), bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                     reinterpret_cast<const sockaddr*>(&to.addr), to.len);
  if (n == static_cast<ssize_t>(bytes.size())) {
    return OkStatus();
  }
  if (n >= 0) {
    return InternalError("short datagram send to " + to.DisplayName());
  }
  const int err = errno;
  if (err == EAGAIN || err == EWOULDBLOCK || err == ECONNREFUSED || err == ENOBUFS) {
    return UnavailableError(fmt::format("send to {}: {}", to.DisplayName(), strerrordesc_np(err)));
  }
  return ErrnoStatus(err, "send to " + to.DisplayName());
}

bool IpcEndpoint::ReceiveOne(ReceivedDatagram* out, Status* status) {
  out->bytes.resize(options_.max_datagram);
  iovec iov{out->bytes.data(), out->bytes.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
  msghdr msg{};
  msg.msg_name = &out->from.addr;
  msg.msg_namelen = sizeof(out->from.addr);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  // MSG_TRUNC makes recvmsg return the datagram's real length even when it did not fit.
  ssize_t n = recvmsg(fd_.get(), &msg, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      *status = OkStatus();
      return false;
    }
    *status = ErrnoStatus(errno, "recvmsg on ipc endpoint");
    return false;
  }
  out->from.len = msg.msg_namelen;
  out->full_size = static_cast<size_t>(n);
  out->truncated = (msg.msg_flags & MSG_TRUNC) != 0 || out->full_size > options_.max_datagram;
  out->bytes.resize(std::min(out->full_size, options_.max_datagram));
  out->cred = PeerCredentials{};
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
        c->cmsg_len >= CMSG_LEN(sizeof(ucred))) {
      ucred cred;
      std::memcpy(&cred, CMSG_DATA(c), sizeof(cred));
      out->cred = PeerCredentials{static_cast<int>(cred.pid), static_cast<int>(cred.uid),
                                  static_cast<int>(cred.gid)};
    } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      // Nobody should pass us descriptors; close them so they cannot leak.
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        close(fd);
      }
    }
  }
  *status = OkStatus();
  return true;
}

StatusOr<ReceivedDatagram> IpcEndpoint::Receive(int timeout_ms) {
  pollfd pfd{fd_.get(), POLLIN, 0};
  int rc = poll(&pfd, 1, timeout_ms);
  if (rc < 0) {
    return ErrnoStatus(errno, "poll on ipc endpoint");
  }
  if (rc == 0) {
    return DeadlineExceededError("no ipc datagram within the timeout");
  }
  ReceivedDatagram out;
  Status status;
  if (!ReceiveOne(&out, &status)) {
    if (!status.ok()) {
      return status;
    }
    return DeadlineExceededError("no ipc datagram within the timeout");
  }
  return out;
}

Status IpcEndpoint::Start(Handler handler) {
  if (running_.exchange(true)) {
    return FailedPreconditionError("ipc endpoint already started");
  }
  handler_ = std::move(handler);
  thread_ = std::thread([this] { Loop(); });
  return OkStatus();
}

void IpcEndpoint::Stop() {
  if (!running_.exchange(false)) {
    return;
  }
  const char byte = 1;
  ssize_t ignored = write(stop_write_.get(), &byte, 1);
  (void)ignored;
  if (thread_.joinable()) {
    thread_.join();
  }
}

void IpcEndpoint::Loop() {
  ReceivedDatagram datagram;
  while (true) {
    pollfd fds[2] = {{fd_.get(), POLLIN, 0}, {stop_read_.get(), POLLIN, 0}};
    int rc = poll(fds, 2, -1);
    if (rc < 0) {
      if (errno == EINTR) {
        continue;
      }
      VIGIL_LOG_ERROR("ipc receive loop: poll failed: errno={}", errno);
      return;
    }
    if (fds[1].revents != 0) {
      return;
    }
    // Drain everything that is queued before polling again.
    for (int i = 0; i < 4096; ++i) {
      Status status;
      if (!ReceiveOne(&datagram, &status)) {
        if (!status.ok()) {
          VIGIL_LOG_EVERY_N_SEC(WARN, 60, "ipc receive failed: err={}", status.message());
        }
        break;
      }
      handler_(datagram);
    }
  }
}

}  // namespace vigil
