// SPDX-License-Identifier: Apache-2.0
// End-to-end tests of the `vigil` binary: each test starts an RpcServer in this process with a
// fake dispatcher returning canned vigild replies, runs VIGIL_BIN_DIR/vigil against it and checks
// the output and exit code.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/time_util.h"
#include "rpc/dispatcher.h"
#include "rpc/rpc_server.h"

namespace vigil {
namespace {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

const nlohmann::json& CannedStatus() {
  static const nlohmann::json kStatus = nlohmann::json::parse(R"({
    "version": "0.1.0", "hostname": "testhost", "pid": 4242, "uptime_s": 7380, "user": "root",
    "reduced_features": ["perf: no hardware PMU, software events only"],
    "collectors": [
      {"name": "cpu", "state": "ok", "message": "", "interval_s": 10,
       "last_run_unix_ns": 0, "duration_s": 0.0012, "samples": 245},
      {"name": "gpu_nvml", "state": "absent", "message": "libnvidia-ml.so.1 not found",
       "interval_s": 10, "last_run_unix_ns": 0, "duration_s": 0, "samples": 0}
    ],
    "sinks": [{"name": "jsonl", "state": "ok", "message": "/var/log/vigil.jsonl", "dropped": 3}],
    "store": {"series": 1234, "raw_points": 50000, "downsampled_points": 1200,
              "bytes": 3355443, "dropped_series": 0},
    "endpoints": {"rpc": "127.0.0.1:1778", "unix": "/run/vigil/vigild.sock",
                  "http": "127.0.0.1:9479"}
  })");
  return kStatus;
}

nlohmann::json Series(const std::string& name, const std::string& kind, const std::string& unit,
                      nlohmann::json labels, nlohmann::json points) {
  return {{"name", name},    {"kind", kind},     {"unit", unit},
          {"help", "Test."}, {"labels", labels}, {"points", points}};
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/vgc-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    now_ = UnixNanos();
    d_.Register("getStatus", [](const nlohmann::json&, const CallerInfo&) {
      return nlohmann::json{{"status", 1}};
    });
    d_.Register("getVersion", [](const nlohmann::json&, const CallerInfo&) {
      return nlohmann::json{{"version", "0.1.0-test"}};
    });
    d_.Register("vigilStatus", [this](const nlohmann::json&, const CallerInfo& caller) {
      std::lock_guard<std::mutex> lock(mu_);
      last_caller_ = caller;
      return CannedStatus();
    });
    d_.Register("vigilLatest", [this](const nlohmann::json& req, const CallerInfo&) {
      const std::string selector = req.value("selector", "");
      {
        std::lock_guard<std::mutex> lock(mu_);
        last_selector_ = selector;
      }
      if (selector == "bad{") {
        return nlohmann::json{{"error", "bad selector: bad{"}};
      }
      return Latest();
    });
    d_.Register("vigilRange", [this](const nlohmann::json& req, const CallerInfo&) {
      const std::string name = req.value("selector", "");
      nlohmann::json series = nlohmann::json::array();
      const int64_t t1 = now_ - 10 * kNanosPerSecond, t2 = now_;
      if (name == "vigil_host_cpu_seconds_total{cpu=\"all\"}") {
        const std::string n = "vigil_host_cpu_seconds_total";
        series.push_back(Series(n, "counter", "seconds", {{"cpu", "all"}, {"mode", "idle"}},
                                {{t1, 1000}, {t2, 1030}}));
        series.push_back(Series(n, "counter", "seconds", {{"cpu", "all"}, {"mode", "user"}},
                                {{t1, 500}, {t2, 510}}));
      } else if (name == "vigil_cgroup_cpu_usage_seconds_total") {
        series.push_back(Series(name, "counter", "seconds", {{"cgroup", "/slurm/job_42"}},
                                {{t1, 100}, {t2, 120}}));
      }
      return nlohmann::json{{"series", series}};
    });
    d_.Register("vigilProcesses", [](const nlohmann::json&, const CallerInfo&) {
      return nlohmann::json::parse(R"({"processes": [
        {"pid": 1234, "comm": "python", "reason": "gpu", "job_id": "42", "user": "alice",
         "team": "ranking", "model": "dlrm", "framework": "pytorch", "rule": "",
         "cgroup": "/slurm/job_42"}]})");
    });
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  nlohmann::json Latest() const {
    nlohmann::json series = nlohmann::json::array();
    series.push_back(Series("vigil_host_memory_total_bytes", "gauge", "bytes",
                            nlohmann::json::object(), {{now_, 17179869184.0}}));
    series.push_back(Series("vigil_host_memory_available_bytes", "gauge", "bytes",
                            nlohmann::json::object(), {{now_, 12884901888.0}}));
    series.push_back(Series("vigil_host_cpu_seconds_total", "counter", "seconds",
                            {{"cpu", "all"}, {"mode", "user"}}, {{now_, 510}}));
    series.push_back(Series("vigil_host_cpu_seconds_total", "counter", "seconds",
                            {{"cpu", "all"}, {"mode", "idle"}}, {{now_, 1030}}));
    series.push_back(Series("vigil_cgroup_cpu_usage_seconds_total", "counter", "seconds",
                            {{"cgroup", "/slurm/job_42"}}, {{now_, 120}}));
    series.push_back(Series("vigil_gpu_utilization_ratio", "gauge", "ratio",
                            {{"gpu_uuid", "GPU-abc"}, {"gpu_index", "0"}, {"gpu_model", "H100"}},
                            {{now_, 0.875}}));
    series.push_back(Series("vigil_gpu_memory_used_bytes", "gauge", "bytes",
                            {{"gpu_uuid", "GPU-abc"}, {"gpu_index", "0"}, {"gpu_model", "H100"}},
                            {{now_, 42949672960.0}}));
    series.push_back(
        Series("vigil_host_load1", "gauge", "", nlohmann::json::object(), {{now_, 1.5}}));
    return {{"series", series}};
  }

  void StartServer(std::string token = "") {
    RpcServerOptions o;
    o.tcp_listen = "127.0.0.1:0";
    o.unix_path = dir_ + "/d.sock";
    o.token = std::move(token);
    server_ = std::make_unique<RpcServer>(o, &d_);
    Status st = server_->Start();
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  std::string HostFlag() const {
    return "--host 127.0.0.1:" + std::to_string(server_->tcp_port()) + " ";
  }

  RunResult Vigil(const std::string& args, const std::string& binary = "") const {
    const std::string err_path = dir_ + "/stderr";
    const std::string cmd = (binary.empty() ? std::string(VIGIL_BIN_DIR) + "/vigil" : binary) +
                            " " + args + " 2>" + err_path;
    RunResult r;
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe == nullptr) {
      return r;
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) {
      r.out.append(buf, n);
    }
    const int status = pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = ReadSmallFile(err_path).value_or("");
    return r;
  }

  std::string dir_;
  int64_t now_ = 0;
  RpcDispatcher d_;
  std::unique_ptr<RpcServer> server_;
  mutable std::mutex mu_;
  CallerInfo last_caller_;
  std::string last_selector_;
};

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(CliTest, StatusShowsDaemonCollectorsSinksAndStore) {
  StartServer();
  RunResult r = Vigil(HostFlag() + "status");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "vigild 0.1.0 on testhost (pid 4242, user root), up 2h03m")) << r.out;
  EXPECT_TRUE(Contains(r.out, "perf: no hardware PMU")) << r.out;
  EXPECT_TRUE(Contains(r.out, "COLLECTOR")) << r.out;
  EXPECT_TRUE(Contains(r.out, "gpu_nvml   absent")) << r.out;
  EXPECT_TRUE(Contains(r.out, "libnvidia-ml.so.1 not found")) << r.out;
  EXPECT_TRUE(Contains(r.out, "jsonl")) << r.out;
  EXPECT_TRUE(Contains(r.out, "store: 1234 series, 50000 raw points, 1200 downsampled points"))
      << r.out;
}

