// SPDX-License-Identifier: Apache-2.0
// Every sink of the table, built from its config keys as vigild builds it, through the same
// fault: its receiver (or its file) goes away while batches keep coming, then comes back. Each
// must account for every sample exactly: sent + dropped = consumed, and for the sinks that
// buffer, nothing dropped at all. Plus the remote-write outage made long relative to the backoff
// and the buffer (short backoff steps and a small bound stand in for minutes of downtime).
#include "sinks/all_sinks.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/gzip.h"
#include "base/time_util.h"
#include "base/wait_for.h"
#include "sinks/remote_write_encoding.h"
#include "sinks/remote_write_sink.h"

namespace vigil {
namespace {

constexpr MetricDesc kAlloc{"vigil_gpu_allocated_seconds_total", "test", MetricKind::kCounter,
                            "seconds"};

BatchPtr MakeBatch(int index, int samples) {
  auto b = std::make_shared<MetricBatch>();
  b->time_ns = 1764410994000000000 + int64_t{index} * kNanosPerSecond;
  for (int i = 0; i < samples; ++i) {
    b->samples.push_back(Sample{&kAlloc,
                                {{"gpu_uuid", "G" + std::to_string(i)}, {"job_id", "7"}},
                                static_cast<double>(index),
                                b->time_ns});
  }
  return b;
}

// vigil-fleet's ingest and a remote-write receiver on one loopback port, counting the samples
// each really received (decoded from the bodies, not taken from the sender's word).
class Receiver {
 public:
  explicit Receiver(int port = 0) {
    server_.Post("/api/v1/ingest", [this](const httplib::Request& req, httplib::Response& res) {
      // This HTTP library may have inflated the gzip body already.
      StatusOr<std::string> body = IsGzip(req.body) ? Gunzip(req.body, 64 << 20) : req.body;
      const nlohmann::json j =
          nlohmann::json::parse(body.ok() ? *body : std::string(), nullptr, false);
      if (!j.is_object()) {
        res.status = 400;
        return;
      }
      std::lock_guard lock(mu_);
      fleet_ += j["samples"].size();
      res.set_content("{\"accepted\":true}", "application/json");
    });
    server_.Post("/api/v1/write", [this](const httplib::Request& req, httplib::Response& res) {
      StatusOr<std::string> proto = SnappyUncompress(req.body);
      StatusOr<std::vector<RwTimeSeries>> series =
          proto.ok() ? DecodeWriteRequest(*proto) : proto.status();
      if (!series.ok()) {
        res.status = 400;
        return;
      }
      std::lock_guard lock(mu_);
      for (const RwTimeSeries& ts : *series) remote_write_ += ts.samples.size();
      res.status = 204;
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
  size_t fleet() {
    std::lock_guard lock(mu_);
    return fleet_;
  }
  size_t remote_write() {
    std::lock_guard lock(mu_);
    return remote_write_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = -1;
  std::mutex mu_;
  size_t fleet_ = 0;
  size_t remote_write_ = 0;
};

class AllSinksFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/vigil-allsinks-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
    port_ = Receiver().port();  // Free now; the receiver is down until the test starts it.
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
  int port_ = 0;
};

TEST_F(AllSinksFaultTest, EveryTableSinkAccountsForEverySampleThroughAnOutage) {
  SinkConfig config;
  const std::string url = "http://127.0.0.1:" + std::to_string(port_);
  config.fleet_url = url;
  config.remote_write_url = url + "/api/v1/write";
  // The file's directory is a regular file during the outage: every write fails until it is one.
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/out", "").ok());
  config.jsonl = dir_ + "/out/samples.jsonl";
  const SinkContext context{.host_name = "node01", .state_dir = dir_ + "/state"};
  std::vector<std::unique_ptr<Sink>> sinks;
  for (const SinkInfo* info : AllSinks()) {
    StatusOr<std::unique_ptr<Sink>> sink = info->create(config, context);
    ASSERT_TRUE(sink.ok()) << info->name << ": " << sink.status().ToString();
    ASSERT_NE(*sink, nullptr) << info->name << " is not turned on by its own keys";
    EXPECT_EQ((*sink)->name(), info->name);
    sinks.push_back(std::move(*sink));
  }
  ASSERT_EQ(sinks.size(), AllSinks().size());

  uint64_t consumed = 0;
  auto push = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      BatchPtr b = MakeBatch(i, 5);
      consumed += b->samples.size();
      for (const auto& sink : sinks) sink->Consume(b);
    }
  };
  push(0, 10);  // Everything is down.
  ASSERT_TRUE(WaitFor([&] {
    for (const auto& sink : sinks) {
      if (sink->health().state != SinkHealth::State::kFailed) return false;
    }
    return true;
  })) << "every sink notices its outage";
  push(10, 20);

  // Everything comes back.
  Receiver receiver(port_);
  ASSERT_EQ(receiver.port(), port_);
  std::filesystem::remove(dir_ + "/out");
  std::filesystem::create_directories(dir_ + "/out");
  push(20, 30);
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const auto& sink : sinks) {
          const SinkHealth h = sink->health();
          if (h.sent_samples + h.dropped_samples != consumed || h.buffered != 0) return false;
        }
        return true;
      },
      60, std::chrono::milliseconds(20)));
  for (const auto& sink : sinks) {
    const SinkHealth h = sink->health();
    EXPECT_EQ(h.state, SinkHealth::State::kOk) << sink->name() << ": " << h.message;
    if (sink->name() == "jsonl") {
      EXPECT_GT(h.dropped_samples, 0u);  // No buffer: what it could not write, it counted.
    } else {
      EXPECT_EQ(h.dropped_samples, 0u) << sink->name();  // Buffered through the outage.
      EXPECT_EQ(h.sent_samples, consumed) << sink->name();
    }
  }
  EXPECT_EQ(receiver.fleet(), consumed);  // Received once each, decoded from the bodies.
  EXPECT_EQ(receiver.remote_write(), consumed);
}

