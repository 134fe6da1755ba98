// SPDX-License-Identifier: Apache-2.0
// vigild under stress and over its life: hostile RPC clients, broken fixture trees, SIGHUP
// reload, SIGTERM, --once, and refused configurations. Each test starts its own daemon.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "base/wait_for.h"
#include "rpc/rpc_client.h"
#include "vigild_process.h"

namespace vigil::testing {
namespace {

const std::string kBrokenHost = std::string(VIGIL_TEST_DATA_DIR) + "/daemon/broken_host";

int ConnectTcp(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

StatusOr<nlohmann::json> CallOnce(const std::string& target, const nlohmann::json& request,
                                  double deadline_s = 10) {
  const auto deadline = static_cast<int64_t>(deadline_s * 1e9);
  VIGIL_ASSIGN_OR_RETURN(RpcClient client, RpcClient::Connect(target, deadline));
  return client.Call(request, deadline);
}

std::string CollectorState(const nlohmann::json& status, const std::string& name) {
  for (const auto& c : status["collectors"]) {
    if (c["name"] == name) {
      return c["state"].get<std::string>() + ": " + c["message"].get<std::string>();
    }
  }
  return "missing";
}

double CollectorInterval(const nlohmann::json& status, const std::string& name) {
  for (const auto& c : status["collectors"]) {
    if (c["name"] == name) {
      return c["interval_s"].get<double>();
    }
  }
  return -1;
}

TEST(VigildLifecycleTest, GarbageFramesAndHugeLengthsLeaveTheDaemonServing) {
  VigildProcess d;
  ASSERT_TRUE(d.Spawn({}));
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();
  // An HTTP request on the RPC port: its first four bytes read as a huge length.
  int fd = ConnectTcp(d.rpc_port());
  ASSERT_GE(fd, 0);
  const char http[] = "GET / HTTP/1.0\r\n\r\n";
  ASSERT_GT(write(fd, http, sizeof(http) - 1), 0);
  close(fd);
  // A frame claiming 2 GiB - 1 bytes, then a little payload.
  fd = ConnectTcp(d.rpc_port());
  ASSERT_GE(fd, 0);
  const unsigned char huge[] = {0xff, 0xff, 0xff, 0x7f, '{', '}'};
  ASSERT_GT(write(fd, huge, sizeof(huge)), 0);
  close(fd);
  // A negative length and a frame that is not JSON.
  fd = ConnectTcp(d.rpc_port());
  ASSERT_GE(fd, 0);
  const unsigned char bad[] = {0x05, 0x00, 0x00, 0x00, 'h', 'e', 'l', 'l', 'o'};
  ASSERT_GT(write(fd, bad, sizeof(bad)), 0);
  close(fd);

  auto reply = CallOnce(d.rpc_target(), {{"fn", "getStatus"}});
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(*reply, (nlohmann::json{{"status", 1}}));
  EXPECT_EQ(d.Get("/healthz").status, 200);
  EXPECT_TRUE(d.running());
}

TEST(VigildLifecycleTest, SlowClientHoldingHalfAFrameDoesNotBlockOthers) {
  VigildProcess d;
  ASSERT_TRUE(d.Spawn({}));
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();
  const int slow = ConnectTcp(d.rpc_port());
  ASSERT_GE(slow, 0);
  const unsigned char half[] = {100, 0, 0, 0, '{', '"', 'f', 'n', '"'};  // 5 of 100 bytes.
  ASSERT_GT(write(slow, half, sizeof(half)), 0);

  const int64_t start = MonotonicNanos();
  auto reply = CallOnce(d.rpc_target(), {{"fn", "getVersion"}}, 3);
  const int64_t took = MonotonicNanos() - start;
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ((*reply)["version"], "0.1.0");
  EXPECT_LT(took, 2 * kNanosPerSecond);
  auto unix_reply = CallOnce("unix:" + d.unix_socket(), {{"fn", "getStatus"}}, 3);
  EXPECT_TRUE(unix_reply.ok()) << unix_reply.status().ToString();
  close(slow);
}

TEST(VigildLifecycleTest, BrokenFixtureFilesMakeCollectorsFailedOrAbsentOthersOk) {
  VigildProcess d;
  ASSERT_TRUE(d.Spawn({"--proc-root", kBrokenHost + "/proc", "--sys-root", kBrokenHost + "/sys",
                       "--interval", "1s"}));
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();
  auto status = nlohmann::json::parse(d.Get("/api/v1/status").body, nullptr, false);
  ASSERT_FALSE(status.is_discarded());
  EXPECT_EQ(CollectorState(status, "proc_meminfo"), "ok: ");
  EXPECT_EQ(CollectorState(status, "proc_loadavg").rfind("failed: ", 0), 0u)
      << CollectorState(status, "proc_loadavg");
  EXPECT_EQ(CollectorState(status, "proc_cpu").rfind("absent: ", 0), 0u)
      << CollectorState(status, "proc_cpu");
  const std::string metrics = d.Get("/metrics").body;
  EXPECT_NE(metrics.find("vigil_collector_success{collector=\"proc_meminfo\"} 1"),
            std::string::npos);
  EXPECT_NE(metrics.find("vigil_collector_success{collector=\"proc_loadavg\"} 0"),
            std::string::npos);
  EXPECT_NE(metrics.find("vigil_host_memory_total_bytes 2097152"), std::string::npos);
  EXPECT_TRUE(d.running());
}

TEST(VigildLifecycleTest, SighupReloadChangesAnInterval) {
  VigildProcess d;
  const std::string config = d.dir() + "/vigild.toml";
  ASSERT_TRUE(WriteFileAtomic(config, "interval = \"10s\"\n").ok());
  ASSERT_TRUE(d.Spawn({"--config", config}));
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();
  auto before = nlohmann::json::parse(d.Get("/api/v1/status").body, nullptr, false);
  EXPECT_EQ(CollectorInterval(before, "proc_meminfo"), 10.0);

  ASSERT_TRUE(WriteFileAtomic(config,
                              "interval = \"10s\"\n[collectors.proc_meminfo]\n"
                              "interval = \"2s\"\n")
                  .ok());
  d.Signal(SIGHUP);
  const int64_t deadline = MonotonicNanos() + 20 * kNanosPerSecond;
  double interval = 0;
  while (MonotonicNanos() < deadline) {
    auto after = nlohmann::json::parse(d.Get("/api/v1/status").body, nullptr, false);
    interval = after.is_discarded() ? 0 : CollectorInterval(after, "proc_meminfo");
    if (interval == 2.0) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(interval, 2.0) << d.Log();
  EXPECT_NE(d.Log().find("collectors.proc_meminfo.interval: default -> 2s"), std::string::npos)
      << d.Log();
  EXPECT_TRUE(d.running());
}

TEST(VigildLifecycleTest, BadConfigOnReloadKeepsTheRunningConfig) {
  VigildProcess d;
  const std::string config = d.dir() + "/vigild.toml";
  ASSERT_TRUE(WriteFileAtomic(config, "interval = \"10s\"\n").ok());
  ASSERT_TRUE(d.Spawn({"--config", config}));
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();
  ASSERT_TRUE(WriteFileAtomic(config, "interval = \"10s\"\nbogus_key = 1\n").ok());
  d.Signal(SIGHUP);
  const int64_t deadline = MonotonicNanos() + 20 * kNanosPerSecond;
  while (MonotonicNanos() < deadline && d.Log().find("reload failed") == std::string::npos) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(d.Log().find("bogus_key"), std::string::npos) << d.Log();
  EXPECT_EQ(d.Get("/healthz").status, 200);
}

TEST(VigildLifecycleTest, SigtermExitsZeroAndRemovesTheSocket) {
  VigildProcess d;
  const std::string jsonl = d.dir() + "/samples.jsonl";
  ASSERT_TRUE(d.Spawn({"--jsonl", jsonl}));
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();
  EXPECT_TRUE(PathExists(d.unix_socket()));
  d.Signal(SIGTERM);
  auto status = d.Wait(30);
  ASSERT_TRUE(status.has_value()) << "vigild did not exit after SIGTERM";
  EXPECT_EQ(*status, 0) << d.Log();
  EXPECT_FALSE(PathExists(d.unix_socket()));
  // Sinks were flushed: the JSON-lines file holds whole lines of the first pass.
  auto text = ReadSmallFile(jsonl);
  ASSERT_TRUE(text.ok());
  ASSERT_FALSE(text->empty());
  EXPECT_EQ(text->back(), '\n');
  EXPECT_NE(text->find("\"name\":\"vigil_collector_success\""), std::string::npos);
}

TEST(VigildLifecycleTest, OncePrintsMetricsForTheFixtureAndExits) {
  std::string out;
  std::string err;
  const int rc = RunVigildToCompletion(
      {"--once", "--proc-root", kBrokenHost + "/proc", "--sys-root", kBrokenHost + "/sys"}, &out,
      &err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_NE(out.find("# TYPE vigil_host_memory_total_bytes gauge"), std::string::npos) << out;
  EXPECT_NE(out.find("vigil_host_memory_total_bytes 2097152\n"), std::string::npos) << out;
  EXPECT_NE(out.find("vigil_host_memory_free_bytes 1048576\n"), std::string::npos) << out;
  EXPECT_NE(out.find("vigil_collector_success{collector=\"proc_meminfo\"} 1\n"), std::string::npos);
  EXPECT_NE(out.find("vigil_collector_success{collector=\"proc_loadavg\"} 0\n"), std::string::npos);
  EXPECT_NE(out.find("vigil_collector_success{collector=\"proc_cpu\"} 0\n"), std::string::npos);
  EXPECT_EQ(out.find("vigil_daemon_"), std::string::npos);  // No self metrics: stable output.
  if (PathExists("/usr/bin/promtool")) {
    char templ[] = "/tmp/vd-onceXXXXXX";
    const std::string dir = mkdtemp(templ);
    ASSERT_TRUE(WriteFileAtomic(dir + "/m.txt", out).ok());
    const std::string cmd = "/usr/bin/promtool check metrics < " + dir + "/m.txt >/dev/null 2>&1";
    EXPECT_EQ(system(cmd.c_str()), 0);
    const std::string rm = "rm -rf " + dir;
    ASSERT_EQ(system(rm.c_str()), 0);
  }
}

TEST(VigildLifecycleTest, NonLoopbackRpcWithoutTokenIsRefused) {
  std::string out;
  std::string err;
  const int rc = RunVigildToCompletion(
      {"--rpc-listen", "0.0.0.0:" + std::to_string(FreeLoopbackPort()), "--http-listen",
       "127.0.0.1:" + std::to_string(FreeLoopbackPort()), "--unix-socket", "-"},
      &out, &err);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("refusing to listen"), std::string::npos) << err;
  EXPECT_NE(err.find("--token-file"), std::string::npos) << err;
}

TEST(VigildLifecycleTest, UnreadableRemoteWriteAuthIsAStartupErrorNamingTheFile) {
  char templ[] = "/tmp/vd-authXXXXXX";
  const std::string dir = mkdtemp(templ);
  ASSERT_TRUE(WriteFileAtomic(dir + "/auth", "just-a-token\n", 0600).ok());
  std::string out;
  std::string err;
  const int rc = RunVigildToCompletion(
      {"--http-listen", "127.0.0.1:" + std::to_string(FreeLoopbackPort()), "--rpc-listen",
       "127.0.0.1:" + std::to_string(FreeLoopbackPort()), "--unix-socket", "-", "--state-dir", dir,
       "--remote-write-url", "http://127.0.0.1:1/api/v1/write", "--remote-write-auth-file",
       dir + "/auth"},
      &out, &err);
  EXPECT_NE(rc, 0);
  EXPECT_NE(err.find(dir + "/auth"), std::string::npos) << err;
  EXPECT_NE(err.find("bearer TOKEN"), std::string::npos) << err;
  const std::string rm = "rm -rf " + dir;
  ASSERT_EQ(system(rm.c_str()), 0);
}

TEST(VigildLifecycleTest, UnknownConfigKeyIsAStartupErrorNamingIt) {
  char templ[] = "/tmp/vd-cfgXXXXXX";
  const std::string dir = mkdtemp(templ);
  ASSERT_TRUE(WriteFileAtomic(dir + "/bad.toml", "http_lisen = \"127.0.0.1:1\"\n").ok());
  std::string out;
  std::string err;
  const int rc = RunVigildToCompletion({"--config", dir + "/bad.toml"}, &out, &err);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("http_lisen"), std::string::npos) << err;
  const std::string rm = "rm -rf " + dir;
  ASSERT_EQ(system(rm.c_str()), 0);
}

TEST(VigildLifecycleTest, PortInUseIsAStartupError) {
  VigildProcess first;
  ASSERT_TRUE(first.Spawn({}));
  ASSERT_TRUE(first.WaitHealthy()) << first.Log();
  std::string out;
  std::string err;
  const int rc = RunVigildToCompletion(
      {"--http-listen", "127.0.0.1:" + std::to_string(first.http_port()), "--rpc-listen",
       "127.0.0.1:" + std::to_string(FreeLoopbackPort()), "--unix-socket", "-"},
      &out, &err);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("cannot start"), std::string::npos) << err;
  EXPECT_EQ(first.Get("/healthz").status, 200);
}

// What the default daemon keeps: cap_chown (0), cap_dac_read_search (2), cap_sys_ptrace (19),
// cap_perfmon (38, perf_pmu).
constexpr uint64_t kDefaultCapabilities =
    (uint64_t{1} << 0) | (uint64_t{1} << 2) | (uint64_t{1} << 19) | (uint64_t{1} << 38);

// One "Name:\tvalue" line of /proc/PID/status.
std::string ProcStatusField(int pid, const std::string& name) {
  const std::string text = ReadSmallFile("/proc/" + std::to_string(pid) + "/status").value_or("");
  for (std::string_view line : Split(text, '\n')) {
    if (line.rfind(name + ":", 0) == 0) {
      return std::string(Trim(line.substr(name.size() + 1)));
    }
  }
  return "";
}

uint64_t CapabilityField(int pid, const std::string& name) {
  return std::stoull(ProcStatusField(pid, name), nullptr, 16);
}

int DaemonPid(const VigildProcess& d) {
  auto status = nlohmann::json::parse(d.Get("/api/v1/status").body, nullptr, false);
  return status.is_discarded() ? -1 : status.value("pid", -1);
}

TEST(VigildPrivilegeTest, StartedAsRootWithUserNobodyServesAsNobodyWithOnlyTheNeededCapabilities) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root";
  }
  VigildProcess d;
  ASSERT_EQ(chown(d.dir().c_str(), 65534, 65534), 0);  // Where the socket and traces go.

