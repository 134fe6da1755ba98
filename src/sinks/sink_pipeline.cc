// SPDX-License-Identifier: Apache-2.0
#include "sinks/sink_pipeline.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "base/logging.h"
#include "base/time_util.h"

namespace vigil {
namespace {

std::chrono::steady_clock::time_point AtMono(int64_t mono_ns) {
  // MonotonicNanos() reads CLOCK_MONOTONIC, which is steady_clock's epoch on Linux.
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(mono_ns));
}

}  // namespace

SinkPipeline::SinkPipeline(PipelineOptions options, PipelineStage* stage)
    : options_(std::move(options)), stage_(stage) {}

SinkPipeline::~SinkPipeline() { Stop(); }

void SinkPipeline::Start() {
  thread_ = std::jthread([this](std::stop_token stop) { Loop(stop); });
}

void SinkPipeline::Push(BatchPtr batch) {
  if (!batch) {
    return;
  }
  {
    std::lock_guard lock(mu_);
    if (stopped_) {
      drops_.Add(1, batch->samples.size());
      return;
    }
    if (queue_.size() >= std::max<size_t>(options_.max_queued_batches, 1)) {
      const size_t samples = queue_.front()->samples.size();
      drops_.Add(1, samples);
      queued_samples_ -= samples;
      queue_.pop_front();
      VIGIL_LOG_EVERY_N_SEC(WARN, 60, "{} sink falling behind: dropped the oldest batch",
                            options_.name);
    }
    if (queue_.empty()) {
      first_queued_mono_ = MonotonicNanos();
    }
    queued_samples_ += batch->samples.size();
    queue_.push_back(std::move(batch));
    ++pushes_;
  }
  cv_.notify_all();
}

void SinkPipeline::Loop(std::stop_token stop) {
  while (true) {
    std::vector<BatchPtr> work;
    bool flush = false;
    {
      std::unique_lock lock(mu_);
      auto ready = [&] {
        if (stop.stop_requested() || flush_pending_) {
          return true;
        }
        const int64_t now = MonotonicNanos();
        if (!queue_.empty() &&
            (flushers_ > 0 || now - first_queued_mono_ >= options_.linger_ns ||
             (options_.linger_samples > 0 && queued_samples_ >= options_.linger_samples))) {
          return true;
        }
        return wake_mono_ > 0 && now >= wake_mono_;
      };
      while (!ready()) {
        int64_t until = wake_mono_;
        if (!queue_.empty()) {
          const int64_t linger_end = first_queued_mono_ + options_.linger_ns;
          until = until == 0 ? linger_end : std::min(until, linger_end);
        }
        // Wake on readiness, or on a push that may start a linger deadline to wait for.
        const uint64_t pushes = pushes_;
        auto changed = [&] { return pushes_ != pushes || ready(); };
        if (until == 0) {
          cv_.wait(lock, stop, changed);
        } else {
          cv_.wait_until(lock, stop, AtMono(until), changed);
        }
      }
      work.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
      queue_.clear();
      queued_samples_ = 0;
      flush = flush_pending_;
      flush_pending_ = false;
      busy_ = true;
    }
    const bool stopping = stop.stop_requested();
    if (flush) {
      stage_->OnFlush();
    }
    if (!work.empty()) {
      stage_->Process(std::move(work));
    }
    const int64_t wake = stage_->Pump(stopping);
    const bool settled = stage_->Settled();
    {
      std::lock_guard lock(mu_);
      busy_ = false;
      wake_mono_ = wake;
      settled_ = settled;
    }
    cv_.notify_all();
    if (stopping) {
      return;
    }
  }
}

void SinkPipeline::Flush(int64_t timeout_ns) {
  std::unique_lock lock(mu_);
  if (!thread_.joinable()) {
    return;
  }
  ++flushers_;
  flush_pending_ = true;
  cv_.notify_all();
  cv_.wait_for(lock, std::chrono::nanoseconds(timeout_ns),
               [this] { return queue_.empty() && !busy_ && !flush_pending_ && settled_; });
  --flushers_;
}

void SinkPipeline::Stop() {
  if (!thread_.joinable()) {
    return;
  }
  Flush(options_.stop_timeout_ns);
  thread_.request_stop();
  cv_.notify_all();
  thread_.join();
  std::lock_guard lock(mu_);
  stopped_ = true;
  for (const BatchPtr& batch : queue_) {  // Pushed after the thread's last look.
    drops_.Add(1, batch->samples.size());
  }
  queue_.clear();
}

bool SinkPipeline::stopped() const {
  std::lock_guard lock(mu_);
  return stopped_;
}

DropCounts SinkPipeline::drops() const {
  std::lock_guard lock(mu_);
  return drops_;
}

}  // namespace vigil
