// SPDX-License-Identifier: Apache-2.0
#include "daemon/seccomp_filter.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace vigil::daemon {
namespace {

struct ChildResult {
  int status = 0;
  std::string stderr_text;
};

// Runs `body` in a forked child under the filter, its stderr captured: the filter cannot be
// removed once installed, so the test process itself never installs it.
ChildResult RunFiltered(const std::function<int()>& body) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    if (Status s = InstallSeccompFilter(); !s.ok()) {
      fprintf(stderr, "install: %s\n", s.ToString().c_str());
      _exit(90);
    }
    _exit(body());
  }
  close(fds[1]);
  ChildResult result;
  char buf[512];
  ssize_t n = 0;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) {
    result.stderr_text.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  waitpid(pid, &result.status, 0);
  return result;
}

TEST(SeccompFilterTest, WhatTheDaemonDoesStillWorks) {
  ChildResult r = RunFiltered([] {
    std::thread worker([] {});  // clone with CLONE_THREAD (clone3 answers ENOSYS first).
    worker.join();
    const int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    char buf[64];
    const bool read_ok = fd >= 0 && read(fd, buf, sizeof(buf)) > 0;
    close(fd);
    const int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    return read_ok && sock >= 0 ? 0 : 1;
  });

  ASSERT_TRUE(WIFEXITED(r.status)) << r.stderr_text;
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.stderr_text;
}

TEST(SeccompFilterTest, ReadingTheClockStateIsAllowed) {
  ChildResult r = RunFiltered([] {
    struct timex tx {};  // modes 0: read only, as the clock_time collector calls it.
    return adjtimex(&tx) >= 0 ? 0 : 1;
  });

  ASSERT_TRUE(WIFEXITED(r.status)) << r.stderr_text;
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.stderr_text;
}

TEST(SeccompFilterTest, MountIsRefusedByKillingTheProcessWithALineNamingIt) {
  ChildResult r = RunFiltered([] {
    mount("none", "/mnt", "tmpfs", 0, nullptr);
    return 0;  // Not reached.
  });

  ASSERT_TRUE(WIFSIGNALED(r.status)) << r.stderr_text;
  EXPECT_EQ(WTERMSIG(r.status), SIGSYS);
  EXPECT_NE(r.stderr_text.find("vigild: seccomp: system call mount ("), std::string::npos)
      << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("is not on the allow-list"), std::string::npos) << r.stderr_text;
}

TEST(SeccompFilterTest, SetuidAndRawSocketsAreRefused) {
  ChildResult setuid_child = RunFiltered([] { return setuid(0) == 0 ? 0 : 2; });
  ChildResult packet_child =
      RunFiltered([] { return socket(AF_PACKET, SOCK_RAW, 0) >= 0 ? 0 : 2; });

  ASSERT_TRUE(WIFSIGNALED(setuid_child.status)) << setuid_child.stderr_text;
  EXPECT_NE(setuid_child.stderr_text.find("system call setuid"), std::string::npos)
      << setuid_child.stderr_text;
  ASSERT_TRUE(WIFSIGNALED(packet_child.status)) << packet_child.stderr_text;
  EXPECT_NE(packet_child.stderr_text.find("system call socket"), std::string::npos)
      << packet_child.stderr_text;
}

TEST(SeccompFilterTest, TheAllowListHasNoCallThatEscapesTheProcess) {
  for (const char* name : SeccompAllowList()) {
    const std::string n = name;
    EXPECT_TRUE(n != "execve" && n != "ptrace" && n != "mount" && n != "setuid" && n != "capset" &&
                n != "init_module" && n != "unshare" && n != "setns" && n != "bpf" &&
                n != "process_vm_writev")
        << n;
  }
}

}  // namespace
}  // namespace vigil::daemon
