// SPDX-License-Identifier: Apache-2.0
#include "kineto_spec_client.h"

#include <poll.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <fstream>
#include <sstream>

namespace vigil::testing_util {
namespace {

struct Metadata {  // As in Kineto's FabricManager.h.
  size_t size = 0;
  char type[32] = "";
};
static_assert(sizeof(Metadata) == 40);

socklen_t FillAddress(const std::string& name, const std::string& dir, sockaddr_un* addr) {
  std::memset(addr, 0, sizeof(*addr));
  addr->sun_family = AF_UNIX;
  if (dir.empty()) {
    std::memcpy(addr->sun_path + 1, name.data(), name.size());
    return static_cast<socklen_t>(sizeof(sa_family_t) + name.size() + 2);
  }
  const std::string path = dir + "/" + name;
  std::memcpy(addr->sun_path, path.data(), path.size());
  return static_cast<socklen_t>(sizeof(sa_family_t) + path.size() + 1);
}

}  // namespace

KinetoSpecClient::KinetoSpecClient(const std::string& name, const std::string& daemon_name,
                                   const std::string& socket_dir) {
  fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un self;
  socklen_t len = FillAddress(name, socket_dir, &self);
  if (!socket_dir.empty()) {
    unlink_path_ = socket_dir + "/" + name;
    unlink(unlink_path_.c_str());
  }
  if (fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&self), len) != 0) {
    close(fd_);
    fd_ = -1;
  }
  daemon_len_ = FillAddress(daemon_name, socket_dir, &daemon_);
}

KinetoSpecClient::~KinetoSpecClient() {
  if (fd_ >= 0) {
    close(fd_);
  }
  if (!unlink_path_.empty()) {
    unlink(unlink_path_.c_str());
  }
}

bool KinetoSpecClient::Send(const std::string& type, const std::string& payload, int flags) {
  Metadata md;
  md.size = payload.size();
  std::memcpy(md.type, type.c_str(), type.size() + 1);
  iovec iov[2] = {{&md, sizeof(md)}, {const_cast<char*>(payload.data()), payload.size()}};
  msghdr msg{};
  msg.msg_name = &daemon_;
  msg.msg_namelen = daemon_len_;
  msg.msg_iov = iov;
  msg.msg_iovlen = 2;
  return sendmsg(fd_, &msg, flags) == static_cast<ssize_t>(sizeof(md) + payload.size());
}

bool KinetoSpecClient::SendRaw(const std::string& bytes) {
  return sendto(fd_, bytes.data(), bytes.size(), MSG_DONTWAIT,
                reinterpret_cast<sockaddr*>(&daemon_),
                daemon_len_) == static_cast<ssize_t>(bytes.size());
}

std::optional<std::pair<std::string, std::string>> KinetoSpecClient::Receive(int timeout_ms) {
  pollfd pfd{fd_, POLLIN, 0};
  if (poll(&pfd, 1, timeout_ms) <= 0) {
    return std::nullopt;
  }
  Metadata md;
  if (recv(fd_, &md, sizeof(md), MSG_PEEK) != static_cast<ssize_t>(sizeof(md))) {
    return std::nullopt;
  }
  std::string payload(md.size, '\0');
  Metadata again;
  iovec iov[2] = {{&again, sizeof(again)}, {payload.data(), payload.size()}};
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = 2;
  if (recvmsg(fd_, &msg, 0) != static_cast<ssize_t>(sizeof(md) + md.size)) {
    return std::nullopt;
  }
  return std::make_pair(std::string(md.type, strnlen(md.type, sizeof(md.type))), payload);
}

std::optional<int32_t> KinetoSpecClient::RegisterContext(int32_t gpu, int32_t pid, int64_t job_id) {
  struct {
    int32_t gpu;
    int32_t pid;
    int64_t jobid;
  } ctxt{gpu, pid, job_id};
  static_assert(sizeof(ctxt) == 16);
  if (!Send("ctxt", std::string(reinterpret_cast<const char*>(&ctxt), sizeof(ctxt)))) {
    return std::nullopt;
  }
  auto reply = Receive(2000);
  if (!reply || reply->first != "ctxt" || reply->second.size() != 4) {
    return std::nullopt;
  }
  int32_t count;
  std::memcpy(&count, reply->second.data(), 4);
  return count;
}

namespace {

std::string RequestPayload(int32_t type, int64_t job_id, const std::vector<int32_t>& pids) {
  std::string payload(16 + 4 * pids.size(), '\0');
  const int32_t n = static_cast<int32_t>(pids.size());
  std::memcpy(payload.data(), &type, 4);
  std::memcpy(payload.data() + 4, &n, 4);
  std::memcpy(payload.data() + 8, &job_id, 8);
  std::memcpy(payload.data() + 16, pids.data(), 4 * pids.size());
  return payload;
}

}  // namespace

bool KinetoSpecClient::SendPoll(int32_t type, int64_t job_id, const std::vector<int32_t>& pids) {
  return Send("req", RequestPayload(type, job_id, pids), /*flags=*/0);
}

std::optional<std::string> KinetoSpecClient::Poll(int32_t type, int64_t job_id,
                                                  const std::vector<int32_t>& pids) {
  if (!Send("req", RequestPayload(type, job_id, pids))) {
    return std::nullopt;
  }
  auto reply = Receive(2000);
  if (!reply || reply->first != "req") {
    return std::nullopt;
  }
  return reply->second;
}

std::optional<std::string> KinetoSpecClient::PollAsKineto(int32_t type, int64_t job_id,
                                                          const std::vector<int32_t>& pids,
                                                          int tries, int sleep_us) {
  if (!Send("req", RequestPayload(type, job_id, pids))) {
    return std::nullopt;
  }
  // FabricManager::poll_recv(tries, sleep_us): a non-blocking receive, then a sleep, `tries` times.
  for (int i = 0; i < tries; ++i) {
    auto reply = Receive(0);
    if (reply) {
      return reply->first == "req" ? std::optional<std::string>(reply->second) : std::nullopt;
    }
    usleep(static_cast<useconds_t>(sleep_us));
  }
  return std::nullopt;
}

std::vector<int32_t> OwnAncestorPids() {
  std::vector<int32_t> pids;
  int32_t pid = getpid();
  while (pid > 0 && pids.size() < 32) {
    pids.push_back(pid);
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    int32_t ppid = 0;
    while (std::getline(status, line)) {
      if (line.rfind("PPid:", 0) == 0) {
        ppid = std::stoi(line.substr(5));
      }
    }
    pid = ppid;
  }
  return pids;
}

}  // namespace vigil::testing_util
