// SPDX-License-Identifier: Apache-2.0
#include "rpc/rpc_server.h"

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

namespace vigil {
namespace {

using std::string_literals::operator""s;

constexpr int64_t kSecond = kNanosPerSecond;

// Reads until `want` bytes arrived, EOF, or 5 s passed.
std::string ReadBytes(int fd, size_t want) {
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
std::string ReadFrame(int fd) {
  std::string header = ReadBytes(fd, 4);
  if (header.size() < 4) {
    return "";
  }
  return ReadBytes(fd, static_cast<size_t>(DecodeFrameLength(header.data())));
}

// True when the peer closes within 5 s (EOF or reset).
bool WaitForClose(int fd) {
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

void SendAll(int fd, const std::string& bytes) {
  ASSERT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
}

long RssKib() {
  std::string statm = ReadSmallFile("/proc/self/statm").value_or("0 0");
  long pages = 0, rss = 0;
  std::sscanf(statm.c_str(), "%ld %ld", &pages, &rss);
  return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

constexpr int kNobody = 65534;

// A child process that became uid 65534 (the tests run as root, as CI does) and opened
// connections to `tcp` and `unix_addr` (prepared before the fork: the child makes only
// async-signal-safe calls, the test process has threads). If `request` is set it sends it on
// its one TCP connection and waits for the reply. It holds everything until Release().
class NobodyPeer {
 public:
  NobodyPeer(const sockaddr_in& tcp, int tcp_count, const sockaddr_un& unix_addr, int unix_count,
             const std::string& request = "") {
    int ready[2], hold[2];
    if (pipe(ready) != 0 || pipe(hold) != 0) {
      return;
    }
    pid_ = fork();
    if (pid_ == 0) {
      close(ready[0]);
      close(hold[1]);
      if (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0) {
        _exit(2);
      }
      int connected = 0;
      for (int i = 0; i < tcp_count + unix_count; ++i) {
        const bool is_tcp = i < tcp_count;
        const int fd = socket(is_tcp ? AF_INET : AF_UNIX, SOCK_STREAM, 0);
        const int rc = is_tcp ? connect(fd, reinterpret_cast<const sockaddr*>(&tcp), sizeof(tcp))
                              : connect(fd, reinterpret_cast<const sockaddr*>(&unix_addr),
                                        sizeof(unix_addr));
        connected += rc == 0 ? 1 : 0;
        if (rc == 0 && i == 0 && !request.empty()) {
          char reply[4096];
          if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0 ||
              recv(fd, reply, sizeof(reply), 0) <= 0) {
            _exit(4);
          }
        }
      }
      [[maybe_unused]] ssize_t n = write(ready[1], &connected, sizeof(connected));
      char c;
      n = read(hold[0], &c, 1);
      _exit(0);
    }
    close(ready[1]);
    close(hold[0]);
    ready_fd_ = ready[0];
    hold_fd_ = hold[1];
  }
  ~NobodyPeer() { Release(); }
  // How many connections the child made (-1 when it failed or took over 60 s).
  int WaitConnected() {
    pollfd pfd{ready_fd_, POLLIN, 0};
    int connected = -1;
    if (poll(&pfd, 1, 60000) == 1 &&
        read(ready_fd_, &connected, sizeof(connected)) != sizeof(connected)) {
      connected = -1;
    }
    return connected;
  }
  void Release() {
    if (pid_ <= 0) {
      return;
    }
    close(hold_fd_);
    close(ready_fd_);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int ready_fd_ = -1;
  int hold_fd_ = -1;
};

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

// Finding: uid 65534 held all 256 slots and root's unix socket answered "server busy".
TEST_F(RpcServerTest, ConnectionFloodFromOneUidLeavesRootAndOthersAnswered) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root to run the flood as uid 65534";
  }
  RpcServerOptions o = Options();
  o.unix_mode = 0666;  // Let the unprivileged child reach the unix socket too.
  o.read_deadline_ns = 60 * kSecond;
  StartServer(o);
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  NobodyPeer flood(TcpAddress(), 300, UnixAddress(), 300);
  ASSERT_EQ(flood.WaitConnected(), 600);
  ASSERT_TRUE(WaitFor([&] { return server_->stats().connections >= 600; }, 30));
  EXPECT_LE(server_->stats().open_connections, 32u) << "one uid got more than its share";
  EXPECT_GE(server_->stats().refused, 600u - 32u);
  for (int i = 0; i < 20; ++i) {
    const int64_t unix_ns = TimedGetStatus(UnixTarget());
    const int64_t tcp_ns = TimedGetStatus(TcpTarget());
    ASSERT_GE(unix_ns, 0) << "root's unix socket was refused during the flood";
    ASSERT_GE(tcp_ns, 0) << "root's TCP connection was refused during the flood";
    EXPECT_LT(unix_ns, kSecond);
    EXPECT_LT(tcp_ns, kSecond);
  }
}

// Finding: loopback TCP callers had no identity; the server now finds their uid.
TEST_F(RpcServerTest, LoopbackTcpCallerCarriesTheUidOfItsSocket) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root to connect as uid 65534";
  }
  StartServer(Options());
  NobodyPeer peer(TcpAddress(), 1, UnixAddress(), 0, *EncodeFrame(R"({"fn":"whoami"})"));
  ASSERT_EQ(peer.WaitConnected(), 1);
  {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_EQ(last_caller_.transport, CallerInfo::Transport::kTcp);
    EXPECT_EQ(last_caller_.uid, kNobody);
    EXPECT_NE(last_caller_.peer.find("uid=65534"), std::string::npos) << last_caller_.peer;
  }
  auto client = RpcClient::Connect(TcpTarget(), kSecond);
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE(client->Call({{"fn", "whoami"}}, kSecond).ok());
  std::lock_guard<std::mutex> lock(mu_);
  EXPECT_EQ(last_caller_.uid, static_cast<int>(geteuid()));
}

// Finding: one connection pipelining 100 heavy queries stalled every other client for 9.7 s.
TEST_F(RpcServerTest, PipelinedHeavyCallsDoNotHoldUpCheapCalls) {
  constexpr int64_t kWorkNs = 300 * kNanosPerMilli;
  dispatcher_.Register(
      "heavy",
      [](const nlohmann::json&, const CallerInfo&) {
        // Stands for a full-range query: CPU-bound work of a known length.
        const int64_t until = MonotonicNanos() + kWorkNs;
        uint64_t x = 0;
        while (MonotonicNanos() < until) {
          x = x * 6364136223846793005ULL + 1;
        }
        return nlohmann::json{{"done", x != 1}};
      },
      RpcAccess::kRead, RpcCost::kHeavy);
  RpcServerOptions o = Options();
  o.worker_threads = 1;
  o.read_deadline_ns = 60 * kSecond;
  StartServer(o);
  constexpr int kPipelined = 20;
  std::string burst;
  for (int i = 0; i < kPipelined; ++i) {
    burst += *EncodeFrame(R"({"fn":"heavy"})");
  }
  ScopedFd heavy = RawConnect();
  SendAll(heavy.get(), burst);
  ASSERT_TRUE(WaitFor([&] { return server_->stats().requests >= 1; }, 10));
  for (int i = 0; i < 10; ++i) {
    const int64_t took = TimedGetStatus(i % 2 == 0 ? UnixTarget() : TcpTarget());
    ASSERT_GE(took, 0);
    EXPECT_LT(took, kSecond) << "a cheap call waited behind the heavy ones";
  }
  EXPECT_LT(server_->stats().requests, 1u + 10u + kPipelined) << "heavy calls finished too soon";
  for (int i = 0; i < kPipelined; ++i) {  // Every pipelined call is answered, in order.
    const std::string frame = [&] {
      std::string header = ReadBytes(heavy.get(), 4);
      return header.size() < 4 ? std::string()
                               : ReadBytes(heavy.get(), DecodeFrameLength(header.data()));
    }();
    ASSERT_EQ(nlohmann::json::parse(frame, nullptr, false).value("done", false), true) << i;
  }
}

// Finding: 120 connections holding 4 MiB partial frames took RSS from 23 to 505 MiB.
TEST_F(RpcServerTest, BigPartialFramesOnManyConnectionsStayWithinTheByteBudget) {
  RpcServerOptions o = Options();
  o.read_deadline_ns = 60 * kSecond;
  o.admission.max_connections_per_peer = 200;
  o.admission.max_buffered_bytes = 32 << 20;
  o.admission.max_buffered_bytes_per_peer = 32 << 20;
  StartServer(o);
  const long rss_before = RssKib();
  constexpr int kConns = 120;
  constexpr size_t kFrame = 4 << 20;
  const std::string whole = *EncodeFrame(std::string(kFrame, 'x'), kFrame);
  const std::string partial = whole.substr(0, whole.size() - 1);  // Never completed.
  std::vector<ScopedFd> conns;
  std::vector<size_t> sent(kConns, 0);
  for (int i = 0; i < kConns; ++i) {
    conns.push_back(RawConnect());
    fcntl(conns.back().get(), F_SETFL, O_NONBLOCK);
  }
  const int64_t deadline = MonotonicNanos() + 60 * kSecond;
  while (MonotonicNanos() < deadline) {
    bool progress = false;
    std::vector<pollfd> pending;
    for (int i = 0; i < kConns; ++i) {
      if (sent[i] == partial.size()) {
        continue;
      }
      const ssize_t n = send(conns[i].get(), partial.data() + sent[i], partial.size() - sent[i],
                             MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        sent[i] += static_cast<size_t>(n);
        progress = true;
      }
      pending.push_back(pollfd{conns[i].get(), POLLOUT, 0});
    }
    // Done when everything is sent, or when the server has stopped taking bytes for a while.
    if (pending.empty() || (!progress && poll(pending.data(), pending.size(), 1000) == 0)) {
      break;
    }
  }
  const RpcServerStats stats = server_->stats();
  EXPECT_LE(stats.buffered_bytes, 64u << 20) << "buffered beyond the budget";
  EXPECT_GT(stats.read_paused, 0u);
  EXPECT_LT(RssKib() - rss_before, 160 * 1024) << "the server's memory grew with the attack";
  const int64_t took = TimedGetStatus(UnixTarget());
  ASSERT_GE(took, 0);
  EXPECT_LT(took, kSecond);
  conns.clear();
  EXPECT_TRUE(WaitFor([&] { return server_->stats().buffered_bytes == 0; }, 10))
      << server_->stats().buffered_bytes;
}

}  // namespace
}  // namespace vigil
