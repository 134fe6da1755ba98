// SPDX-License-Identifier: Apache-2.0
#include "attribution/bounded_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/strings.h"
#include "base/time_util.h"

extern char** environ;

namespace vigil {
namespace {

// Kills the helper's process group and reaps the helper.
int KillAndReap(pid_t pid) {
  kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

std::string FindOnPath(const std::string& name) {
  if (name.empty()) {
    return "";
  }
  if (name.find('/') != std::string::npos) {
    return access(name.c_str(), X_OK) == 0 ? name : "";
  }
  const char* path = getenv("PATH");
  for (std::string_view dir : Split(path ? path : "/usr/bin:/bin", ':')) {
    if (dir.empty()) {
      continue;
    }
    std::string candidate = std::string(dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

StatusOr<BoundedCommandResult> RunBoundedCommand(const std::vector<std::string>& argv,
                                                 int64_t deadline_ns, size_t max_output_bytes) {
  if (argv.empty()) {
    return InvalidArgumentError("empty command");
  }
  const std::string program = FindOnPath(argv[0]);
  if (program.empty()) {
    return NotFoundError(argv[0] + " not found on PATH");
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return InternalError(std::string("pipe: ") + strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, program.c_str(), &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return UnavailableError("spawn " + program + ": " + strerror(rc));
  }
  BoundedCommandResult result;
  const int64_t end = MonotonicNanos() + deadline_ns;
  char buffer[4096];
  Status failure = OkStatus();
  for (;;) {
    const int64_t left = end - MonotonicNanos();
    if (left <= 0) {
      failure =
          DeadlineExceededError(program + " did not finish within " + FormatDuration(deadline_ns));
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left / 1'000'000 + 1, 1000)));
    if (ready < 0 && errno != EINTR) {
      failure = InternalError(std::string("poll: ") + strerror(errno));
      break;
    }
    if (ready <= 0) {
      continue;
    }
    const ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;  // EOF (or an error reading): the helper closed its output.
    }
    if (result.out.size() + static_cast<size_t>(n) > max_output_bytes) {
      failure = ResourceExhaustedError(program + " wrote more than " +
                                       std::to_string(max_output_bytes) + " bytes");
      break;
    }
    result.out.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (!failure.ok()) {
    KillAndReap(pid);
    return failure;
  }
  // Output closed: the helper is exiting; bound the wait for it all the same.
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      break;
    }
    if (done < 0 && errno != EINTR) {
      return InternalError(std::string("waitpid: ") + strerror(errno));
    }
    if (MonotonicNanos() >= end) {
      KillAndReap(pid);
      return DeadlineExceededError(program + " did not exit within " + FormatDuration(deadline_ns));
    }
    usleep(1000);
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace vigil
