// SPDX-License-Identifier: Apache-2.0
// JSON-lines sink: one JSON object per sample,
//   {"name":..., "kind":"gauge", "unit":"bytes", "labels":{...}, "value":1.5,
//    "time_ns":1764410994123000000, "time":"2026-11-29T10:09:54.123Z"}
// written to stdout ("-") or to a file that rotates by size. Consume() only queues on the shared
// push pipeline (sink_pipeline.h), whose thread encodes and writes. The queue is bounded: when
// full, the oldest batch is dropped and counted in health().dropped. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "sinks/rotating_file.h"
#include "sinks/sink.h"
#include "sinks/sink_pipeline.h"

namespace vigil {

struct JsonlSinkOptions {
  std::string path = "-";            // "-" = stdout.
  size_t max_file_bytes = 64 << 20;  // Rotate past this size (files only).
  int keep_files = 5;                // Rotated files kept: path.1 ... path.N.
  size_t max_queued_batches = 256;
};

class JsonlSink : public Sink, private PipelineStage {
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
  void Process(std::vector<BatchPtr> batches) override;
  int64_t Pump(bool /*stopping*/) override { return 0; }
  bool Settled() const override { return true; }
  Status WriteOut(std::string_view data);

  const JsonlSinkOptions options_;
  RotatingFile file_;   // Used only on the pipeline's thread.
  std::string buffer_;  // Likewise.

  mutable std::mutex mu_;
  uint64_t write_dropped_ = 0;          // Batches lost to failed writes...
  uint64_t write_dropped_samples_ = 0;  // ...and their samples.
  uint64_t written_samples_ = 0;
  std::string error_;
  SinkPipeline pipeline_;  // Last: its thread calls into every member above.
};

}  // namespace vigil
