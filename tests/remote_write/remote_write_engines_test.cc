// SPDX-License-Identifier: Apache-2.0
// The remote-write sink against the real receivers from Debian: prometheus (with
// --web.enable-remote-write-receiver) and victoria-metrics, each started here on loopback with a
// temporary data directory. Samples go in through RemoteWriteSink and come back out through the
// engine's own /api/v1/query.
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/time_util.h"
#include "base/wait_for.h"
#include "server_process.h"
#include "sinks/remote_write_sink.h"

namespace vigil {
namespace {

constexpr std::chrono::milliseconds kPoll{50};  // Each try of a WaitFor may query the engine.

using testing::FindOnPath;
using testing::FreeLoopbackPort;
using testing::HttpGet;
using testing::ServerProcess;
using testing::UrlEncode;

constexpr MetricDesc kValue{"vigil_itest_value_ratio", "Test value.", MetricKind::kGauge, "ratio"};
constexpr char kHost[] = "itest-host";

struct Engine {
  std::string name;    // Test name suffix.
  std::string binary;  // Debian's binary name.
  std::string package;
  std::string ready_path;
  std::string write_path;
  std::string flush_path;  // Makes just-written samples searchable now; "" = not needed.
};

void PrintTo(const Engine& engine, std::ostream* os) { *os << engine.name; }

BatchPtr MakeBatch(int64_t time_ns, const std::vector<std::pair<std::string, double>>& gpus) {
  auto batch = std::make_shared<MetricBatch>();
  batch->time_ns = time_ns;
  batch->source = "itest";
  for (const auto& [gpu, value] : gpus) {
    batch->samples.push_back(Sample{&kValue, {{"gpu_uuid", gpu}}, value, time_ns});
  }
  return batch;
}

class RemoteWriteEngineTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    const Engine& e = GetParam();
    binary_ = FindOnPath(e.binary);
    if (binary_.empty()) {
      GTEST_SKIP() << e.binary << " is not installed (Debian package " << e.package
                   << "; tools/install-deps.sh installs it)";
    }
    char templ[] = "/tmp/rwit-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
    port_ = FreeLoopbackPort();
    ASSERT_GT(port_, 0);
    std::vector<std::string> args = {binary_};
    if (e.binary == "prometheus") {
      const std::string config = dir_ + "/prometheus.yml";
      ASSERT_TRUE(WriteFileAtomic(config, "global:\n  scrape_interval: 1h\n").ok());
      args.insert(args.end(),
                  {"--web.enable-remote-write-receiver", "--storage.tsdb.path=" + dir_ + "/data",
                   "--web.listen-address=127.0.0.1:" + std::to_string(port_),
                   "--config.file=" + config, "--log.level=warn"});
    } else {
      args.insert(args.end(),
                  {"-storageDataPath=" + dir_ + "/data",
                   "-httpListenAddr=127.0.0.1:" + std::to_string(port_),
                   // Answer queries from the newest data, uncached.
                   "-search.latencyOffset=0s", "-search.disableCache", "-loggerLevel=WARN"});
    }
    server_ = std::make_unique<ServerProcess>(args, port_, e.ready_path, dir_ + "/server.log");
    ASSERT_TRUE(server_->Start()) << e.binary << " did not become ready:\n" << server_->Log();
    // Samples a minute in the past: inside both engines' accepted window, and far enough back that
    // the queries below never race "now".
    t0_ = (UnixNanos() / kNanosPerSecond - 60) * kNanosPerSecond;
  }
  void TearDown() override {
    if (sink_) {
      sink_->Stop();
    }
    if (server_) {
      server_->Stop();
    }
    if (!dir_.empty()) {
      std::filesystem::remove_all(dir_);
    }
  }

  void MakeSink() {
    RemoteWriteSinkOptions o;
    o.url = "http://127.0.0.1:" + std::to_string(port_) + GetParam().write_path;
    o.host_label_value = kHost;
    o.buffer_dir = dir_ + "/buffer";
    o.connect_timeout_ns = 2 * kNanosPerSecond;
    o.request_timeout_ns = 10 * kNanosPerSecond;
    o.backoff = {.initial_ns = 50 * kNanosPerMilli, .max_ns = 500 * kNanosPerMilli};
    StatusOr<std::unique_ptr<RemoteWriteSink>> sink = RemoteWriteSink::Create(o);
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    sink_ = std::move(sink).value();
  }

  // The instant vector of `promql` at `time_ns`: gpu_uuid -> value. Empty on any error.
  std::map<std::string, double> Query(const std::string& promql, int64_t time_ns) {
    if (!GetParam().flush_path.empty()) {
      HttpGet(port_, GetParam().flush_path);
    }
    const std::string path = "/api/v1/query?query=" + UrlEncode(promql) +
                             "&time=" + std::to_string(static_cast<double>(time_ns) / 1e9);
    testing::HttpReply reply = HttpGet(port_, path);
    last_reply_ = reply.body;
    nlohmann::json doc = nlohmann::json::parse(reply.body, nullptr, false);
    std::map<std::string, double> out;
    if (reply.status != 200 || doc.is_discarded() || !doc.contains("data")) {
      return out;
    }
    for (const auto& r : doc["data"].value("result", nlohmann::json::array())) {
      const std::string gpu = r["metric"].value("gpu_uuid", "");
      out[gpu] = std::stod(r["value"][1].get<std::string>());
      labels_[gpu] = r["metric"];
    }
    return out;
  }
  std::string Selector() const { return std::string(kValue.name) + "{host=\"" + kHost + "\"}"; }

