// SPDX-License-Identifier: Apache-2.0
#include "daemon/signals.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <utility>

namespace vigil::daemon {
namespace {

sigset_t WatchedSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

SignalWatcher::SignalWatcher() {
  signal(SIGPIPE, SIG_IGN);
  sigset_t set = WatchedSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

SignalWatcher::~SignalWatcher() { Stop(); }

Status SignalWatcher::Start(std::function<void(int)> on_stop, std::function<void()> on_reload) {
  sigset_t set = WatchedSignals();
  signal_fd_.Reset(signalfd(-1, &set, SFD_CLOEXEC));
  if (!signal_fd_.valid()) {
    return ErrnoStatus(errno, "signalfd");
  }
  wake_fd_.Reset(eventfd(0, EFD_CLOEXEC));
  if (!wake_fd_.valid()) {
    return ErrnoStatus(errno, "eventfd");
  }
  thread_ = std::thread([this, on_stop = std::move(on_stop), on_reload = std::move(on_reload)] {
    while (true) {
      pollfd fds[2] = {{signal_fd_.get(), POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
      if (poll(fds, 2, -1) < 0) {
        if (errno == EINTR) {
          continue;
        }
        return;
      }
      if (fds[1].revents != 0) {
        return;
      }
      signalfd_siginfo info{};
      if (read(signal_fd_.get(), &info, sizeof(info)) != sizeof(info)) {
        continue;
      }
      if (info.ssi_signo == SIGHUP) {
        on_reload();
      } else {
        on_stop(static_cast<int>(info.ssi_signo));
      }
    }
  });
  return OkStatus();
}

void SignalWatcher::Stop() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_.get(), &one, sizeof(one));
    thread_.join();
  }
}

}  // namespace vigil::daemon
