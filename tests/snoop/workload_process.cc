// SPDX-License-Identifier: Apache-2.0
#include "workload_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "base/wait_for.h"

extern char** environ;

namespace vigil::snoop::testing {
namespace {

// Child side, between fork and exec: system calls only.
bool CopyFileRaw(const char* from, const char* to) {
  int in = open(from, O_RDONLY | O_CLOEXEC);
  if (in < 0) return false;
  int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  if (out < 0) {
    close(in);
    return false;
  }
  char buf[65536];
  bool ok = true;
  while (true) {
    ssize_t n = read(in, buf, sizeof(buf));
    if (n == 0) break;
    if (n < 0 || write(out, buf, static_cast<size_t>(n)) != n) {
      ok = false;
      break;
    }
  }
  close(in);
  close(out);
  return ok;
}

}  // namespace

StatusOr<WorkloadProcess*> WorkloadProcess::Start(const WorkloadOptions& o) {
  std::vector<std::string> argv_s = {o.path};
  argv_s.insert(argv_s.end(), o.args.begin(), o.args.end());
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) {
    if (!o.private_dir.empty() && std::strncmp(*e, "LD_LIBRARY_PATH=", 16) == 0) continue;
    env_s.emplace_back(*e);
  }
  env_s.insert(env_s.end(), o.env.begin(), o.env.end());
  if (!o.private_dir.empty()) env_s.push_back("LD_LIBRARY_PATH=" + o.private_dir);
  std::vector<std::pair<std::string, std::string>> copies;
  for (const std::string& lib : o.private_libs) {
    copies.emplace_back(lib, o.private_dir + "/" + lib.substr(lib.rfind('/') + 1));
  }
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);

  int in[2];
  int out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return ErrnoStatus(errno, "pipe");
  if (pipe2(out, O_CLOEXEC) != 0) return ErrnoStatus(errno, "pipe");
  pid_t pid = fork();
  if (pid < 0) return ErrnoStatus(errno, "fork");
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    if (!o.private_dir.empty()) {
      if (unshare(CLONE_NEWNS) != 0) _exit(120);
      if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) _exit(121);
      if (mount("tmpfs", o.private_dir.c_str(), "tmpfs", 0, "size=64m") != 0) _exit(122);
      for (auto& [from, to] : copies) {
        if (!CopyFileRaw(from.c_str(), to.c_str())) _exit(123);
      }
    }
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  auto* w = new WorkloadProcess();
  w->pid_ = pid;
  w->to_child_ = in[1];
  w->from_child_ = out[0];
  StatusOr<std::string> ready = w->ReadLine();
  if (!ready.ok() || ready->rfind("ready ", 0) != 0) {
    Status s = ready.ok() ? InternalError("workload said '" + *ready + "'") : ready.status();
    delete w;
    return s;
  }
  return w;
}

WorkloadProcess::~WorkloadProcess() {
  if (!reaped_ && pid_ > 0) {
    if (Exit(10) < 0) {
      kill(pid_, SIGKILL);
      WaitChild(pid_, 10);
    }
  }
  if (to_child_ >= 0) close(to_child_);
  if (from_child_ >= 0) close(from_child_);
}

Status WorkloadProcess::Send(const std::string& line) {
  std::string data = line + "\n";
  if (write(to_child_, data.data(), data.size()) != static_cast<ssize_t>(data.size())) {
    return ErrnoStatus(errno, "writing to the workload");
  }
  return OkStatus();
}

StatusOr<std::string> WorkloadProcess::ReadLine(double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    size_t nl = buffered_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return DeadlineExceededError("no line from the workload");
    pollfd p{from_child_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    ssize_t n = read(from_child_, buf, sizeof(buf));
    if (n <= 0) return UnavailableError("the workload closed its output");
    if (buffered_.size() > (1 << 20)) return DataLossError("workload output too long");
    buffered_.append(buf, static_cast<size_t>(n));
  }
}

Status WorkloadProcess::Do(const std::string& command, double timeout_s, std::string* output) {
  if (Status s = Send(command); !s.ok()) return s;
  for (int lines = 0; lines < 1000; ++lines) {
    StatusOr<std::string> line = ReadLine(timeout_s);
    if (!line.ok()) return line.status();
    if (*line == "done") return OkStatus();
    if (output) *output += *line + "\n";
  }
  return DataLossError("no \"done\" from the workload after " + command);
}

int WorkloadProcess::Exit(double timeout_s) {
  if (reaped_) return 0;
  Send("exit").IgnoreError();
  int status = WaitChild(pid_, timeout_s);
  if (status >= 0) reaped_ = true;
  return status;
}

int WaitChild(int pid, double timeout_s) {
  int status = -1;
  bool done = WaitFor(
      [&] {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) status = st;
        return r == pid || r < 0;
      },
      timeout_s, std::chrono::milliseconds(2));
  return done ? status : -1;
}

}  // namespace vigil::snoop::testing