TEST_F(AllSinksFaultTest, RemoteWriteOutageLongerThanBackoffAndBufferCountsEveryLoss) {
  RemoteWriteSinkOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(port_) + "/api/v1/write";
  o.buffer_dir = dir_ + "/rw";
  o.staleness_markers = false;
  o.connect_timeout_ns = 200'000'000;
  // Steps of 1..20 ms: the outage below is a hundred backoff periods, as minutes would be with
  // the default 250 ms..30 s steps.
  o.backoff = {.initial_ns = 1'000'000, .max_ns = 20'000'000, .jitter = 0.2};
  o.max_buffer_bytes = 4096;  // A handful of requests: the outage outlasts the buffer.
  auto sink = RemoteWriteSink::Create(o);
  ASSERT_TRUE(sink.ok());
  uint64_t consumed = 0;
  for (int i = 0; i < 60; ++i) {
    BatchPtr b = MakeBatch(i, 20);
    consumed += b->samples.size();
    (*sink)->Consume(b);
    (*sink)->Flush(kNanosPerSecond);  // One request each: the buffer fills request by request.
  }
  ASSERT_TRUE(WaitFor([&] { return (*sink)->stats().send_failures >= 100; }, 60));
  const RemoteWriteStats down = (*sink)->stats();
  EXPECT_GT(down.buffer_dropped, 0u);  // The outage outlasted the buffer: the oldest went.
  EXPECT_LE(down.buffered_bytes, o.max_buffer_bytes);

  Receiver receiver(port_);
  ASSERT_TRUE(WaitFor([&] { return (*sink)->health().buffered == 0; }, 60));
  const SinkHealth h = (*sink)->health();
  EXPECT_EQ(h.state, SinkHealth::State::kOk) << h.message;
  EXPECT_EQ(h.sent_samples, receiver.remote_write());
  EXPECT_EQ(h.sent_samples + h.dropped_samples, consumed);  // Every loss counted, none silent.
  EXPECT_GT(h.sent_samples, 0u);
}

}  // namespace
}  // namespace vigil
