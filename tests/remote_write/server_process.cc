// SPDX-License-Identifier: Apache-2.0
#include "server_process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <httplib.h>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/time_util.h"

namespace vigil::testing {
namespace {

// Polls waitpid until the child exits or the deadline passes; true when it was reaped.
bool Reap(pid_t pid, double timeout_s) {
  const int64_t deadline = MonotonicNanos() + static_cast<int64_t>(timeout_s * 1e9);
  while (true) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || r < 0) {
      return true;
    }
    if (MonotonicNanos() > deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

std::string FindOnPath(const std::string& name) {
  const char* path = getenv("PATH");
  for (std::string_view dir : Split(path ? path : "/usr/bin:/bin", ':')) {
    const std::string candidate = JoinPath(dir, name);
    if (!dir.empty() && access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

HttpReply HttpGet(int port, const std::string& path_and_query, const std::string& authorization) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(std::chrono::seconds(2));
  client.set_read_timeout(std::chrono::seconds(10));
  httplib::Headers headers;
  if (!authorization.empty()) headers.emplace("Authorization", authorization);
  httplib::Result res = client.Get(path_and_query, headers);
  if (!res) {
    return {};
  }
  return {res->status, res->body};
}

std::string UrlEncode(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

ServerProcess::ServerProcess(std::vector<std::string> args, int port, std::string ready_path,
                             std::string log_path)
    : args_(std::move(args)),
      port_(port),
      ready_path_(std::move(ready_path)),
      log_path_(std::move(log_path)) {}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    Reap(pid_, 10);
  }
}

bool ServerProcess::Start(double timeout_s) {
  const pid_t pid = fork();
  if (pid < 0) {
    return false;
  }
  if (pid == 0) {
    const int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log >= 0) {
      dup2(log, STDOUT_FILENO);
      dup2(log, STDERR_FILENO);
    }
    std::vector<char*> argv;
    for (const std::string& a : args_) {
      argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  pid_ = pid;
  const int64_t deadline = MonotonicNanos() + static_cast<int64_t>(timeout_s * 1e9);
  while (MonotonicNanos() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;  // Exited before it was ready.
      return false;
    }
    if (HttpGet(port_, ready_path_).status == 200) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

void ServerProcess::Stop(double timeout_s) {
  if (pid_ <= 0) {
    return;
  }
  kill(pid_, SIGTERM);
  if (!Reap(pid_, timeout_s)) {
    kill(pid_, SIGKILL);
    Reap(pid_, 10);
  }
  pid_ = -1;
}

std::string ServerProcess::Log() const { return ReadSmallFile(log_path_).value_or(""); }

}  // namespace vigil::testing