  std::string binary_;
  std::string dir_;
  int port_ = 0;
  int64_t t0_ = 0;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<RemoteWriteSink> sink_;
  std::string last_reply_;
  std::map<std::string, nlohmann::json> labels_;
};

TEST_P(RemoteWriteEngineTest, PushedSamplesAreReadBackWithTheirLabels) {
  MakeSink();
  sink_->Consume(MakeBatch(t0_, {{"GPU-0", 0.25}, {"GPU-1", 0.75}}));
  const std::map<std::string, double> want = {{"GPU-0", 0.25}, {"GPU-1", 0.75}};
  ASSERT_TRUE(WaitFor([&] { return Query(Selector(), t0_) == want; }, 20, kPoll))
      << last_reply_ << "\nsink: " << sink_->health().message << "\n"
      << server_->Log();
  EXPECT_EQ(labels_["GPU-0"].value("__name__", ""), kValue.name);
  EXPECT_EQ(labels_["GPU-0"].value("host", ""), kHost);
  sink_->Flush(5 * kNanosPerSecond);
  EXPECT_EQ(sink_->stats().samples_sent, 2u);
  EXPECT_EQ(sink_->stats().last_http_status, 204);
  EXPECT_EQ(sink_->health().state, SinkHealth::State::kOk);
}

TEST_P(RemoteWriteEngineTest, AnEndedSeriesIsMarkedStale) {
  MakeSink();
  sink_->Consume(MakeBatch(t0_, {{"GPU-0", 1}, {"GPU-1", 2}}));
  sink_->Consume(MakeBatch(t0_ + kNanosPerSecond, {{"GPU-0", 1}}));
  sink_->Consume(MakeBatch(t0_ + 2 * kNanosPerSecond, {{"GPU-0", 1}}));
  // Before the marker both series answer; after it only GPU-0 does, though GPU-1's last sample is
  // well inside the 5-minute lookback.
  const std::map<std::string, double> both = {{"GPU-0", 1}, {"GPU-1", 2}};
  const std::map<std::string, double> one = {{"GPU-0", 1}};
  ASSERT_TRUE(
      WaitFor([&] { return Query(Selector(), t0_ + 2 * kNanosPerSecond) == one; }, 20, kPoll))
      << last_reply_ << "\n"
      << server_->Log();
  EXPECT_EQ(Query(Selector(), t0_ + kNanosPerSecond / 2), both) << last_reply_;
  EXPECT_EQ(sink_->stats().stale_markers, 1u);
}

TEST_P(RemoteWriteEngineTest, AReceiverOutageLosesNothing) {
  MakeSink();
  const std::string sum = "sum_over_time(" + Selector() + "[1m])";
  const std::string count = "count_over_time(" + Selector() + "[1m])";
  const int64_t end = t0_ + 5 * kNanosPerSecond;
  sink_->Consume(MakeBatch(t0_, {{"GPU-0", 1}}));
  ASSERT_TRUE(WaitFor(
      [&] {
        return Query(count, end) == std::map<std::string, double>{{"GPU-0", 1}};
      },
      20, kPoll))
      << last_reply_;

  server_->Stop();
  for (int i = 1; i <= 3; ++i) {
    sink_->Consume(MakeBatch(t0_ + i * kNanosPerSecond, {{"GPU-0", 1.0 + i}}));
    sink_->Flush(5 * kNanosPerSecond);
  }
  ASSERT_TRUE(WaitFor([&] { return sink_->stats().buffered_requests >= 1; }, 10, kPoll));
  EXPECT_EQ(sink_->health().state, SinkHealth::State::kFailed);

  ASSERT_TRUE(server_->Start()) << server_->Log();
  ASSERT_TRUE(WaitFor(
      [&] {
        return Query(count, end) == std::map<std::string, double>{{"GPU-0", 4}};
      },
      25, kPoll))
      << last_reply_ << "\nsink: " << sink_->health().message;
  EXPECT_EQ(Query(sum, end), (std::map<std::string, double>{{"GPU-0", 1 + 2 + 3 + 4}}));
  ASSERT_TRUE(WaitFor([&] { return sink_->stats().buffered_requests == 0; }, 10, kPoll));
  EXPECT_EQ(sink_->health().state, SinkHealth::State::kOk);
  EXPECT_EQ(sink_->health().dropped, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Engines, RemoteWriteEngineTest,
    ::testing::Values(Engine{"prometheus", "prometheus", "prometheus", "/-/ready", "/api/v1/write",
                             ""},
                      Engine{"victoria_metrics", "victoria-metrics", "victoria-metrics", "/health",
                             "/api/v1/write", "/internal/force_flush"}),
    [](const ::testing::TestParamInfo<Engine>& param) { return param.param.name; });

}  // namespace
}  // namespace vigil
