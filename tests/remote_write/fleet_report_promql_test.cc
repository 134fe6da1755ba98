// SPDX-License-Identifier: Apache-2.0
// `vigil fleet report --prometheus URL` against the real engines from Debian (prometheus with
// --web.enable-remote-write-receiver, and victoria-metrics), started here on loopback. Known
// counters go in through RemoteWriteSink exactly as vigild sends them (cumulative, every 10 s, a
// finished job's counters kept flat); the CLI's report must give back the GPU-hours pushed.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/http_authorization.h"
#include "base/time_util.h"
#include "base/wait_for.h"
#include "collectors/gpu_metrics.h"
#include "server_process.h"
#include "sinks/remote_write_sink.h"

namespace vigil {
namespace {

namespace gm = gpu_metrics;  // The metric names vigild emits.

using nlohmann::json;
using testing::FindOnPath;
using testing::FreeLoopbackPort;
using testing::HttpGet;
using testing::ServerProcess;
using testing::UrlEncode;
using K = MetricKind;

constexpr MetricDesc kMfu{"vigil_job_mfu_ratio", "", K::kGauge, "ratio"};
constexpr int kTicks = 60;  // Every 10 s: ten minutes.

struct Engine {
  std::string name, binary, ready_path, flush_path;
};
void PrintTo(const Engine& e, std::ostream* os) { *os << e.name; }

// Tick i at t0 + 10 i s on host itest-node: GPU-1 held by team-a's pytorch job A all along (half
// busy, 300 W); GPU-2 held by team-b's jax job B, never busy (100 W), for the first 300 s, then
// free (B's counters stay flat, as vigild keeps them); GPU-3 never held.
BatchPtr Tick(int i, int64_t t0) {
  auto b = std::make_shared<MetricBatch>();
  b->time_ns = t0 + i * 10 * kNanosPerSecond;
  MetricWriter w(b.get());
  const double t = 10.0 * i, tb = 10.0 * std::min(i, 30);
  for (const char* gpu : {"GPU-1", "GPU-2", "GPU-3"}) {
    w.Add(gm::kUp, 1, {{"gpu_uuid", gpu}, {"gpu_model", "H100"}, {"gpu_index", "0"}});
    w.Add(gm::kEnergy, 50 * t, {{"gpu_uuid", gpu}, {"gpu_model", "H100"}, {"gpu_index", "0"}});
  }
  auto job = [&](const char* gpu, const char* id, const char* team, const char* framework,
                 double alloc, double busy, double held, double joules) {
    const Labels l = {{"gpu_uuid", gpu},        {"job_id", id}, {"user", "u"},  {"team", team},
                      {"framework", framework}, {"model", "m"}, {"rule", "env"}};
    w.Add(gm::kAllocated, alloc, l);
    w.Add(gm::kBusy, busy, l);
    w.Add(gm::kHeldIdle, held, l);
    w.Add(gm::kJobEnergy, joules, l);
  };
  job("GPU-1", "A", "team-a", "pytorch", t, t / 2, 0, 300 * t);
  job("GPU-2", "B", "team-b", "jax", tb, 0, tb, 100 * tb);
  w.Add(kMfu, 0.4, {{"job_id", "A"}, {"team", "team-a"}});
  for (Sample& s : b->samples) s.time_ns = b->time_ns;
  return b;
}

int RunCapture(const std::string& command, std::string* out) {
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const json* Row(const json& report, const std::string& key, int64_t bucket = -1) {
  if (!report.contains("rows")) return nullptr;
  for (const json& r : report["rows"]) {
    if (r["key"] == key && (bucket < 0 || r.value("bucket_start_s", int64_t{-1}) == bucket)) {
      return &r;
    }
  }
  return nullptr;
}

double Seconds(const json* row, const char* field) {
  return row ? (*row)[field].get<double>() * 3600 : -1;
}

class FleetReportPromqlTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    vigil_ = std::string(VIGIL_BIN_DIR) + "/vigil";
    if (access(vigil_.c_str(), X_OK) != 0) GTEST_SKIP() << "vigil CLI not built";
    const Engine& e = GetParam();
    const std::string binary = FindOnPath(e.binary);
    if (binary.empty()) {
      GTEST_SKIP() << e.binary << " is not installed (tools/install-deps.sh installs it)";
    }
    char templ[] = "/tmp/rwpq-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
    port_ = FreeLoopbackPort();
    std::vector<std::string> args = {binary};
    if (e.binary == "prometheus") {
      ASSERT_TRUE(
          WriteFileAtomic(dir_ + "/prometheus.yml", "global:\n  scrape_interval: 1h\n").ok());
      args.insert(args.end(),
                  {"--web.enable-remote-write-receiver", "--storage.tsdb.path=" + dir_ + "/data",
                   "--web.listen-address=127.0.0.1:" + std::to_string(port_),
                   "--config.file=" + dir_ + "/prometheus.yml", "--log.level=warn"});
    } else {
      // VictoriaMetrics runs behind basic authentication: the remote-write sink and the report
      // must both present it (its /health stays open).
      args.insert(args.end(),
                  {"-storageDataPath=" + dir_ + "/data",
                   "-httpListenAddr=127.0.0.1:" + std::to_string(port_), "-search.latencyOffset=0s",
                   "-search.disableCache", "-loggerLevel=WARN", "-httpAuth.username=vigil",
                   "-httpAuth.password=s3cret pass"});
      authorization_ = "Basic " + Base64Encode("vigil:s3cret pass");
      auth_flag_ = " --prometheus-auth-file " + dir_ + "/auth";
      ASSERT_TRUE(WriteFileAtomic(dir_ + "/auth", "# test\nbasic vigil:s3cret pass\n", 0600).ok());
    }
    server_ = std::make_unique<ServerProcess>(args, port_, e.ready_path, dir_ + "/server.log");
    ASSERT_TRUE(server_->Start()) << server_->Log();
    // Ten minutes of reports ending at least five minutes ago, on a 5-minute boundary.
    const int64_t now_s = UnixNanos() / kNanosPerSecond;
    t0_s_ = (now_s - 900) / 300 * 300;
    RemoteWriteSinkOptions o;
    o.url = "http://127.0.0.1:" + std::to_string(port_) + "/api/v1/write";
    o.host_label_value = "itest-node";
    o.authorization = authorization_;
    o.backoff = {.initial_ns = 50 * kNanosPerMilli, .max_ns = 500 * kNanosPerMilli};
    auto sink = RemoteWriteSink::Create(o);
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    sink_ = std::move(sink).value();
    for (int i = 0; i <= kTicks; ++i) sink_->Consume(Tick(i, t0_s_ * kNanosPerSecond));
    sink_->Flush(20 * kNanosPerSecond);
    ASSERT_EQ(sink_->stats().requests_rejected, 0u) << sink_->health().message;
    // Every point of job A's counter is searchable.
    const std::string q = "/api/v1/query?query=" +
                          UrlEncode(
                              "count_over_time(vigil_gpu_allocated_seconds_total{job_id=\"A\"}"
                              "[15m])") +
                          "&time=" + std::to_string(until());
    ASSERT_TRUE(WaitFor(
        [&] {
          if (!e.flush_path.empty()) HttpGet(port_, e.flush_path, authorization_);
          const json doc = json::parse(HttpGet(port_, q, authorization_).body, nullptr, false);
          return !doc.is_discarded() && doc.contains("data") && !doc["data"]["result"].empty() &&
                 doc["data"]["result"][0]["value"][1] == std::to_string(kTicks + 1);
        },
        30, std::chrono::milliseconds(100)))
        << server_->Log();
  }
  void TearDown() override {
    if (sink_) sink_->Stop();
    if (server_) server_->Stop();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  int64_t until() const { return t0_s_ + kTicks * 10; }

  json Report(const std::string& by, const std::string& extra = "") {
    std::string out;
    const std::string cmd = vigil_ +
                            " fleet report --prometheus http://127.0.0.1:" + std::to_string(port_) +
                            " --by " + by + " --since " + std::to_string(t0_s_ - 60) + " --until " +
                            std::to_string(until()) + " --format json" + auth_flag_ + extra;
    const int code = RunCapture(cmd, &out);
    EXPECT_EQ(code, 0) << cmd << "\n" << out;
    const json doc = json::parse(out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << out;
    return doc.is_discarded() ? json::object() : doc;
  }

  std::string vigil_, dir_;
  std::string authorization_, auth_flag_;  // Set for an engine behind authentication.
  int port_ = 0;
  int64_t t0_s_ = 0;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<RemoteWriteSink> sink_;
};

TEST_P(FleetReportPromqlTest, ByTeamGivesThePushedGpuHours) {
  const json r = Report("team", " --price-per-gpu-hour 3.6");
  const json* a = Row(r, "team-a");
  const json* b = Row(r, "team-b");
  const json* idle = Row(r, "(unallocated)");
  ASSERT_TRUE(a && b && idle) << r.dump(2);
  EXPECT_NEAR(Seconds(a, "allocated_gpu_hours"), 600, 1e-6) << r.dump(2);
  EXPECT_NEAR(Seconds(a, "busy_gpu_hours"), 300, 1e-6);
  EXPECT_NEAR(Seconds(a, "held_idle_gpu_hours"), 0, 1e-6);
  EXPECT_NEAR((*a)["energy_joules"].get<double>(), 300 * 600, 1e-3);
  EXPECT_NEAR((*a)["cost"].get<double>(), 600 / 3600.0 * 3.6, 1e-6);
  EXPECT_NEAR(Seconds(b, "allocated_gpu_hours"), 300, 1e-6);
  EXPECT_NEAR(Seconds(b, "held_idle_gpu_hours"), 300, 1e-6);
  EXPECT_NEAR((*b)["energy_joules"].get<double>(), 100 * 300, 1e-3);
  // Unallocated: GPU-2's last 300 s and GPU-3's 600 s, at the idle query's 15 s resolution.
  EXPECT_GE(Seconds(idle, "idle_gpu_hours"), 900 - 1e-6);
  EXPECT_LE(Seconds(idle, "idle_gpu_hours"), 900 + 3 * 15 + 1);
  EXPECT_NEAR(r["totals"]["allocated_gpu_hours"].get<double>() * 3600, 900, 1e-6);
  EXPECT_EQ(r["source"], "prometheus");
}

TEST_P(FleetReportPromqlTest, FrameworkJobAndHostDimensionsAndBuckets) {
  const json fw = Report("framework");
  EXPECT_NEAR(Seconds(Row(fw, "pytorch"), "allocated_gpu_hours"), 600, 1e-6) << fw.dump(2);
  EXPECT_NEAR(Seconds(Row(fw, "jax"), "allocated_gpu_hours"), 300, 1e-6);

  const json jobs = Report("job");
  ASSERT_TRUE(Row(jobs, "A")) << jobs.dump(2);
  EXPECT_NEAR((*Row(jobs, "A"))["mfu_ratio"].get<double>(), 0.4, 1e-9);
  EXPECT_TRUE((*Row(jobs, "B"))["mfu_ratio"].is_null());

  const json hosts = Report("host");
  const json* h = Row(hosts, "itest-node");
  ASSERT_TRUE(h) << hosts.dump(2);
  EXPECT_NEAR(Seconds(h, "allocated_gpu_hours"), 900, 1e-6);
  EXPECT_GE(Seconds(h, "gpu_hours"), 1800 - 1e-6);  // Three GPUs for ten minutes.
  EXPECT_LE(Seconds(h, "gpu_hours"), 1800 + 3 * 15 + 1);
  EXPECT_NEAR((*h)["energy_joules"].get<double>(), 3 * 50 * 600, 1e-3);  // Device energy.

  const json models = Report("gpu_model");
  EXPECT_NEAR(Seconds(Row(models, "H100"), "allocated_gpu_hours"), 900, 1e-6) << models.dump(2);

  // Five-minute buckets: A's 600 s split in two, B's 300 s all in the first.
  const json buckets = Report("team", " --bucket 5m");
  EXPECT_NEAR(Seconds(Row(buckets, "team-a", t0_s_), "allocated_gpu_hours"), 300, 1e-6)
      << buckets.dump(2);
  EXPECT_NEAR(Seconds(Row(buckets, "team-a", t0_s_ + 300), "allocated_gpu_hours"), 300, 1e-6);
  EXPECT_NEAR(Seconds(Row(buckets, "team-b", t0_s_), "allocated_gpu_hours"), 300, 1e-6);

  std::string table;
  ASSERT_EQ(
      RunCapture(vigil_ + " fleet report --prometheus http://127.0.0.1:" + std::to_string(port_) +
                     " --by team --since " + std::to_string(t0_s_ - 60) + " --until " +
                     std::to_string(until()) + auth_flag_,
                 &table),
      0);
  EXPECT_NE(table.find("team-a"), std::string::npos) << table;
  EXPECT_NE(table.find("(prometheus)"), std::string::npos) << table;
  EXPECT_NE(table.find("note: idle_gpu_hours"), std::string::npos) << table;
}

TEST_P(FleetReportPromqlTest, AnEngineBehindAuthenticationWantsTheAuthFile) {
  if (auth_flag_.empty()) GTEST_SKIP() << "this engine runs without authentication here";
  const std::string base = vigil_ +
                           " fleet report --prometheus http://127.0.0.1:" + std::to_string(port_) +
                           " --since 1h";
  std::string out;
  EXPECT_EQ(RunCapture(base + " 2>&1", &out), 1) << out;
  EXPECT_NE(out.find("HTTP 401"), std::string::npos) << out;
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/wrong", "basic vigil:wrong\n", 0600).ok());
  EXPECT_EQ(RunCapture(base + " --prometheus-auth-file " + dir_ + "/wrong 2>&1", &out), 1) << out;
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/bad", "s3cret\n", 0600).ok());
  EXPECT_EQ(RunCapture(base + " --prometheus-auth-file " + dir_ + "/bad 2>&1", &out), 1) << out;
  EXPECT_NE(out.find("want one line"), std::string::npos) << out;
  EXPECT_EQ(RunCapture(base + auth_flag_ + " 2>&1", &out), 0) << out;
}

TEST_P(FleetReportPromqlTest, AnUnreachableEngineIsExitCode3) {
  std::string out;
  EXPECT_EQ(RunCapture(vigil_ + " fleet report --prometheus http://127.0.0.1:" +
                           std::to_string(FreeLoopbackPort()) + " 2>&1",
                       &out),
            3)
      << out;
}

INSTANTIATE_TEST_SUITE_P(Engines, FleetReportPromqlTest,
                         ::testing::Values(Engine{"prometheus", "prometheus", "/-/ready", ""},
                                           Engine{"victoria_metrics", "victoria-metrics", "/health",
                                                  "/internal/force_flush"}),
                         [](const ::testing::TestParamInfo<Engine>& p) { return p.param.name; });

}  // namespace
}  // namespace vigil
