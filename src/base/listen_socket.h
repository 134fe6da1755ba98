// SPDX-License-Identifier: Apache-2.0
// Options for the listening sockets of our cpp-httplib servers (vigild's /metrics and API,
// vigil-fleet). httplib's defaults add SO_REUSEPORT, which lets a second server take the same port
// silently instead of failing to start, and listen with a compiled-in backlog of 5, which drops
// connections when hundreds of daemons push at once. Owner: base. Thread-safe after Start.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <functional>
#include <memory>

namespace vigil {

class ListenSocket {
 public:
  // For httplib's set_socket_options: SO_REUSEADDR only, and remembers the socket.
  std::function<void(int)> Options() {
    return [fd = fd_](int sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      fd->store(sock);
    };
  }
  // After the bind: listen() again on the socket, which takes the new backlog.
  bool RaiseBacklog(int backlog = 1024) const {
    const int sock = fd_->load();
    return sock >= 0 && ::listen(sock, backlog) == 0;
  }

 private:
  std::shared_ptr<std::atomic<int>> fd_ = std::make_shared<std::atomic<int>>(-1);
};

}  // namespace vigil
