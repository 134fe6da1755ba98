// SPDX-License-Identifier: Apache-2.0
#include "rpc/rpc_server.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>

#include <gtest/gtest.h>

#include "rpc/rpc_test_util.h"

namespace vigil::rpc_test {
namespace {

using std::string_literals::operator""s;

TEST_F(RpcServerTest, GetStatusByteForByte) {
  StartServer(Options());
  ScopedFd fd = RawConnect();
  SendAll(fd.get(), "\x12\x00\x00\x00{\"fn\":\"getStatus\"}"s);
  EXPECT_EQ(ReadBytes(fd.get(), 16), "\x0c\x00\x00\x00{\"status\":1}"s);
}

TEST_F(RpcServerTest, ServesManyConcurrentClients) {
  StartServer(Options());
  constexpr int kClients = 32;
  constexpr int kCalls = 20;
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&, t] {
      const std::string target = t % 2 == 0 ? TcpTarget() : "unix:" + dir_ + "/s.sock";
      auto client = RpcClient::Connect(target, 5 * kSecond);
      if (!client.ok()) {
        return;
      }
      for (int i = 0; i < kCalls; ++i) {
        auto reply = client->Call({{"fn", "echo"}, {"x", t * 1000 + i}}, 5 * kSecond);
        if (reply.ok() && (*reply)["echo"] == t * 1000 + i) {
          good.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  EXPECT_EQ(good.load(), kClients * kCalls);
  EXPECT_EQ(server_->stats().requests, static_cast<uint64_t>(kClients * kCalls));
}

TEST_F(RpcServerTest, InvalidJsonGetsErrorAndConnectionStaysUsable) {
  StartServer(Options());
  ScopedFd fd = RawConnect();
  SendAll(fd.get(), *EncodeFrame("{not json"));
  nlohmann::json reply = nlohmann::json::parse(ReadFrame(fd.get()), nullptr, false);
  ASSERT_TRUE(reply.contains("error")) << reply.dump();
  SendAll(fd.get(), *EncodeFrame(R"({"fn":"echo","x":5})"));
  EXPECT_EQ(nlohmann::json::parse(ReadFrame(fd.get()), nullptr, false)["echo"], 5);
  EXPECT_EQ(server_->stats().bad_frame, 1u);
}

TEST_F(RpcServerTest, UnknownMethodGetsErrorReply) {
  StartServer(Options());
  auto client = RpcClient::Connect(TcpTarget(), kSecond);
  ASSERT_TRUE(client.ok());
  auto reply = client->Call({{"fn", "setKinetOnDemandRequest"}}, kSecond);
  ASSERT_TRUE(reply.ok());
  EXPECT_TRUE(reply->contains("error"));
}

TEST_F(RpcServerTest, NonPositiveLengthGetsErrorThenClose) {
  StartServer(Options());
  for (const std::string& header : {"\x00\x00\x00\x00"s, "\xfe\xff\xff\xff"s}) {
    ScopedFd fd = RawConnect();
    SendAll(fd.get(), header);
    nlohmann::json reply = nlohmann::json::parse(ReadFrame(fd.get()), nullptr, false);
    EXPECT_TRUE(reply.contains("error")) << reply.dump();
    EXPECT_TRUE(WaitForClose(fd.get()));
  }
  EXPECT_EQ(server_->stats().bad_frame, 2u);
}

TEST_F(RpcServerTest, TwoGibLengthClaimIsAnsweredWithoutAllocating) {
  StartServer(Options());
  const long rss_before = RssKib();
  ScopedFd fd = RawConnect();
  SendAll(fd.get(), "\xff\xff\xff\x7f{\"fn\":"s);
  nlohmann::json reply = nlohmann::json::parse(ReadFrame(fd.get()), nullptr, false);
  ASSERT_TRUE(reply.contains("error")) << reply.dump();
  EXPECT_NE(reply["error"].get<std::string>().find("exceeds"), std::string::npos);
  EXPECT_TRUE(WaitForClose(fd.get()));
  EXPECT_LT(RssKib() - rss_before, 64 * 1024) << "server allocated for the claimed length";
  EXPECT_EQ(server_->stats().too_large, 1u);
  // The next client is served normally.
  auto client = RpcClient::Connect(TcpTarget(), kSecond);
  ASSERT_TRUE(client.ok());
  EXPECT_EQ((*client->Call({{"fn", "getStatus"}}, kSecond))["status"], 1);
}

TEST_F(RpcServerTest, SlowClientDoesNotBlockOthersAndTimesOut) {
  RpcServerOptions o = Options();
  o.read_deadline_ns = 1500 * kNanosPerMilli;
  StartServer(o);
  ScopedFd slow = RawConnect();
  SendAll(slow.get(), "\x64\x00\x00\x00{\"fn\":\"ge"s);  // Half of a 100-byte frame.
  const int64_t start = MonotonicNanos();
  {
    auto client = RpcClient::Connect(TcpTarget(), kSecond);
    ASSERT_TRUE(client.ok());
    auto reply = client->Call({{"fn", "getStatus"}}, kSecond);
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    EXPECT_EQ((*reply)["status"], 1);
    // Served long before the slow client's deadline could have freed the loop.
    EXPECT_LT(MonotonicNanos() - start, kSecond);
  }  // Closed by us, so only the slow client can time out.
  EXPECT_TRUE(WaitForClose(slow.get()));
  EXPECT_GE(MonotonicNanos() - start, kSecond) << "closed before its read deadline";
  EXPECT_EQ(server_->stats().timeout, 1u);
}

TEST_F(RpcServerTest, UnixSocketReportsPeerCredentialsAndMode) {
  StartServer(Options());
  struct stat st {};
  ASSERT_EQ(stat((dir_ + "/s.sock").c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  auto client = RpcClient::Connect("unix:" + dir_ + "/s.sock", kSecond);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  ASSERT_TRUE(client->Call({{"fn", "whoami"}}, kSecond).ok());
  std::lock_guard<std::mutex> lock(mu_);
  EXPECT_EQ(last_caller_.transport, CallerInfo::Transport::kUnix);
  EXPECT_EQ(last_caller_.pid, getpid());
  EXPECT_EQ(last_caller_.uid, static_cast<int>(geteuid()));
  EXPECT_EQ(last_caller_.gid, static_cast<int>(getegid()));
  EXPECT_TRUE(last_caller_.loopback);
}

TEST_F(RpcServerTest, ReplacesStaleSocketFileButNotALiveOne) {
  const std::string path = dir_ + "/s.sock";
  {
    // A socket file nobody listens on, as a crashed daemon leaves behind.
    ScopedFd stale(socket(AF_UNIX, SOCK_STREAM, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
    ASSERT_EQ(bind(stale.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  }
  StartServer(Options());
  RpcServer second(Options(), &dispatcher_);
  Status st = second.Start();
  EXPECT_EQ(st.code(), StatusCode::kAlreadyExists) << st.ToString();
  auto client = RpcClient::Connect("unix:" + path, kSecond);
  ASSERT_TRUE(client.ok());
  EXPECT_TRUE(client->Call({{"fn", "getStatus"}}, kSecond).ok());
}

TEST_F(RpcServerTest, RegularFileAtSocketPathIsNotDeleted) {
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/s.sock", "keep me").ok());
  RpcServer server(Options(), &dispatcher_);
  EXPECT_EQ(server.Start().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadSmallFile(dir_ + "/s.sock").value_or(""), "keep me");
}

TEST_F(RpcServerTest, StopRemovesTheSocketFile) {
  StartServer(Options());
  server_->Stop();
  EXPECT_FALSE(PathExists(dir_ + "/s.sock"));
}

TEST_F(RpcServerTest, RefusesToListenBeyondLoopbackWithoutToken) {
  RpcServerOptions o = Options();
  o.unix_path = "";
  o.tcp_listen = "0.0.0.0:0";
  RpcServer server(o, &dispatcher_);
  Status st = server.Start();
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("needs a token"), std::string::npos) << st.message();
  o.token = "s3cret";
  RpcServer with_token(o, &dispatcher_);
  EXPECT_TRUE(with_token.Start().ok());
  EXPECT_GT(with_token.tcp_port(), 0);
}

TEST_F(RpcServerTest, TokenFieldAuthenticatesAndIsHiddenFromHandlers) {
  RpcServerOptions o = Options();
  o.token = "s3cret";
  StartServer(o);
  auto client = RpcClient::Connect(TcpTarget(), kSecond);
  ASSERT_TRUE(client.ok());
  EXPECT_EQ((*client->Call({{"fn", "whoami"}, {"token", "s3cret"}}, kSecond))["authenticated"],
            true);
  {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_FALSE(saw_token_field_);
  }
  EXPECT_EQ((*client->Call({{"fn", "whoami"}, {"token", "s3cret!"}}, kSecond))["authenticated"],
            false);
  EXPECT_EQ((*client->Call({{"fn", "whoami"}}, kSecond))["authenticated"], false);
}

// A local IPv4 address that is not loopback, or "" when the host has none.
std::string NonLoopbackAddress() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    return "";
  }
  std::string found;
  for (ifaddrs* i = list; i != nullptr && found.empty(); i = i->ifa_next) {
    if (i->ifa_addr != nullptr && i->ifa_addr->sa_family == AF_INET &&
        !IsLoopbackAddress(i->ifa_addr)) {
      char text[INET_ADDRSTRLEN] = {};
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text,
                sizeof(text));
      found = text;
    }
  }
  freeifaddrs(list);
  return found;
}

TEST_F(RpcServerTest, RemoteCallerNeedsTheTokenEvenForReads) {
  const std::string address = NonLoopbackAddress();
  if (address.empty()) {
    GTEST_SKIP() << "no non-loopback IPv4 address on this host";
  }
  RpcServerOptions o = Options();
  o.tcp_listen = address + ":0";
  o.token = "s3cret";
  StartServer(o);
  auto client = RpcClient::Connect(address + ":" + std::to_string(server_->tcp_port()), kSecond);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto refused = client->Call({{"fn", "getStatus"}}, kSecond);
  ASSERT_TRUE(refused.ok());
  ASSERT_TRUE(refused->contains("error")) << refused->dump();
  EXPECT_NE((*refused)["error"].get<std::string>().find("unauthenticated"), std::string::npos);
  auto allowed = client->Call({{"fn", "getStatus"}, {"token", "s3cret"}}, kSecond);
  ASSERT_TRUE(allowed.ok());
  EXPECT_EQ((*allowed)["status"], 1);
}

TEST_F(RpcServerTest, ConnectionsBeyondTheLimitAreRefused) {
  RpcServerOptions o = Options();
  o.admission.max_tcp_connections = 2;
  StartServer(o);
  std::vector<RpcClient> held;
  for (int i = 0; i < 2; ++i) {
    auto client = RpcClient::Connect(TcpTarget(), kSecond);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE(client->Call({{"fn", "getStatus"}}, kSecond).ok());  // Now surely accepted.
    held.push_back(std::move(*client));
  }
  ScopedFd third = RawConnect();
  nlohmann::json reply = nlohmann::json::parse(ReadFrame(third.get()), nullptr, false);
  ASSERT_TRUE(reply.contains("error")) << reply.dump();
  EXPECT_TRUE(WaitForClose(third.get()));
  EXPECT_EQ(server_->stats().refused, 1u);
}

TEST_F(RpcServerTest, ClientVanishingMidReplyDoesNotKillTheServer) {
  StartServer(Options());
  for (int i = 0; i < 3; ++i) {
    ScopedFd fd = RawConnect();
    SendAll(fd.get(), *EncodeFrame(R"({"fn":"big","n":3000000})"));
  }  // Closed before reading: the server's writes hit EPIPE / reset, never SIGPIPE.
  auto client = RpcClient::Connect(TcpTarget(), kSecond);
  ASSERT_TRUE(client.ok());
  auto reply = client->Call({{"fn", "big"}, {"n", 3000000}}, 5 * kSecond);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ((*reply)["data"].get<std::string>().size(), 3000000u);
}

}  // namespace
}  // namespace vigil::rpc_test
