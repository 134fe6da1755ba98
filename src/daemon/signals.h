// SPDX-License-Identifier: Apache-2.0
// Signal handling without work in a handler: SIGTERM, SIGINT and SIGHUP are blocked in every
// thread and read from a signalfd by one dedicated thread, which calls the callbacks there.
// SIGPIPE is ignored (a client that hangs up must not kill the daemon). Construct it before any
// other thread starts, so every later thread inherits the blocked mask.
#pragma once

#include <functional>
#include <thread>

#include "base/file_util.h"
#include "base/status.h"

namespace vigil::daemon {

class SignalWatcher {
 public:
  SignalWatcher();
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  // `on_stop(signo)` for SIGTERM/SIGINT, `on_reload()` for SIGHUP, both on the watcher's thread.
  Status Start(std::function<void(int signo)> on_stop, std::function<void()> on_reload);
  void Stop();

 private:
  ScopedFd signal_fd_;
  ScopedFd wake_fd_;  // eventfd that ends the thread.
  std::thread thread_;
};

}  // namespace vigil::daemon
