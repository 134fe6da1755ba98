// SPDX-License-Identifier: Apache-2.0
// A unix datagram socket speaking the Kineto IPC fabric's addressing: an abstract name
// ("\0dynolog\0", the trailing NUL counted in the address length, as Kineto binds it) or, when a
// socket directory is given (Kineto's $KINETO_IPC_SOCKET_DIR), the file <dir>/<name>. The daemon
// side turns on SO_PASSCRED, so every received datagram carries the sender's real pid/uid/gid
// (SCM_CREDENTIALS, translated by the kernel into the daemon's pid namespace). Sends never block
// (MSG_DONTWAIT): a reply the peer cannot take now is dropped and counted, because the receive
// path must never stall on one slow client. Start() runs a receive loop on its own thread
// (poll on the socket and a stop pipe); Stop() or the destructor ends it. Owner: ipc.
// Thread-safety: SendTo() and Receive() may be called from any thread; Start()/Stop() from one.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "base/file_util.h"
#include "base/status.h"

namespace vigil {

// A socket address as the kernel reported or will use it (sun_path may hold NULs).
struct IpcAddress {
  sockaddr_un addr{};
  socklen_t len = 0;

  // "dynolog" for "\0dynolog\0", or the path for a filesystem socket; printable.
  std::string DisplayName() const;
  bool operator==(const IpcAddress& other) const;
};

// Builds the address Kineto would use for `name`: abstract when socket_dir is empty, else
// <socket_dir>/<name>. InvalidArgument when it does not fit in sun_path.
StatusOr<IpcAddress> MakeIpcAddress(std::string_view name, std::string_view socket_dir = "");

struct PeerCredentials {
  int pid = -1;  // -1 when the datagram carried no SCM_CREDENTIALS.
  int uid = -1;
  int gid = -1;
};

struct ReceivedDatagram {
  std::string bytes;       // At most max_datagram bytes.
  bool truncated = false;  // The datagram was larger than max_datagram (bytes holds its start).
  size_t full_size = 0;    // Its real size.
  IpcAddress from;
  PeerCredentials cred;
};

struct IpcEndpointOptions {
  std::string name;        // "dynolog" for the daemon; "" autobinds an abstract name.
  std::string socket_dir;  // Empty: abstract namespace.
  size_t max_datagram = 64 * 1024 + 64;
  bool pass_credentials = true;        // SO_PASSCRED.
  int receive_buffer_bytes = 4 << 20;  // SO_RCVBUF hint (the kernel may cap it).
};

class IpcEndpoint {
 public:
  using Handler = std::function<void(const ReceivedDatagram&)>;

  static StatusOr<std::unique_ptr<IpcEndpoint>> Bind(const IpcEndpointOptions& options);
  ~IpcEndpoint();
  IpcEndpoint(const IpcEndpoint&) = delete;
  IpcEndpoint& operator=(const IpcEndpoint&) = delete;

  // Non-blocking send. Unavailable when the peer's queue is full or it is gone (the caller
  // drops the reply), NotFound when no such socket exists.
  Status SendTo(const IpcAddress& to, std::string_view bytes);
  // Waits up to timeout_ms for one datagram (for clients and tests; the daemon uses Start).
  StatusOr<ReceivedDatagram> Receive(int timeout_ms);

  // Runs `handler` for every datagram on a dedicated thread until Stop().
  Status Start(Handler handler);
  void Stop();

  const IpcAddress& address() const { return address_; }
  int fd() const { return fd_.get(); }

 private:
  IpcEndpoint() = default;
  // One recvmsg; false with *status OK when nothing was ready.
  bool ReceiveOne(ReceivedDatagram* out, Status* status);
  void Loop();

  IpcEndpointOptions options_;
  ScopedFd fd_;
  ScopedFd stop_read_;
  ScopedFd stop_write_;
  IpcAddress address_;
  std::string unlink_path_;  // Filesystem socket to remove on destruction.
  Handler handler_;
  std::thread thread_;
  std::atomic<bool> running_{false};
};

}  // namespace vigil
