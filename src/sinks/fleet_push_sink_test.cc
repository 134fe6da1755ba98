// SPDX-License-Identifier: Apache-2.0
#include "sinks/fleet_push_sink.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "base/time_util.h"
#include "base/wait_for.h"

namespace vigil {
namespace {

using nlohmann::json;

constexpr MetricDesc kAlloc{"vigil_gpu_allocated_seconds_total", "test", MetricKind::kCounter,
                            "seconds"};
constexpr MetricDesc kHostCpu{"vigil_host_cpu_seconds_total", "test", MetricKind::kCounter,
                              "seconds"};

BatchPtr MakeBatch(int index, int samples) {
  auto b = std::make_shared<MetricBatch>();
  for (int i = 0; i < samples; ++i) {
    b->samples.push_back(Sample{&kAlloc,
                                {{"gpu_uuid", "G" + std::to_string(i)}, {"job_id", "7"}},
                                static_cast<double>(index),
                                1764410994000000000 + index});
  }
  b->samples.push_back(Sample{&kHostCpu, {}, 1.0, 1});  // Not pushed by default.
  return b;
}

// A stand-in for vigil-fleet's ingest endpoint that records what it receives.
class Receiver {
 public:
  explicit Receiver(int port = 0, int status = 200) {
    server_.Post("/api/v1/ingest",
                 [this, status](const httplib::Request& req, httplib::Response& res) {
                   std::lock_guard lock(mu_);
                   gzip_ = req.get_header_value("Content-Encoding") == "gzip";
                   auth_ = req.get_header_value("Authorization");
                   bodies_.push_back(json::parse(req.body, nullptr, false));
                   res.status = status;
                   res.set_content("{}", "application/json");
                 });
    port_ = port == 0 ? server_.bind_to_any_port("127.0.0.1")
                      : (server_.bind_to_port("127.0.0.1", port) ? port : -1);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    WaitFor([this] { return server_.is_running(); });
  }
  ~Receiver() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  std::vector<json> bodies() {
    std::lock_guard lock(mu_);
    return bodies_;
  }
  size_t samples() {
    size_t n = 0;
    for (const json& b : bodies()) n += b["samples"].size();
    return n;
  }
  bool gzip() {
    std::lock_guard lock(mu_);
    return gzip_;
  }
  std::string auth() {
    std::lock_guard lock(mu_);
    return auth_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = -1;
  std::mutex mu_;
  std::vector<json> bodies_;
  bool gzip_ = false;
  std::string auth_;
};

int FreePort() {
  Receiver r;
  return r.port();
}

class FleetPushSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spool_ = std::filesystem::temp_directory_path() / ("vigil-spool-" + std::to_string(getpid()));
    std::filesystem::remove_all(spool_);
  }
  void TearDown() override { std::filesystem::remove_all(spool_); }
  FleetPushSinkOptions Options(int port) {
    FleetPushSinkOptions o;
    o.url = "http://127.0.0.1:" + std::to_string(port);
    o.host = "node01";
    o.token = "tok";
    o.spool_dir = spool_.string();
    o.linger_ns = 0;
    o.initial_backoff_ns = 10000000;
    o.max_backoff_ns = 50000000;
    o.stop_timeout_ns = 500000000;
    return o;
  }
  std::filesystem::path spool_;
};

TEST_F(FleetPushSinkTest, EncodesTheDocumentedPayload) {
  BatchPtr b = MakeBatch(3, 1);
  const std::string text = FleetPushSink::EncodePayload("node\"01", "id-1", 9, {&b->samples[0]});
  const json j = json::parse(text);
  EXPECT_EQ(j["host"], "node\"01");
  EXPECT_EQ(j["batch_id"], "id-1");
  EXPECT_EQ(j["seq"], 9);
  EXPECT_EQ(j["samples"][0]["name"], "vigil_gpu_allocated_seconds_total");
  EXPECT_EQ(j["samples"][0]["kind"], "counter");
  EXPECT_EQ(j["samples"][0]["labels"]["job_id"], "7");
  EXPECT_EQ(j["samples"][0]["value"], 3.0);
  EXPECT_EQ(j["samples"][0]["time_ns"], 1764410994000000003);
}

TEST_F(FleetPushSinkTest, DeliversGzipPayloadsWithTokenAndOnlyPushedFamilies) {
  Receiver r;
  auto sink = FleetPushSink::Create(Options(r.port()));
  ASSERT_TRUE(sink.ok());
  for (int i = 0; i < 5; ++i) (*sink)->Consume(MakeBatch(i, 4));
  (*sink)->Flush(10 * kNanosPerSecond);
  EXPECT_EQ(r.samples(), 20u);
  EXPECT_TRUE(r.gzip());
  EXPECT_EQ(r.auth(), "Bearer tok");
  EXPECT_EQ((*sink)->stats().sent_samples, 20u);
  EXPECT_EQ((*sink)->health().state, SinkHealth::State::kOk);
  EXPECT_TRUE(std::filesystem::is_empty(spool_));
}

TEST_F(FleetPushSinkTest, SpoolsWhileTheServiceIsDownAndReplaysInOrderAfterARestart) {
  const int port = FreePort();
  {
    auto sink = FleetPushSink::Create(Options(port));
    ASSERT_TRUE(sink.ok());
    for (int i = 0; i < 6; ++i) {
      (*sink)->Consume(MakeBatch(i, 3));
      ASSERT_TRUE(WaitFor([&] { return (*sink)->stats().spooled_batches == size_t(i + 1); }));
    }
    EXPECT_EQ((*sink)->health().state, SinkHealth::State::kFailed);
    (*sink)->Stop();  // The daemon stops with the service still down.
  }
  Receiver r(port);
  ASSERT_EQ(r.port(), port);
  auto sink = FleetPushSink::Create(Options(port));  // The daemon starts again.
  ASSERT_TRUE(sink.ok());
  (*sink)->Flush(10 * kNanosPerSecond);
  const std::vector<json> bodies = r.bodies();
  ASSERT_EQ(bodies.size(), 6u);
  for (size_t i = 0; i < bodies.size(); ++i) {
    EXPECT_EQ(bodies[i]["samples"][0]["value"], static_cast<double>(i));  // In order.
    if (i > 0) {
      EXPECT_GT(bodies[i]["seq"], bodies[i - 1]["seq"]);
    }
  }
  EXPECT_EQ((*sink)->stats().dropped_batches, 0u);
}

TEST_F(FleetPushSinkTest, FullSpoolDropsTheOldestAndCountsThem) {
  const int port = FreePort();
  FleetPushSinkOptions o = Options(port);
  {
    auto probe = FleetPushSink::Create(o);
    (*probe)->Consume(MakeBatch(0, 3));
    ASSERT_TRUE(WaitFor([&] { return (*probe)->stats().spooled_batches == 1; }));
    o.spool_max_bytes = (*probe)->stats().spooled_bytes * 2 + 8;  // Room for two payloads.
  }
  std::filesystem::remove_all(spool_);
  auto sink = FleetPushSink::Create(o);
  for (int i = 0; i < 5; ++i) {
    (*sink)->Consume(MakeBatch(i, 3));
    ASSERT_TRUE(WaitFor([&] {
      const FleetPushStats s = (*sink)->stats();
      return s.spooled_batches + s.dropped_batches == size_t(i + 1);
    }));
  }
  EXPECT_EQ((*sink)->stats().dropped_batches, 3u);
  EXPECT_EQ((*sink)->stats().dropped_samples, 9u);
  EXPECT_EQ((*sink)->health().dropped, 3u);
  Receiver r(port);
  (*sink)->Flush(10 * kNanosPerSecond);
  const std::vector<json> bodies = r.bodies();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[0]["samples"][0]["value"], 3.0);  // The newest two survive.
  EXPECT_EQ(bodies[1]["samples"][0]["value"], 4.0);
}

TEST_F(FleetPushSinkTest, RejectedPayloadIsDroppedNotRetried) {
  Receiver r(0, 400);
  auto sink = FleetPushSink::Create(Options(r.port()));
  (*sink)->Consume(MakeBatch(1, 2));
  (*sink)->Flush(10 * kNanosPerSecond);
  EXPECT_EQ(r.bodies().size(), 1u);
  EXPECT_EQ((*sink)->stats().dropped_batches, 1u);
  EXPECT_EQ((*sink)->stats().spooled_batches, 0u);
}

TEST_F(FleetPushSinkTest, RejectsBadUrls) {
  FleetPushSinkOptions o = Options(1);
  o.url = "ftp://x";
  EXPECT_FALSE(FleetPushSink::Create(o).ok());
  o.url = "http://127.0.0.1:1";
  o.host = "";
  EXPECT_FALSE(FleetPushSink::Create(o).ok());
}

}  // namespace
}  // namespace vigil
