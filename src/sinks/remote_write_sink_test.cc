// SPDX-License-Identifier: Apache-2.0
#include "sinks/remote_write_sink.h"

#include <stdlib.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>

#include "base/file_util.h"
#include "base/time_util.h"
#include "base/wait_for.h"
#include "sinks/remote_write_encoding.h"

namespace vigil {
namespace {

constexpr MetricDesc kValue{"vigil_test_value_ratio", "Test value.", MetricKind::kGauge, "ratio"};
constexpr int64_t kT0 = 1'764'410'994'123'000'000;  // A fixed Unix time in ns.

// A remote-write receiver in the test: decodes snappy + protobuf and records every request.
// Statuses can be scripted, and the handler can be held to simulate a slow receiver.
class FakeReceiver {
 public:
  ~FakeReceiver() { Stop(); }

  bool Start(int port = 0) {
    server_ = std::make_unique<httplib::Server>();
    server_->Post(
        ".*", [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); });
    if (port == 0) {
      port_ = server_->bind_to_any_port("127.0.0.1");
    } else {
      port_ = server_->bind_to_port("127.0.0.1", port) ? port : -1;
    }
    if (port_ <= 0) {
      return false;
    }
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    return WaitFor([this] { return server_->is_running(); });
  }
  void Stop() {
    Release();
    if (server_) {
      server_->stop();
    }
    if (thread_.joinable()) {
      thread_.join();
    }
    server_.reset();
  }
  void Script(std::vector<int> statuses) {
    std::lock_guard lock(mu_);
    script_ = std::move(statuses);
  }
  void Hold() {
    std::lock_guard lock(mu_);
    hold_ = true;
  }
  void Release() {
    {
      std::lock_guard lock(mu_);
      hold_ = false;
    }
    cv_.notify_all();
  }

  int port() const { return port_; }
  int attempts() {
    std::lock_guard lock(mu_);
    return attempts_;
  }
  int waiting() {
    std::lock_guard lock(mu_);
    return waiting_;
  }
  // Series of every accepted request, in arrival order.
  std::vector<RwTimeSeries> accepted() {
    std::lock_guard lock(mu_);
    return accepted_;
  }
  std::vector<std::vector<RwTimeSeries>> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  size_t accepted_samples() {
    std::lock_guard lock(mu_);
    size_t n = 0;
    for (const RwTimeSeries& ts : accepted_) {
      n += ts.samples.size();
    }
    return n;
  }
  httplib::Headers last_headers() {
    std::lock_guard lock(mu_);
    return last_headers_;
  }
  std::string last_path() {
    std::lock_guard lock(mu_);
    return last_path_;
  }
  std::vector<std::string> errors() {
    std::lock_guard lock(mu_);
    return errors_;
  }

