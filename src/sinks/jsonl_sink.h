// SPDX-License-Identifier: Apache-2.0
// JSON-lines sink: one JSON object per sample,
//   {"name":..., "kind":"gauge", "unit":"bytes", "labels":{...}, "value":1.5,
//    "time_ns":1764410994123000000, "time":"2026-11-29T10:09:54.123Z"}
// written to stdout ("-") or to a file that rotates by size. Consume() only queues; a thread of
// its own encodes and writes. The queue is bounded: when full, the oldest batch is dropped and
// counted in health().dropped. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "sinks/rotating_file.h"
#include "sinks/sink.h"

namespace vigil {

struct JsonlSinkOptions {
  std::string path = "-";            // "-" = stdout.
  size_t max_file_bytes = 64 << 20;  // Rotate past this size (files only).
  int keep_files = 5;                // Rotated files kept: path.1 ... path.N.
  size_t max_queued_batches = 256;
};

class JsonlSink : public Sink {
 public:
  explicit JsonlSink(JsonlSinkOptions options);
  ~JsonlSink() override;
  JsonlSink(const JsonlSink&) = delete;
  JsonlSink& operator=(const JsonlSink&) = delete;

  std::string_view name() const override { return "jsonl"; }
  void Consume(BatchPtr batch) override;
  SinkHealth health() const override;
  void Flush(int64_t timeout_ns) override;
  void Stop() override;

  // One line (with '\n') per sample of `batch`, appended to `*out`. Exposed for tests.
  static void Encode(const MetricBatch& batch, std::string* out);

 private:
  void Loop(std::stop_token stop);
  Status WriteOut(std::string_view data);

  const JsonlSinkOptions options_;
  RotatingFile file_;  // Used only on the sink thread.

  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::deque<BatchPtr> queue_;
  uint64_t dropped_ = 0;
  uint64_t in_flight_ = 0;  // Batches taken off the queue and not yet written.
  bool stopped_ = false;
  std::string error_;
  std::jthread thread_;  // Last: started after every member above exists.
};

}  // namespace vigil