TEST_F(CliTest, StatusJsonPrintsTheRawReply) {
  StartServer();
  RunResult r = Vigil(HostFlag() + "status --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out, nullptr, false), CannedStatus());
}

TEST_F(CliTest, UnixSocketOptionUsesTheSocketWithPeerCredentials) {
  StartServer();
  RunResult r = Vigil("--unix-socket " + dir_ + "/d.sock status");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::lock_guard<std::mutex> lock(mu_);
  EXPECT_EQ(last_caller_.transport, CallerInfo::Transport::kUnix);
  EXPECT_GT(last_caller_.pid, 0);
  EXPECT_NE(last_caller_.pid, getpid());  // The CLI's own process.
}

TEST_F(CliTest, StatusFallsBackToDynologCallsWithoutVigilStatus) {
  RpcDispatcher dynolog_like;
  dynolog_like.Register("getStatus", [](const nlohmann::json&, const CallerInfo&) {
    return nlohmann::json{{"status", 1}};
  });
  dynolog_like.Register("getVersion", [](const nlohmann::json&, const CallerInfo&) {
    return nlohmann::json{{"version", "0.5.0"}};
  });
  RpcServerOptions o;
  o.tcp_listen = "127.0.0.1:0";
  RpcServer server(o, &dynolog_like);
  ASSERT_TRUE(server.Start().ok());
  RunResult r = Vigil("--host 127.0.0.1 --port " + std::to_string(server.tcp_port()) + " status");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "status 1, version 0.5.0")) << r.out;
}