 private:
  void Handle(const httplib::Request& req, httplib::Response& res) {
    std::unique_lock lock(mu_);
    ++attempts_;
    ++waiting_;
    cv_.wait(lock, [this] { return !hold_; });
    --waiting_;
    last_headers_ = req.headers;
    last_path_ = req.path;
    if (!script_.empty()) {
      res.status = script_.front();
      script_.erase(script_.begin());
      res.set_content("scripted failure", "text/plain");
      return;
    }
    StatusOr<std::string> proto = SnappyUncompress(req.body);
    StatusOr<std::vector<RwTimeSeries>> series =
        proto.ok() ? DecodeWriteRequest(*proto)
                   : StatusOr<std::vector<RwTimeSeries>>(proto.status());
    if (!series.ok()) {
      errors_.push_back(series.status().ToString());
      res.status = 400;
      return;
    }
    requests_.push_back(*series);
    accepted_.insert(accepted_.end(), series->begin(), series->end());
    res.status = 204;
  }

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = -1;
  std::mutex mu_;
  std::condition_variable cv_;
  bool hold_ = false;
  int attempts_ = 0;
  int waiting_ = 0;
  std::vector<int> script_;
  std::vector<RwTimeSeries> accepted_;
  std::vector<std::vector<RwTimeSeries>> requests_;
  httplib::Headers last_headers_;
  std::string last_path_;
  std::vector<std::string> errors_;
};

BatchPtr MakeBatch(int64_t time_ns, const std::vector<std::pair<Labels, double>>& samples,
                   std::string source = "test") {
  auto batch = std::make_shared<MetricBatch>();
  batch->time_ns = time_ns;
  batch->source = std::move(source);
  for (const auto& [labels, value] : samples) {
    batch->samples.push_back(Sample{&kValue, labels, value, time_ns});
  }
  return batch;
}

class RemoteWriteSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(receiver_.Start());
    char templ[] = "/tmp/rwsink-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    tmp_ = templ;
  }
  void TearDown() override { std::filesystem::remove_all(tmp_); }

  RemoteWriteSinkOptions Options() {
    RemoteWriteSinkOptions o;
    o.url = "http://127.0.0.1:" + std::to_string(receiver_.port()) + "/api/v1/write";
    o.host_label_value = "testhost";
    o.version = "9.9.9";
    o.buffer_dir = tmp_ + "/buffer";
    o.connect_timeout_ns = 2 * kNanosPerSecond;
    o.request_timeout_ns = 5 * kNanosPerSecond;
    o.backoff = {.initial_ns = 10 * kNanosPerMilli, .max_ns = 100 * kNanosPerMilli};
    return o;
  }
  std::unique_ptr<RemoteWriteSink> MakeSink(RemoteWriteSinkOptions o) {
    StatusOr<std::unique_ptr<RemoteWriteSink>> sink = RemoteWriteSink::Create(std::move(o));
    EXPECT_TRUE(sink.ok()) << sink.status().ToString();
    return sink.ok() ? std::move(sink).value() : nullptr;
  }

  FakeReceiver receiver_;
  std::string tmp_;
};

TEST_F(RemoteWriteSinkTest, PostsSnappyProtobufWithTheRequiredHeaders) {
  RemoteWriteSinkOptions o = Options();
  o.url = "http://127.0.0.1:" + std::to_string(receiver_.port());  // No path: the default one.
  auto sink = MakeSink(o);
  sink->Consume(MakeBatch(kT0, {{{{"gpu_uuid", "GPU-1"}}, 0.25}, {{{"gpu_uuid", "GPU-2"}}, 1}}));
  ASSERT_TRUE(WaitFor([&] { return receiver_.accepted_samples() == 2; }));
  sink->Flush(5 * kNanosPerSecond);  // The sink has seen the answer too.
  const httplib::Headers h = receiver_.last_headers();
  auto header = [&](const char* name) {
    auto it = h.find(name);
    return it == h.end() ? std::string("<absent>") : it->second;
  };
  EXPECT_EQ(header("Content-Encoding"), "snappy");
  EXPECT_EQ(header("Content-Type"), "application/x-protobuf");
  EXPECT_EQ(header("X-Prometheus-Remote-Write-Version"), "0.1.0");
  EXPECT_EQ(header("User-Agent"), "vigil/9.9.9");
  EXPECT_EQ(receiver_.last_path(), "/api/v1/write");
  const std::vector<RwTimeSeries> got = receiver_.accepted();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].labels, (RwLabels{{"__name__", "vigil_test_value_ratio"},
                                     {"gpu_uuid", "GPU-1"},
                                     {"host", "testhost"}}));
  EXPECT_EQ(got[0].samples, (std::vector<RwSample>{{0.25, kT0 / kNanosPerMilli}}));
  EXPECT_EQ(got[1].samples, (std::vector<RwSample>{{1, kT0 / kNanosPerMilli}}));
  EXPECT_TRUE(receiver_.errors().empty());
  const RemoteWriteStats stats = sink->stats();
  EXPECT_EQ(stats.requests_sent, 1u);
  EXPECT_EQ(stats.samples_sent, 2u);
  EXPECT_EQ(sink->health().state, SinkHealth::State::kOk);
}

