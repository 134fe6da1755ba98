// SPDX-License-Identifier: Apache-2.0
#include "fleet_process.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <httplib.h>

namespace vigil::fleet_test {

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

FleetProcess::FleetProcess(std::string db, int port, std::vector<std::string> extra)
    : db_(std::move(db)), port_(port), extra_(std::move(extra)) {}

FleetProcess::~FleetProcess() { Kill(); }

bool FleetProcess::Start() {
  std::vector<std::string> args = {std::string(VIGIL_BIN_DIR) + "/vigil-fleet",
                                   "serve",
                                   "--listen",
                                   "127.0.0.1:" + std::to_string(port_),
                                   "--db",
                                   db_,
                                   "--log-level",
                                   "warn"};
  if (geteuid() == 0) {
    // vigil-fleet refuses root unless told. These tests write ledgers, certificates and tokens
    // as the test's user; fleet_privilege_test.cc runs the service as an unprivileged user.
    args.emplace_back("--allow-root");
  }
  args.insert(args.end(), extra_.begin(), extra_.end());
  pid_ = fork();
  if (pid_ == 0) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  httplib::Client client("127.0.0.1", port_);
  client.set_connection_timeout(std::chrono::milliseconds(200));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto res = client.Get("/healthz"); res && res->status == 200) return true;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

void FleetProcess::Kill() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
}

int RunCapture(const std::vector<std::string>& argv_in, std::string* out) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<std::string> args = argv_in;
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) out->append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace vigil::fleet_test