  ASSERT_TRUE(d.Spawn({"--user", "nobody"}));
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();
  const int pid = DaemonPid(d);
  ASSERT_GT(pid, 0);

  EXPECT_NE(d.Get("/metrics").body.find("vigil_collector_success"), std::string::npos);
  auto tcp = CallOnce(d.rpc_target(), {{"fn", "getStatus"}});
  ASSERT_TRUE(tcp.ok()) << tcp.status().ToString();
  auto unix_reply = CallOnce("unix:" + d.unix_socket(), {{"fn", "getStatus"}});
  ASSERT_TRUE(unix_reply.ok()) << unix_reply.status().ToString();
  EXPECT_EQ(ProcStatusField(pid, "Uid"), "65534\t65534\t65534\t65534");
  EXPECT_EQ(ProcStatusField(pid, "Gid").substr(0, 5), "65534");
  EXPECT_EQ(CapabilityField(pid, "CapEff"), kDefaultCapabilities) << ProcStatusField(pid, "CapEff");
  EXPECT_EQ(CapabilityField(pid, "CapPrm"), kDefaultCapabilities);
  EXPECT_EQ(CapabilityField(pid, "CapBnd"), kDefaultCapabilities) << ProcStatusField(pid, "CapBnd");
  EXPECT_EQ(CapabilityField(pid, "CapAmb"), 0u);
  EXPECT_EQ(ProcStatusField(pid, "NoNewPrivs"), "1");
  EXPECT_TRUE(WaitFor([&] { return ProcStatusField(pid, "Seccomp") == "2"; }, 60))
      << ProcStatusField(pid, "Seccomp") << d.Log();
  struct stat st {};
  ASSERT_EQ(stat((d.dir() + "/traces").c_str(), &st), 0);  // The trace root, made for nobody.
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_NE(d.Log().find("privileges: uid=65534(nobody)"), std::string::npos) << d.Log();
}