TEST_F(RemoteWriteSinkTest, DefaultClientNameHeaderCarriesTheBuildVersion) {
  RemoteWriteSinkOptions o = Options();
  o.version = "";
  auto sink = MakeSink(o);
  sink->Consume(MakeBatch(kT0, {{{}, 1}}));
  ASSERT_TRUE(WaitFor([&] { return receiver_.accepted_samples() == 1; }));
  const std::string client = receiver_.last_headers().find("User-Agent")->second;
  EXPECT_TRUE(client.starts_with("vigil/")) << client;
  EXPECT_GT(client.size(), std::string("vigil/").size());
}

TEST_F(RemoteWriteSinkTest, SendsOneStaleMarkerWhenASeriesEnds) {
  auto sink = MakeSink(Options());
  sink->Consume(MakeBatch(kT0, {{{{"job_id", "a"}}, 1}, {{{"job_id", "b"}}, 2}}));
  sink->Consume(MakeBatch(kT0 + kNanosPerSecond, {{{{"job_id", "a"}}, 1}}));
  sink->Consume(MakeBatch(kT0 + 2 * kNanosPerSecond, {{{{"job_id", "a"}}, 1}}));
  ASSERT_TRUE(WaitFor([&] { return receiver_.accepted_samples() == 5; }))
      << receiver_.accepted_samples();
  std::vector<RwSample> b_samples;
  for (const RwTimeSeries& ts : receiver_.accepted()) {
    if (ts.labels[2].second == "b") {
      b_samples.insert(b_samples.end(), ts.samples.begin(), ts.samples.end());
    }
  }
  ASSERT_EQ(b_samples.size(), 2u);
  EXPECT_EQ(b_samples[0], (RwSample{2, kT0 / kNanosPerMilli}));
  EXPECT_TRUE(IsStaleNaN(b_samples[1].value));
  EXPECT_EQ(b_samples[1].timestamp_ms, (kT0 + kNanosPerSecond) / kNanosPerMilli);
  EXPECT_EQ(sink->stats().stale_markers, 1u);
}

TEST_F(RemoteWriteSinkTest, StaleMarkersCanBeTurnedOff) {
  RemoteWriteSinkOptions o = Options();
  o.staleness_markers = false;
  auto sink = MakeSink(o);
  sink->Consume(MakeBatch(kT0, {{{{"job_id", "a"}}, 1}}));
  sink->Consume(MakeBatch(kT0 + kNanosPerSecond, {}));
  sink->Consume(MakeBatch(kT0 + 2 * kNanosPerSecond, {{{{"job_id", "c"}}, 1}}));
  ASSERT_TRUE(WaitFor([&] { return receiver_.accepted_samples() == 2; }));
  sink->Flush(5 * kNanosPerSecond);
  EXPECT_EQ(receiver_.accepted_samples(), 2u);
  EXPECT_EQ(sink->stats().stale_markers, 0u);
}

TEST_F(RemoteWriteSinkTest, DuplicateLabelsAreDroppedBeforeSendingAndCounted) {
  auto sink = MakeSink(Options());
  sink->Consume(MakeBatch(kT0, {{{{"a", "1"}, {"a", "2"}}, 1}, {{{"a", "3"}}, 3}}));
  ASSERT_TRUE(WaitFor([&] { return receiver_.accepted_samples() == 1; }));
  sink->Flush(5 * kNanosPerSecond);
  const std::vector<RwTimeSeries> got = receiver_.accepted();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].labels[1], (std::pair<std::string, std::string>{"a", "3"}));
  EXPECT_EQ(sink->stats().invalid_samples, 1u);
}

TEST_F(RemoteWriteSinkTest, RetriesServerErrorsAndTooManyRequestsThenDelivers) {
  receiver_.Script({503, 500, 429});
  auto sink = MakeSink(Options());
  sink->Consume(MakeBatch(kT0, {{{}, 7}}));
  ASSERT_TRUE(WaitFor([&] { return receiver_.accepted_samples() == 1; }));
  EXPECT_EQ(receiver_.attempts(), 4);
  sink->Flush(5 * kNanosPerSecond);
  EXPECT_EQ(sink->stats().buffered_requests, 0u);
  const RemoteWriteStats stats = sink->stats();
  EXPECT_EQ(stats.send_failures, 3u);
  EXPECT_EQ(stats.requests_sent, 1u);
  EXPECT_EQ(stats.requests_rejected, 0u);
  EXPECT_EQ(sink->health().state, SinkHealth::State::kOk);
  EXPECT_EQ(sink->health().dropped, 0u);
}

