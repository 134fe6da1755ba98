// SPDX-License-Identifier: Apache-2.0
#include "vigild_process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include <httplib.h>

#include "base/file_util.h"
#include "base/time_util.h"

namespace vigil::testing {
namespace {

std::string VigildPath() { return std::string(VIGIL_BIN_DIR) + "/vigild"; }

std::string MakeTempDir() {
  char templ[] = "/tmp/vd-XXXXXX";
  const char* dir = mkdtemp(templ);
  return dir ? std::string(dir) : std::string();
}

pid_t SpawnWithOutput(const std::vector<std::string>& args, const std::string& out_path,
                      const std::string& err_path) {
  const pid_t pid = fork();
  if (pid != 0) {
    return pid;
  }
  const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out >= 0) {
    dup2(out, STDOUT_FILENO);
  }
  if (err >= 0) {
    dup2(err, STDERR_FILENO);
  }
  std::vector<char*> argv;
  for (const std::string& a : args) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  _exit(127);
}

// Polls waitpid until the child exits or the deadline passes.
std::optional<int> Reap(pid_t pid, double timeout_s) {
  const int64_t deadline = MonotonicNanos() + static_cast<int64_t>(timeout_s * 1e9);
  while (true) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (r < 0 || MonotonicNanos() > deadline) {
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

int FreeLoopbackPort() {
  // The kernel may hand a just-released port out again, so a port is never given twice by this
  // process (tests that start many daemons would otherwise collide with themselves).
  static std::set<int> given;
  for (int attempt = 0; attempt < 64; ++attempt) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    int port = 0;
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port = ntohs(addr.sin_port);
    }
    close(fd);
    if (port != 0 && given.insert(port).second) {
      return port;
    }
  }
  return 0;
}

VigildProcess::VigildProcess()
    : dir_(MakeTempDir()),
      unix_socket_(dir_ + "/v.sock"),
      http_port_(FreeLoopbackPort()),
      rpc_port_(FreeLoopbackPort()) {}

VigildProcess::~VigildProcess() {
  if (pid_ > 0 && !exit_status_) {
    kill(pid_, SIGKILL);
    static_cast<void>(Reap(pid_, 10));
  }
  const std::string cmd = "rm -rf '" + dir_ + "'";
  if (system(cmd.c_str()) != 0) {
    fprintf(stderr, "could not remove %s\n", dir_.c_str());
  }
}

bool VigildProcess::Spawn(const std::vector<std::string>& extra_args) {
  std::vector<std::string> args = {VigildPath(), "--http-listen",
                                   "127.0.0.1:" + std::to_string(http_port_), "--rpc-listen",
                                   "127.0.0.1:" + std::to_string(rpc_port_), "--unix-socket",
                                   unix_socket_, "--trace-root", dir_ + "/traces",
                                   // Own IPC name: tests run in parallel on one host.
                                   "--ipc-name", "vigil-test-" + std::to_string(http_port_)};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  pid_ = SpawnWithOutput(args, dir_ + "/stdout", dir_ + "/stderr");
  return pid_ > 0;
}

bool VigildProcess::running() {
  if (exit_status_) {
    return false;
  }
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return false;
  }
  return true;
}

bool VigildProcess::WaitHealthy(double timeout_s) {
  const int64_t deadline = MonotonicNanos() + static_cast<int64_t>(timeout_s * 1e9);
  while (MonotonicNanos() < deadline) {
    if (!running()) {
      return false;
    }
    if (Get("/healthz").status == 200) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

void VigildProcess::Signal(int signo) {
  if (pid_ > 0 && !exit_status_) {
    kill(pid_, signo);
  }
}

std::optional<int> VigildProcess::Wait(double timeout_s) {
  if (!exit_status_) {
    exit_status_ = Reap(pid_, timeout_s);
  }
  return exit_status_;
}

HttpReply VigildProcess::Get(const std::string& path) const {
  httplib::Client client("127.0.0.1", http_port_);
  client.set_connection_timeout(1, 0);
  client.set_read_timeout(10, 0);
  auto res = client.Get(path.c_str());
  HttpReply reply;
  if (res) {
    reply.status = res->status;
    reply.content_type = res->get_header_value("Content-Type");
    reply.body = res->body;
  }
  return reply;
}

std::string VigildProcess::Log() const { return ReadSmallFile(dir_ + "/stderr").value_or(""); }
std::string VigildProcess::Stdout() const { return ReadSmallFile(dir_ + "/stdout").value_or(""); }

int RunVigilCli(const std::string& args, std::string* out) {
  const std::string cmd = std::string(VIGIL_BIN_DIR) + "/vigil " + args + " 2>&1";
  out->clear();
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) {
    return -1;
  }
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) {
    out->append(buf, n);
  }
  const int raw = pclose(pipe);
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

int RunVigildToCompletion(const std::vector<std::string>& args, std::string* out, std::string* err,
                          double timeout_s) {
  const std::string dir = MakeTempDir();
  std::vector<std::string> argv = {VigildPath()};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = SpawnWithOutput(argv, dir + "/stdout", dir + "/stderr");
  std::optional<int> status = Reap(pid, timeout_s);
  if (!status) {
    kill(pid, SIGKILL);
    static_cast<void>(Reap(pid, 10));
  }
  *out = ReadSmallFile(dir + "/stdout").value_or("");
  *err = ReadSmallFile(dir + "/stderr").value_or("");
  const std::string cmd = "rm -rf '" + dir + "'";
  if (system(cmd.c_str()) != 0) {
    fprintf(stderr, "could not remove %s\n", dir.c_str());
  }
  return status.value_or(-1);
}

}  // namespace vigil::testing