TEST(VigildPrivilegeTest, RootWithoutUserDropsEveryCapabilityItDoesNotNeed) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root";
  }
  VigildProcess d;

  ASSERT_TRUE(d.Spawn({}));
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();
  const int pid = DaemonPid(d);
  ASSERT_GT(pid, 0);

  EXPECT_EQ(ProcStatusField(pid, "Uid"), "0\t0\t0\t0");
  EXPECT_EQ(CapabilityField(pid, "CapEff"), kDefaultCapabilities) << ProcStatusField(pid, "CapEff");
  EXPECT_EQ(CapabilityField(pid, "CapBnd"), kDefaultCapabilities) << ProcStatusField(pid, "CapBnd");
  EXPECT_TRUE(WaitFor([&] { return ProcStatusField(pid, "Seccomp") == "2"; }, 60)) << d.Log();
  EXPECT_NE(d.Log().find("privileges: keeping cap_chown for tracing"), std::string::npos)
      << d.Log();
}

TEST(VigildPrivilegeTest, SeccompFalseLeavesTheFilterOff) {
  VigildProcess d;

  ASSERT_TRUE(d.Spawn({"--seccomp=false"}));
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();
  const int pid = DaemonPid(d);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitFor([&] { return d.Log().find("ready") != std::string::npos; }, 60));

  EXPECT_EQ(ProcStatusField(pid, "Seccomp"), "0");
}