TEST_F(RemoteWriteSinkTest, ClientErrorsAreDroppedWithoutRetry) {
  receiver_.Script({400});
  auto sink = MakeSink(Options());
  sink->Consume(MakeBatch(kT0, {{{}, 1}}));
  ASSERT_TRUE(WaitFor([&] { return sink->stats().requests_rejected == 1; }));
  sink->Consume(MakeBatch(kT0 + kNanosPerSecond, {{{}, 2}}));
  ASSERT_TRUE(WaitFor([&] { return receiver_.accepted_samples() == 1; }));
  sink->Flush(5 * kNanosPerSecond);
  EXPECT_EQ(receiver_.attempts(), 2);
  EXPECT_EQ(receiver_.accepted()[0].samples[0].value, 2);
  const RemoteWriteStats stats = sink->stats();
  EXPECT_EQ(stats.samples_rejected, 1u);
  EXPECT_EQ(stats.last_http_status, 204);
  EXPECT_EQ(sink->health().dropped, 1u);
}

TEST_F(RemoteWriteSinkTest, ReadDeadlineTurnsAHungReceiverIntoARetry) {
  receiver_.Hold();
  RemoteWriteSinkOptions o = Options();
  o.request_timeout_ns = 200 * kNanosPerMilli;
  auto sink = MakeSink(o);
  sink->Consume(MakeBatch(kT0, {{{}, 1}}));
  ASSERT_TRUE(WaitFor([&] { return sink->stats().send_failures >= 1; }));
  EXPECT_EQ(sink->stats().last_http_status, 0);
  // The failure is counted before the health is updated: wait for the health, which stays failed
  // while the receiver holds every request.
  EXPECT_TRUE(WaitFor([&] { return sink->health().state == SinkHealth::State::kFailed; }));
  receiver_.Release();
  // At least once: the request that timed out may also have been taken by the receiver.
  ASSERT_TRUE(WaitFor([&] { return sink->stats().requests_sent >= 1; }));
  ASSERT_TRUE(WaitFor([&] { return sink->stats().buffered_requests == 0; }));
  EXPECT_GE(receiver_.accepted_samples(), 1u);
  for (const RwTimeSeries& ts : receiver_.accepted()) {
    EXPECT_EQ(ts.samples, (std::vector<RwSample>{{1, kT0 / kNanosPerMilli}}));
  }
}

TEST_F(RemoteWriteSinkTest, OutageIsBufferedOnDiskAndReplayedInOrder) {
  const int port = receiver_.port();
  receiver_.Stop();
  auto sink = MakeSink(Options());
  for (int i = 0; i < 5; ++i) {
    sink->Consume(MakeBatch(kT0 + i * kNanosPerSecond, {{{}, static_cast<double>(i)}}));
    sink->Flush(5 * kNanosPerSecond);  // Each batch its own request.
  }
  ASSERT_TRUE(WaitFor([&] { return sink->stats().buffered_requests == 5; }))
      << sink->stats().buffered_requests;
  const SinkHealth failing = sink->health();
  EXPECT_EQ(failing.state, SinkHealth::State::kFailed);
  EXPECT_NE(failing.message.find("5 requests"), std::string::npos) << failing.message;
  EXPECT_EQ(ListDir(tmp_ + "/buffer")->size(), 5u);

  ASSERT_TRUE(receiver_.Start(port));
  ASSERT_TRUE(WaitFor([&] { return receiver_.accepted_samples() == 5; }))
      << receiver_.accepted_samples();
  const std::vector<RwTimeSeries> got = receiver_.accepted();
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(got[i].samples[0],
              (RwSample{static_cast<double>(i), (kT0 + i * kNanosPerSecond) / kNanosPerMilli}));
  }
  // The last request is popped from the buffer just after the receiver has it.
  ASSERT_TRUE(WaitFor([&] { return sink->stats().buffered_requests == 0; }));
  EXPECT_EQ(sink->health().state, SinkHealth::State::kOk);
  EXPECT_TRUE(ListDir(tmp_ + "/buffer")->empty());
  EXPECT_EQ(sink->health().dropped, 0u);
}

