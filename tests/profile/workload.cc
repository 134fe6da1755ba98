// SPDX-License-Identifier: Apache-2.0
#include "workload.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vigil::testing {
namespace {

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "workload: %s: %s\n", what, strerrordesc_np(errno));
  _exit(127);
}

void CopyFile(const std::string& from, const std::string& to) {
  const int in = open(from.c_str(), O_RDONLY | O_CLOEXEC);
  const int out = open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  if (in < 0 || out < 0) {
    Die("copy binary");
  }
  char buf[65536];
  ssize_t n = 0;
  while ((n = read(in, buf, sizeof(buf))) > 0) {
    if (write(out, buf, static_cast<size_t>(n)) != n) {
      Die("write binary");
    }
  }
  close(in);
  close(out);
}

}  // namespace

Workload::Workload(std::vector<std::string> argv, WorkloadOptions options) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return;
  }
  pid_ = fork();
  if (pid_ == 0) {
    dup2(fds[1], STDOUT_FILENO);
    if (!options.private_dir.empty()) {
      if (unshare(CLONE_NEWNS) != 0) Die("unshare");
      if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) Die("make / private");
      mkdir(options.private_dir.c_str(), 0755);
      if (mount("tmpfs", options.private_dir.c_str(), "tmpfs", 0, "size=64m") != 0) Die("mount");
      const std::string base = argv[0].substr(argv[0].rfind('/') + 1);
      const std::string copy = options.private_dir + "/" + base;
      CopyFile(argv[0], copy);
      argv[0] = copy;
    }
    for (const std::string& e : options.env) {
      putenv(strdup(e.c_str()));
    }
    std::vector<char*> args;
    for (std::string& a : argv) {
      args.push_back(a.data());
    }
    args.push_back(nullptr);
    execv(args[0], args.data());
    Die("exec");
  }
  close(fds[1]);
  out_fd_ = fds[0];
}

Workload::~Workload() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (out_fd_ >= 0) {
    close(out_fd_);
  }
}

bool Workload::WaitReady(double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (output_.find("ready") == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0 || out_fd_ < 0) {
      return false;
    }
    pollfd p{out_fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) {
      return false;
    }
    char buf[4096];
    const ssize_t n = read(out_fd_, buf, sizeof(buf));
    if (n <= 0) {
      return false;
    }
    output_.append(buf, static_cast<size_t>(n));
  }
  return true;
}

}  // namespace vigil::testing