TEST_F(CliTest, MetricsPrintsSortedAlignedTable) {
  StartServer();
  RunResult r = Vigil(HostFlag() + "metrics");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Keys padded to the widest, values right-aligned, units last.
  EXPECT_EQ(
      r.out,
      R"(vigil_cgroup_cpu_usage_seconds_total{cgroup="/slurm/job_42"}                            120  seconds
vigil_gpu_memory_used_bytes{gpu_index="0",gpu_model="H100",gpu_uuid="GPU-abc"}  42949672960  bytes
vigil_gpu_utilization_ratio{gpu_index="0",gpu_model="H100",gpu_uuid="GPU-abc"}        0.875  ratio
vigil_host_cpu_seconds_total{cpu="all",mode="idle"}                                    1030  seconds
vigil_host_cpu_seconds_total{cpu="all",mode="user"}                                     510  seconds
vigil_host_load1                                                                        1.5
vigil_host_memory_available_bytes                                               12884901888  bytes
vigil_host_memory_total_bytes                                                   17179869184  bytes
)");
}

TEST_F(CliTest, MetricsPassesTheSelectorAndPrintsJson) {
  StartServer();
  RunResult r = Vigil(HostFlag() + "metrics 'vigil_host_cpu_seconds_total{mode=\"idle\"}' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out, nullptr, false), Latest());
  std::lock_guard<std::mutex> lock(mu_);
  EXPECT_EQ(last_selector_, "vigil_host_cpu_seconds_total{mode=\"idle\"}");
}

TEST_F(CliTest, MetricsWatchRefreshesCountTimes) {
  StartServer();
  RunResult r = Vigil(HostFlag() + "metrics --watch --interval 10ms --count 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t frames = 0;
  for (size_t pos = 0; (pos = r.out.find("vigil metrics ", pos)) != std::string::npos; ++pos) {
    ++frames;
  }
  EXPECT_EQ(frames, 3u) << r.out;
  EXPECT_FALSE(Contains(r.out, "\x1b")) << "escapes written to a pipe";
}

TEST_F(CliTest, DaemonErrorReplyExitsOneWithItsMessage) {
  StartServer();
  RunResult r = Vigil(HostFlag() + "metrics 'bad{'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "bad selector: bad{")) << r.err;
}

TEST_F(CliTest, TopOncePrintsOneFrameWithoutEscapes) {
  StartServer();
  RunResult r = Vigil(HostFlag() + "top --once");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(Contains(r.out, "\x1b")) << r.out;
  EXPECT_TRUE(Contains(r.out, "testhost  vigild 0.1.0  up 2h03m")) << r.out;
  // Rates from vigilRange: idle 3/s, user 1/s -> 25% busy of 4 cpus, all of it user time.
  EXPECT_TRUE(Contains(r.out, "CPU     25.0% busy  (4 cpus)\n        usr 25.0%")) << r.out;
  EXPECT_FALSE(Contains(r.out, "PSI")) << "no pressure series, no PSI line";
  EXPECT_TRUE(Contains(r.out, "LOAD    1m 1.50")) << r.out;
  EXPECT_TRUE(Contains(r.out, "MEMORY  4.0 GiB used of 16.0 GiB (25.0%)")) << r.out;
  EXPECT_TRUE(Contains(r.out, "/slurm/job_42  200.0%")) << r.out;
  EXPECT_TRUE(
      Contains(r.out, "1234  alice  42   python     -    -  ranking  dlrm   pytorch    gpu"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "H100   87.5%")) << r.out;
  EXPECT_TRUE(Contains(r.out, "40.0 GiB")) << r.out;
}

TEST_F(CliTest, TopOnceSaysSoWhenTheHostReportsNoGpus) {
  RpcDispatcher host_only;
  host_only.Register("vigilLatest", [this](const nlohmann::json&, const CallerInfo&) {
    nlohmann::json series = nlohmann::json::array();
    series.push_back(Series("vigil_host_memory_total_bytes", "gauge", "bytes",
                            nlohmann::json::object(), {{now_, 1024.0}}));
    return nlohmann::json{{"series", series}};
  });
  RpcServerOptions o;
  o.tcp_listen = "127.0.0.1:0";
  RpcServer server(o, &host_only);
  ASSERT_TRUE(server.Start().ok());
  RunResult r = Vigil("--host 127.0.0.1:" + std::to_string(server.tcp_port()) + " top --once");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "MEMORY  1.0 KiB total")) << r.out;
  EXPECT_TRUE(Contains(r.out, "GPU     none reported by this host")) << r.out;  // Not silence.
  EXPECT_FALSE(Contains(r.out, "GPU  MODEL")) << r.out;  // No empty GPU table.
}

TEST_F(CliTest, VersionPrintsCliAndDaemonVersions) {
  StartServer();
  RunResult r = Vigil(HostFlag() + "version");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "vigil 0.1.0\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "vigild 0.1.0-test at 127.0.0.1:")) << r.out;
}

TEST_F(CliTest, UnreachableDaemonExitsThreeNamingTheTarget) {
  const std::string target = dir_ + "/nobody.sock";
  RunResult r = Vigil("--unix-socket " + target + " status");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(Contains(r.err, "unix:" + target)) << r.err;
  EXPECT_TRUE(Contains(r.err, "Start it with `vigild`")) << r.err;
  RunResult v = Vigil("--unix-socket " + target + " version");
  EXPECT_EQ(v.exit_code, 0) << "version works without a daemon";
  EXPECT_TRUE(Contains(v.out, "vigil 0.1.0")) << v.out;
}

TEST_F(CliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(Vigil("").exit_code, 2);
  EXPECT_EQ(Vigil("nosuchcommand").exit_code, 2);
  EXPECT_EQ(Vigil("--timeout soon status").exit_code, 2);
  EXPECT_EQ(Vigil("--help").exit_code, 0);
}

TEST_F(CliTest, TokenFileAuthenticatesTheCall) {
  StartServer("t0ken");
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/token", "t0ken\n", 0600).ok());
  ASSERT_EQ(Vigil(HostFlag() + "--token-file " + dir_ + "/token status").exit_code, 0);
  {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_TRUE(last_caller_.authenticated);
  }
  ASSERT_EQ(Vigil(HostFlag() + "status").exit_code, 0);
  std::lock_guard<std::mutex> lock(mu_);
  EXPECT_FALSE(last_caller_.authenticated);
}

// The HTTP client (cpp-httplib and OpenSSL) is a plugin in lib/vigil/, loaded by the commands that
// call vigil-fleet or Prometheus only: the binary does not link it, and a binary copied away
// from its plugin says where it looked, while every other command works.
TEST_F(CliTest, OnlyTheHttpCommandsNeedTheHttpClientPlugin) {
  RunResult libs = Vigil("", "LD_TRACE_LOADED_OBJECTS=1 " + std::string(VIGIL_BIN_DIR) + "/vigil");
  ASSERT_TRUE(Contains(libs.out, "libc.so")) << libs.out;
  EXPECT_FALSE(Contains(libs.out, "libcrypto")) << libs.out;
  EXPECT_FALSE(Contains(libs.out, "httplib")) << libs.out;

  RunResult reachable = Vigil("fleet report --fleet http://127.0.0.1:1");
  EXPECT_EQ(reachable.exit_code, 3) << reachable.err;  // the plugin loaded, nobody listens

  std::filesystem::create_directories(dir_ + "/bin");
  std::filesystem::copy_file(std::string(VIGIL_BIN_DIR) + "/vigil", dir_ + "/bin/vigil");
  const std::string alone = dir_ + "/bin/vigil";
  RunResult fleet = Vigil("fleet report --fleet http://127.0.0.1:1", alone);
  EXPECT_EQ(fleet.exit_code, 1);
  EXPECT_TRUE(Contains(fleet.err, dir_ + "/bin/../lib/vigil/http_client.so")) << fleet.err;
  EXPECT_TRUE(Contains(fleet.err, "cannot be loaded")) << fleet.err;
  EXPECT_EQ(Vigil("version", alone).exit_code, 0);
  const std::string trace =
      std::string(VIGIL_TEST_DATA_DIR) + "/traces/nccl_sampled_rank-0.json.gz";
  RunResult analyze =
      Vigil("analyze -q --progress never --json " + dir_ + "/r.json " + trace, alone);
  EXPECT_EQ(analyze.exit_code, 0) << analyze.err;
}

// Twenty digits once dereferenced an empty optional (UBSan) and eleven overflowed the window.
TEST_F(CliTest, UnixSecondsOutOfRangeAreAClearError) {
  for (const char* since : {"99999999999999999999", "92233720368"}) {
    RunResult r =
        Vigil(std::string("fleet report --prometheus http://127.0.0.1:1 --since ") + since);
    EXPECT_NE(r.exit_code, 0) << since;
    EXPECT_TRUE(Contains(r.err, "out of range")) << r.err;
  }
}

}  // namespace
}  // namespace vigil