TEST_F(RemoteWriteSinkTest, BufferedRequestsSurviveASinkRestart) {
  const int port = receiver_.port();
  receiver_.Stop();
  {
    auto sink = MakeSink(Options());
    for (int i = 0; i < 3; ++i) {
      sink->Consume(MakeBatch(kT0 + i * kNanosPerSecond, {{{}, static_cast<double>(i)}}));
      sink->Flush(5 * kNanosPerSecond);
    }
    ASSERT_TRUE(WaitFor([&] { return sink->stats().buffered_requests == 3; }));
    sink->Stop();
    EXPECT_EQ(sink->health().state, SinkHealth::State::kStopped);
  }
  ASSERT_TRUE(receiver_.Start(port));
  auto sink = MakeSink(Options());
  ASSERT_TRUE(WaitFor([&] { return receiver_.accepted_samples() == 3; }));
  const std::vector<RwTimeSeries> got = receiver_.accepted();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i].samples[0].value, i);
  }
}

TEST_F(RemoteWriteSinkTest, FullQueueDropsTheOldestBatchAndCountsIt) {
  receiver_.Hold();
  RemoteWriteSinkOptions o = Options();
  o.max_queued_batches = 2;
  auto sink = MakeSink(o);
  sink->Consume(MakeBatch(kT0, {{{}, 0}}));
  ASSERT_TRUE(WaitFor([&] { return receiver_.waiting() == 1; }));  // The sink thread is busy.
  for (int i = 1; i <= 5; ++i) {
    sink->Consume(MakeBatch(kT0 + i * kNanosPerSecond, {{{}, static_cast<double>(i)}}));
  }
  EXPECT_EQ(sink->stats().batches_dropped, 3u);
  EXPECT_EQ(sink->health().dropped, 3u);
  receiver_.Release();
  ASSERT_TRUE(WaitFor([&] { return receiver_.accepted_samples() == 3; }));
  std::vector<double> values;
  for (const RwTimeSeries& ts : receiver_.accepted()) {
    for (const RwSample& s : ts.samples) {
      values.push_back(s.value);
    }
  }
  EXPECT_EQ(values, (std::vector<double>{0, 4, 5}));
}

TEST_F(RemoteWriteSinkTest, LargeBatchesAreSplitAtMaxSamplesPerRequest) {
  RemoteWriteSinkOptions o = Options();
  o.max_samples_per_request = 10;
  auto sink = MakeSink(o);
  std::vector<std::pair<Labels, double>> samples;
  for (int i = 0; i < 25; ++i) {
    samples.push_back({{{"cpu", std::to_string(i)}}, static_cast<double>(i)});
  }
  sink->Consume(MakeBatch(kT0, samples));
  ASSERT_TRUE(WaitFor([&] { return receiver_.accepted_samples() == 25; }));
  const auto requests = receiver_.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].size(), 10u);
  EXPECT_EQ(requests[2].size(), 5u);
}

TEST_F(RemoteWriteSinkTest, CreateRejectsBadUrls) {
  for (const char* url : {"", "127.0.0.1:9090", "ftp://host/x", "http://", "http:///path"}) {
    RemoteWriteSinkOptions o = Options();
    o.url = url;
    StatusOr<std::unique_ptr<RemoteWriteSink>> sink = RemoteWriteSink::Create(o);
    EXPECT_EQ(sink.status().code(), StatusCode::kInvalidArgument) << url;
  }
}

TEST_F(RemoteWriteSinkTest, ConsumeAfterStopIsDroppedAndCounted) {
  auto sink = MakeSink(Options());
  sink->Stop();
  sink->Consume(MakeBatch(kT0, {{{}, 1}}));
  EXPECT_EQ(sink->health().state, SinkHealth::State::kStopped);
  EXPECT_EQ(sink->health().dropped, 1u);
  EXPECT_EQ(receiver_.attempts(), 0);
}

}  // namespace
}  // namespace vigil
