// SPDX-License-Identifier: Apache-2.0
#include "sinks/jsonl_sink.h"

#include <errno.h>
#include <unistd.h>

#include <utility>

#include <nlohmann/json.hpp>

#include "base/logging.h"
#include "base/time_util.h"

namespace vigil {

JsonlSink::JsonlSink(JsonlSinkOptions options)
    : options_(std::move(options)),
      file_(options_.path, options_.max_file_bytes, options_.keep_files),
      pipeline_({.name = "jsonl", .max_queued_batches = options_.max_queued_batches}, this) {
  pipeline_.Start();
}

JsonlSink::~JsonlSink() { Stop(); }

void JsonlSink::Encode(const MetricBatch& batch, std::string* out) {
  for (const Sample& s : batch.samples) {
    nlohmann::json line;
    line["name"] = s.desc->name;
    line["kind"] = MetricKindName(s.desc->kind);
    line["unit"] = s.desc->unit;
    nlohmann::json labels = nlohmann::json::object();
    for (const auto& [key, value] : s.labels) {
      labels[key] = value;
    }
    line["labels"] = std::move(labels);
    line["value"] = s.value;
    line["time_ns"] = s.time_ns;
    line["time"] = FormatTimestamp(s.time_ns);
    out->append(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    out->push_back('\n');
  }
}

void JsonlSink::Consume(BatchPtr batch) { pipeline_.Push(std::move(batch)); }

SinkHealth JsonlSink::health() const {
  SinkHealth h;
  const DropCounts queue = pipeline_.drops();
  std::lock_guard lock(mu_);
  h.dropped = queue.batches + write_dropped_;
  h.dropped_samples = queue.samples + write_dropped_samples_;
  h.sent_samples = written_samples_;
  if (pipeline_.stopped()) {
    h.state = SinkHealth::State::kStopped;
  } else if (!error_.empty()) {
    h.state = SinkHealth::State::kFailed;
    h.message = error_;
  }
  return h;
}

Status JsonlSink::WriteOut(std::string_view data) {
  if (options_.path != "-") {
    return file_.Write(data);
  }
  while (!data.empty()) {
    const ssize_t n = write(STDOUT_FILENO, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return ErrnoStatus(errno, "write stdout");
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return OkStatus();
}

void JsonlSink::Process(std::vector<BatchPtr> batches) {
  buffer_.clear();
  uint64_t samples = 0;
  for (const BatchPtr& batch : batches) {
    Encode(*batch, &buffer_);
    samples += batch->samples.size();
  }
  Status s = WriteOut(buffer_);
  std::lock_guard lock(mu_);
  if (s.ok()) {
    written_samples_ += samples;
    error_.clear();
    return;
  }
  write_dropped_ += batches.size();
  write_dropped_samples_ += samples;
  if (error_.empty()) {
    VIGIL_LOG_WARN("jsonl sink cannot write: err={}", s.message());
  }
  error_ = s.message();
}

void JsonlSink::Flush(int64_t timeout_ns) { pipeline_.Flush(timeout_ns); }

void JsonlSink::Stop() { pipeline_.Stop(); }

}  // namespace vigil