TEST(VigildPrivilegeTest, UserNeedsRootAndAnUnknownUserIsRefused) {
  std::string out;
  std::string err;
  const int rc = RunVigildToCompletion(
      {"--once", "--user", "no-such-user-vigil", "--proc-root", kBrokenHost + "/proc"}, &out, &err);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("cannot drop privileges: user no-such-user-vigil does not exist"),
            std::string::npos)
      << err;
}

TEST(VigildPrivilegeTest, WorldReadableTokenFileWarnsAndStrictPermissionsRefusesIt) {
  VigildProcess d;
  const std::string token = d.dir() + "/token";
  ASSERT_TRUE(WriteFileAtomic(token, "s3cret\n", 0644).ok());
  ASSERT_EQ(chmod(token.c_str(), 0644), 0);
  std::string out;
  std::string err;

  const int strict_rc =
      RunVigildToCompletion({"--once", "--token-file", token, "--strict-permissions", "--proc-root",
                             kBrokenHost + "/proc"},
                            &out, &err);
  ASSERT_TRUE(d.Spawn({"--token-file", token}));
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();

  EXPECT_EQ(strict_rc, 1);
  EXPECT_NE(err.find("--token-file " + token + " is mode 0644: readable by group and others"),
            std::string::npos)
      << err;
  EXPECT_NE(d.Log().find("secret file is open to more than its owner: flag=--token-file"),
            std::string::npos)
      << d.Log();
}

TEST(VigildPrivilegeTest, IntervalOfFiftyMillisecondsIsRefused) {
  std::string out;
  std::string err;
  const int rc = RunVigildToCompletion({"--once", "--interval", "50ms"}, &out, &err);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("interval: want at least 100ms, not 50ms"), std::string::npos) << err;
}

}  // namespace
}  // namespace vigil::testing
