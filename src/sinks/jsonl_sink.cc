// SPDX-License-Identifier: Apache-2.0
#include "sinks/jsonl_sink.h"

#include <errno.h>
#include <unistd.h>

#include <chrono>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/logging.h"
#include "base/time_util.h"

namespace vigil {

JsonlSink::JsonlSink(JsonlSinkOptions options)
    : options_(std::move(options)),
      file_(options_.path, options_.max_file_bytes, options_.keep_files),
      thread_([this](std::stop_token stop) { Loop(stop); }) {}

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

void JsonlSink::Consume(BatchPtr batch) {
  if (!batch) {
    return;
  }
  {
    std::lock_guard lock(mu_);
    if (stopped_) {
      ++dropped_;
      return;
    }
    if (queue_.size() >= options_.max_queued_batches) {
      queue_.pop_front();
      ++dropped_;
    }
    queue_.push_back(std::move(batch));
  }
  cv_.notify_all();
}

SinkHealth JsonlSink::health() const {
  std::lock_guard lock(mu_);
  SinkHealth h;
  h.dropped = dropped_;
  if (stopped_) {
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

void JsonlSink::Loop(std::stop_token stop) {
  std::string buffer;
  while (true) {
    std::deque<BatchPtr> work;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, stop, [this] { return !queue_.empty(); });
      if (queue_.empty()) {
        return;  // Stop requested and nothing left to write.
      }
      work.swap(queue_);
      in_flight_ = work.size();
    }
    buffer.clear();
    for (const BatchPtr& batch : work) {
      Encode(*batch, &buffer);
    }
    Status s = WriteOut(buffer);
    {
      std::lock_guard lock(mu_);
      in_flight_ = 0;
      if (s.ok()) {
        error_.clear();
      } else {
        dropped_ += work.size();
        if (error_.empty()) {
          VIGIL_LOG_WARN("jsonl sink cannot write: err={}", s.message());
        }
        error_ = s.message();
      }
    }
    cv_.notify_all();
  }
}

void JsonlSink::Flush(int64_t timeout_ns) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, std::chrono::nanoseconds(timeout_ns),
               [this] { return queue_.empty() && in_flight_ == 0; });
}

void JsonlSink::Stop() {
  if (!thread_.joinable()) {
    return;
  }
  Flush(5 * kNanosPerSecond);
  thread_.request_stop();
  cv_.notify_all();
  thread_.join();
  std::lock_guard lock(mu_);
  stopped_ = true;
}

}  // namespace vigil
