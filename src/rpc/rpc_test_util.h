// SPDX-License-Identifier: Apache-2.0
// Helpers of the RPC server tests: raw socket reads and writes with deadlines, the process's
// RSS, a child acting as uid 65534, and a fixture with a dispatcher of test methods and a
// server on loopback and a unix socket in a fresh directory. Test-only; not thread-safe.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/time_util.h"
#include "base/wait_for.h"
#include "rpc/framing.h"
#include "rpc/net_util.h"
#include "rpc/rpc_client.h"
#include "rpc/rpc_server.h"

namespace vigil::rpc_test {

constexpr int64_t kSecond = kNanosPerSecond;

// Reads until `want` bytes arrived, EOF, or 5 s passed.
inline std::string ReadBytes(int fd, size_t want) {
  std::string out;
  const int64_t deadline = MonotonicNanos() + 5 * kSecond;
  while (out.size() < want && MonotonicNanos() < deadline) {
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, 100) <= 0) {
      continue;
    }
    char buf[4096];
    const ssize_t n = recv(fd, buf, std::min(sizeof(buf), want - out.size()), 0);
    if (n <= 0) {
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// Reads one framed reply; "" when the connection ended first.
inline std::string ReadFrame(int fd) {
  std::string header = ReadBytes(fd, 4);
  if (header.size() < 4) {
    return "";
  }
  return ReadBytes(fd, static_cast<size_t>(DecodeFrameLength(header.data())));
}

// True when the peer closes within 5 s (EOF or reset).
inline bool WaitForClose(int fd) {
  const int64_t deadline = MonotonicNanos() + 5 * kSecond;
  while (MonotonicNanos() < deadline) {
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, 100) > 0) {
      char c;
      if (recv(fd, &c, 1, 0) <= 0) {
        return true;
      }
    }
  }
  return false;
}

inline void SendAll(int fd, const std::string& bytes) {
  ASSERT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
}

inline long RssKib() {
  std::string statm = ReadSmallFile("/proc/self/statm").value_or("0 0");
  long pages = 0, rss = 0;
  std::sscanf(statm.c_str(), "%ld %ld", &pages, &rss);
  return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

class RpcServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/vgl-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    dispatcher_.Register("getStatus", [](const nlohmann::json&, const CallerInfo&) {
      return nlohmann::json{{"status", 1}};
    });
    dispatcher_.Register("echo", [](const nlohmann::json& req, const CallerInfo&) {
      return nlohmann::json{{"echo", req.value("x", -1)}};
    });
    dispatcher_.Register("whoami", [this](const nlohmann::json& req, const CallerInfo& caller) {
      std::lock_guard<std::mutex> lock(mu_);
      last_caller_ = caller;
      saw_token_field_ = req.contains("token");
      return nlohmann::json{{"authenticated", caller.authenticated}};
    });
    dispatcher_.Register("big", [](const nlohmann::json& req, const CallerInfo&) {
      return nlohmann::json{{"data", std::string(req.value("n", 0), 'z')}};
    });
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  RpcServerOptions Options() {
    RpcServerOptions o;
    o.tcp_listen = "127.0.0.1:0";
    o.unix_path = dir_ + "/s.sock";
    return o;
  }
  void StartServer(RpcServerOptions o) {
    server_ = std::make_unique<RpcServer>(std::move(o), &dispatcher_);
    Status st = server_->Start();
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  std::string TcpTarget() const { return "127.0.0.1:" + std::to_string(server_->tcp_port()); }
  std::string UnixTarget() const { return "unix:" + dir_ + "/s.sock"; }
  sockaddr_in TcpAddress() const {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(server_->tcp_port()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
  }
  sockaddr_un UnixAddress() const {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", (dir_ + "/s.sock").c_str());
    return a;
  }
  // Time for a fresh connection's getStatus on `target`; -1 when it failed or was refused.
  int64_t TimedGetStatus(const std::string& target) {
    const int64_t start = MonotonicNanos();
    auto client = RpcClient::Connect(target, kSecond);
    if (!client.ok()) {
      return -1;
    }
    auto reply = client->Call({{"fn", "getStatus"}}, 2 * kSecond);
    if (!reply.ok() || reply->value("status", 0) != 1) {
      return -1;
    }
    return MonotonicNanos() - start;
  }
  ScopedFd RawConnect() { return ConnectTo(TcpTarget(), 2 * kSecond).value(); }

  std::string dir_;
  RpcDispatcher dispatcher_;
  std::unique_ptr<RpcServer> server_;
  std::mutex mu_;
  CallerInfo last_caller_;
  bool saw_token_field_ = false;
};

}  // namespace vigil::rpc_test
