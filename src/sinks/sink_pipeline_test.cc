// SPDX-License-Identifier: Apache-2.0
#include "sinks/sink_pipeline.h"

#include <atomic>
#include <mutex>
#include <vector>

#include <gtest/gtest.h>

#include "base/time_util.h"
#include "base/wait_for.h"

namespace vigil {
namespace {

constexpr MetricDesc kDesc{"vigil_test_value", "test", MetricKind::kGauge, ""};

BatchPtr MakeBatch(int samples) {
  auto b = std::make_shared<MetricBatch>();
  for (int i = 0; i < samples; ++i) {
    b->samples.push_back(Sample{&kDesc, {}, static_cast<double>(i), 1});
  }
  return b;
}

// Records what the pipeline hands it; can be held (a slow receiver) and can keep work pending
// (a receiver that is down) until released.
class RecordingStage : public PipelineStage {
 public:
  void Process(std::vector<BatchPtr> batches) override {
    entered_++;
    WaitFor([this] { return !hold_.load(); }, 30);
    std::lock_guard lock(mu_);
    rounds_.push_back(batches.size());
    for (const BatchPtr& b : batches) samples_ += b->samples.size();
  }
  int64_t Pump(bool stopping) override {
    pumps_++;
    if (stopping) stopping_rounds_++;
    return pending_.load() ? MonotonicNanos() + 1'000'000 : 0;
  }
  void OnFlush() override { flushes_++; }
  bool Settled() const override { return !pending_.load(); }

  std::vector<size_t> rounds() {
    std::lock_guard lock(mu_);
    return rounds_;
  }
  size_t samples() {
    std::lock_guard lock(mu_);
    return samples_;
  }
  std::atomic<bool> hold_{false};
  std::atomic<bool> pending_{false};
  std::atomic<int> stopping_rounds_{0};
  std::atomic<int> flushes_{0};
  std::atomic<int> entered_{0};
  std::atomic<int> pumps_{0};

 private:
  std::mutex mu_;
  std::vector<size_t> rounds_;
  size_t samples_ = 0;
};

TEST(SinkPipelineTest, FlushReturnsOnceEveryBatchWasProcessed) {
  RecordingStage stage;
  SinkPipeline pipeline({.name = "test"}, &stage);
  pipeline.Start();
  for (int i = 0; i < 10; ++i) pipeline.Push(MakeBatch(3));
  pipeline.Flush(10 * kNanosPerSecond);
  EXPECT_EQ(stage.samples(), 30u);
  EXPECT_GE(stage.flushes_.load(), 1);
  pipeline.Stop();
  EXPECT_EQ(stage.stopping_rounds_.load(), 1);
  EXPECT_TRUE(pipeline.stopped());
}

TEST(SinkPipelineTest, FlushWaitsUntilTheStageSettlesOrTheDeadline) {
  RecordingStage stage;
  stage.pending_ = true;  // The receiver is down: the stage keeps work to retry.
  SinkPipeline pipeline({.name = "test"}, &stage);
  pipeline.Start();
  pipeline.Push(MakeBatch(1));
  const int64_t start = MonotonicNanos();
  pipeline.Flush(200'000'000);
  EXPECT_GE(MonotonicNanos() - start, 200'000'000);  // Not settled: waited the whole deadline.
  stage.pending_ = false;
  pipeline.Flush(10 * kNanosPerSecond);  // Settles at the stage's next retry.
  EXPECT_EQ(stage.samples(), 1u);
}

TEST(SinkPipelineTest, LingerMergesBatchesIntoOneRound) {
  RecordingStage stage;
  SinkPipeline pipeline({.name = "test", .linger_ns = 60 * kNanosPerSecond, .linger_samples = 8},
                        &stage);
  pipeline.Start();
  for (int i = 0; i < 4; ++i) pipeline.Push(MakeBatch(2));  // 8 samples: the bound is reached.
  ASSERT_TRUE(WaitFor([&] { return stage.samples() == 8; }, 10));
  EXPECT_EQ(stage.rounds(), std::vector<size_t>{4});
}

TEST(SinkPipelineTest, LingeringBatchesGoOutWhenTheLingerEnds) {
  RecordingStage stage;
  SinkPipeline pipeline({.name = "test", .linger_ns = 100'000'000}, &stage);
  pipeline.Start();
  ASSERT_TRUE(WaitFor([&] { return stage.pumps_.load() == 1; }));  // The start-up round.
  const int64_t start = MonotonicNanos();
  pipeline.Push(MakeBatch(1));
  pipeline.Push(MakeBatch(1));
  ASSERT_TRUE(WaitFor([&] { return stage.samples() == 2; }, 10));
  EXPECT_GE(MonotonicNanos() - start, 100'000'000);
  EXPECT_EQ(stage.rounds(), std::vector<size_t>{2});
}

TEST(SinkPipelineTest, FullQueueDropsTheOldestAndCountsBatchesAndSamples) {
  RecordingStage stage;
  stage.hold_ = true;  // The worker is stuck in its first round.
  SinkPipeline pipeline({.name = "test", .max_queued_batches = 2}, &stage);
  pipeline.Start();
  pipeline.Push(MakeBatch(1));
  ASSERT_TRUE(WaitFor([&] { return stage.entered_.load() == 1; }));  // Took the first batch.
  pipeline.Push(nullptr);                                            // Ignored.
  for (int i = 0; i < 5; ++i) pipeline.Push(MakeBatch(10));
  const DropCounts drops = pipeline.drops();
  stage.hold_ = false;
  pipeline.Flush(10 * kNanosPerSecond);
  // Every sample pushed was either processed or counted as dropped.
  EXPECT_EQ(stage.samples() + drops.samples, 51u);
  EXPECT_EQ(drops.batches, 3u);  // Room for two: the newest two of the five stay.
  EXPECT_EQ(drops.samples, 30u);
}

TEST(SinkPipelineTest, PushAfterStopIsDroppedAndCounted) {
  RecordingStage stage;
  SinkPipeline pipeline({.name = "test"}, &stage);
  pipeline.Start();
  pipeline.Stop();
  pipeline.Push(MakeBatch(4));
  EXPECT_EQ(pipeline.drops().batches, 1u);
  EXPECT_EQ(pipeline.drops().samples, 4u);
  EXPECT_EQ(stage.samples(), 0u);
}

}  // namespace
}  // namespace vigil
