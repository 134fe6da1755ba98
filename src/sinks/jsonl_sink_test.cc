// SPDX-License-Identifier: Apache-2.0
#include "sinks/jsonl_sink.h"

#include <stdlib.h>

#include <memory>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/time_util.h"

namespace vigil {
namespace {

constexpr MetricDesc kBytes{"vigil_host_memory_used_bytes", "Memory in use.", MetricKind::kGauge,
                            "bytes"};

BatchPtr MakeBatch(int64_t time_ns, double value) {
  auto batch = std::make_shared<MetricBatch>();
  batch->time_ns = time_ns;
  MetricWriter writer(batch.get());
  writer.Add(kBytes, value, {{"host", "h1"}, {"device", "a\"b"}});
  return batch;
}

TEST(JsonlSinkTest, EncodesOneObjectPerSample) {
  std::string out;
  JsonlSink::Encode(*MakeBatch(1764410994123000000, 42.5), &out);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.back(), '\n');
  auto line = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(line.is_discarded());
  EXPECT_EQ(line["name"], "vigil_host_memory_used_bytes");
  EXPECT_EQ(line["kind"], "gauge");
  EXPECT_EQ(line["unit"], "bytes");
  EXPECT_EQ(line["labels"]["device"], "a\"b");
  EXPECT_EQ(line["labels"]["host"], "h1");
  EXPECT_EQ(line["value"], 42.5);
  EXPECT_EQ(line["time_ns"], 1764410994123000000);
  EXPECT_EQ(line["time"], "2025-11-29T10:09:54.123Z");
}

TEST(JsonlSinkTest, WritesEveryConsumedBatchToTheFile) {
  char templ[] = "/tmp/vigil-jsonlXXXXXX";
  const std::string dir = mkdtemp(templ);
  const std::string path = dir + "/samples.jsonl";
  JsonlSink sink(JsonlSinkOptions{.path = path, .max_file_bytes = 1 << 20, .keep_files = 1});
  for (int i = 0; i < 10; ++i) {
    sink.Consume(MakeBatch(1000 + i, i));
  }
  sink.Flush(10 * kNanosPerSecond);
  auto text = ReadSmallFile(path);
  ASSERT_TRUE(text.ok());
  std::string_view rest = *text;
  std::string_view line;
  int lines = 0;
  while (NextLine(&rest, &line)) {
    auto doc = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << line;
    EXPECT_EQ(doc["value"], lines);
    ++lines;
  }
  EXPECT_EQ(lines, 10);
  EXPECT_EQ(sink.health().state, SinkHealth::State::kOk);
  EXPECT_EQ(sink.health().dropped, 0u);
  sink.Stop();
  EXPECT_EQ(sink.health().state, SinkHealth::State::kStopped);
  std::string cmd = "rm -rf " + dir;
  ASSERT_EQ(system(cmd.c_str()), 0);
}

TEST(JsonlSinkTest, UnwritablePathMakesTheSinkFailedAndCountsDrops) {
  JsonlSink sink(JsonlSinkOptions{.path = "/proc/vigil-cannot-write/x.jsonl"});
  sink.Consume(MakeBatch(1, 1));
  sink.Flush(10 * kNanosPerSecond);
  SinkHealth h = sink.health();
  EXPECT_EQ(h.state, SinkHealth::State::kFailed);
  EXPECT_FALSE(h.message.empty());
  EXPECT_EQ(h.dropped, 1u);
}

TEST(JsonlSinkTest, FullQueueDropsTheOldestBatch) {
  // With room for one batch, a burst faster than the writer drops older batches: every batch is
  // either written or counted as dropped, and the newest one is always written.
  char templ[] = "/tmp/vigil-jsonlXXXXXX";
  const std::string dir = mkdtemp(templ);
  JsonlSink sink(JsonlSinkOptions{.path = dir + "/q.jsonl", .max_queued_batches = 1});
  for (int i = 0; i < 200; ++i) {
    sink.Consume(MakeBatch(i, i));
  }
  sink.Flush(10 * kNanosPerSecond);
  auto text = ReadSmallFile(dir + "/q.jsonl");
  ASSERT_TRUE(text.ok());
  // Whatever was dropped was counted, and the newest batch always made it.
  size_t lines = 0;
  for (char c : *text) {
    lines += c == '\n';
  }
  EXPECT_EQ(lines + sink.health().dropped, 200u);
  EXPECT_NE(text->find("\"value\":199.0"), std::string::npos);
  std::string cmd = "rm -rf " + dir;
  ASSERT_EQ(system(cmd.c_str()), 0);
}

}  // namespace
}  // namespace vigil
