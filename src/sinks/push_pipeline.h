// SPDX-License-Identifier: Apache-2.0
// The push pipeline every sink shares, for any kind of queued item (sample batches for JSON lines,
// remote-write and fleet push; trace files for the trace uploader): a bounded queue (when full,
// the oldest item is dropped, counted and handed to on_drop), one worker thread that hands what
// was queued to the sink's stage, Flush() that waits until the stage has written or delivered
// everything, and Stop() that flushes, joins the thread and counts what came too late. A sink
// implements PushStage (encode, write, send, buffer, retry) and owns one pipeline; its stage
// runs on the worker thread only, so the sink's I/O needs no lock of its own. A template so that
// each sink's items keep their own type; the one loop below serves them all.
// Thread-safe: Push(), Flush(), Stop(), drops() and stopped() may be called from any thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/logging.h"
#include "base/time_util.h"
#include "sinks/drop_counts.h"

namespace vigil {

struct PipelineOptions {
  std::string name;  // The sink's name, for logs.
  size_t max_queued_batches = 256;
  // Hold items up to linger_ns so they merge into one round, unless items of linger_samples
  // weight wait already (0 = no bound) or a Flush() asks for them.
  int64_t linger_ns = 0;
  size_t linger_samples = 0;
  int64_t stop_timeout_ns = 5'000'000'000;  // How long Stop() flushes first (0: it does not).
};

// What a sink plugs into the pipeline. Every method runs on the pipeline's worker thread.
template <typename Item>
class PushStage {
 public:
  virtual ~PushStage() = default;
  // Items taken off the queue, oldest first (never empty).
  virtual void Process(std::vector<Item> items) = 0;
  // Called after every round: retries that are due. `stopping` is true on the thread's last round.
  // Returns the monotonic time (MonotonicNanos()) of the next retry, or 0 when there is none.
  virtual int64_t Pump(bool stopping) = 0;
  // A Flush() started: retry now, whatever the backoff says.
  virtual void OnFlush() {}
  // Everything processed so far is written or delivered, as far as Flush() should wait for.
  virtual bool Settled() const = 0;
};

template <typename Item>
class PushPipeline {
 public:
  using Weigh = size_t (*)(const Item&);  // Samples an item stands for (drop accounting, linger).
  using OnDrop = std::function<void(Item)>;

  // `stage` is borrowed and must outlive Stop(). Start() begins the worker thread.
  PushPipeline(PipelineOptions options, PushStage<Item>* stage, Weigh weigh, OnDrop on_drop = {})
      : options_(std::move(options)), stage_(stage), weigh_(weigh), on_drop_(std::move(on_drop)) {}
  ~PushPipeline() { Stop(); }
  PushPipeline(const PushPipeline&) = delete;
  PushPipeline& operator=(const PushPipeline&) = delete;

  // Call once, after the stage is fully constructed.
  void Start() {
    thread_ = std::jthread([this](std::stop_token stop) { Loop(stop); });
  }

  // Queues one item; never blocks on I/O. After Stop() the item is dropped and counted.
  void Push(Item item) {
    std::vector<Item> dropped;
    {
      std::lock_guard lock(mu_);
      if (stopped_) {
        drops_.Add(1, weigh_(item));
        dropped.push_back(std::move(item));
      } else {
        if (queue_.size() >= std::max<size_t>(options_.max_queued_batches, 1)) {
          const size_t weight = weigh_(queue_.front());
          drops_.Add(1, weight);
          queued_weight_ -= weight;
          dropped.push_back(std::move(queue_.front()));
          queue_.pop_front();
          VIGIL_LOG_EVERY_N_SEC(WARN, 60, "{} sink falling behind: dropped the oldest item",
                                options_.name);
        }
        if (queue_.empty()) {
          first_queued_mono_ = MonotonicNanos();
        }
        queued_weight_ += weigh_(item);
        queue_.push_back(std::move(item));
        ++pushes_;
      }
    }
    cv_.notify_all();
    for (Item& d : dropped) {
      if (on_drop_) on_drop_(std::move(d));
    }
  }

  // Waits until the queue is empty and the stage is settled, at most timeout_ns.
  void Flush(int64_t timeout_ns) {
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

  // Flushes (stop_timeout_ns), runs the stage's last round and joins the thread. Idempotent.
  void Stop() {
    if (!thread_.joinable()) {
      return;
    }
    if (options_.stop_timeout_ns > 0) {
      Flush(options_.stop_timeout_ns);
    }
    thread_.request_stop();
    cv_.notify_all();
    thread_.join();
    std::deque<Item> late;
    {
      std::lock_guard lock(mu_);
      stopped_ = true;
      for (const Item& item : queue_) {  // Pushed after the thread's last look.
        drops_.Add(1, weigh_(item));
      }
      late.swap(queue_);
    }
    for (Item& d : late) {
      if (on_drop_) on_drop_(std::move(d));
    }
  }

  bool stopped() const {
    std::lock_guard lock(mu_);
    return stopped_;
  }
  DropCounts drops() const {  // Items dropped by the queue: overflow, or pushed after Stop().
    std::lock_guard lock(mu_);
    return drops_;
  }

 private:
  static std::chrono::steady_clock::time_point AtMono(int64_t mono_ns) {
    // MonotonicNanos() reads CLOCK_MONOTONIC, which is steady_clock's epoch on Linux.
    return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(mono_ns));
  }

  bool ReadyLocked(const std::stop_token& stop) const {
    if (stop.stop_requested() || flush_pending_) {
      return true;
    }
    const int64_t now = MonotonicNanos();
    if (!queue_.empty() &&
        (flushers_ > 0 || now - first_queued_mono_ >= options_.linger_ns ||
         (options_.linger_samples > 0 && queued_weight_ >= options_.linger_samples))) {
      return true;
    }
    return wake_mono_ > 0 && now >= wake_mono_;
  }

  void Loop(std::stop_token stop) {
    while (true) {
      std::vector<Item> work;
      bool flush = false;
      {
        std::unique_lock lock(mu_);
        while (!ReadyLocked(stop)) {
          int64_t until = wake_mono_;
          if (!queue_.empty()) {
            const int64_t linger_end = first_queued_mono_ + options_.linger_ns;
            until = until == 0 ? linger_end : std::min(until, linger_end);
          }
          // Wake on readiness, or on a push that may start a linger deadline to wait for.
          const uint64_t pushes = pushes_;
          auto changed = [&] { return pushes_ != pushes || ReadyLocked(stop); };
          if (until == 0) {
            cv_.wait(lock, stop, changed);
          } else {
            cv_.wait_until(lock, stop, AtMono(until), changed);
          }
        }
        work.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
        queue_.clear();
        queued_weight_ = 0;
        flush = flush_pending_;
        flush_pending_ = false;
        busy_ = true;
      }
      const bool stopping = stop.stop_requested();
      if (flush) stage_->OnFlush();
      if (!work.empty()) stage_->Process(std::move(work));
      const int64_t wake = stage_->Pump(stopping);
      const bool settled = stage_->Settled();
      {
        std::lock_guard lock(mu_);
        busy_ = false;
        wake_mono_ = wake;
        settled_ = settled;
      }
      cv_.notify_all();
      if (stopping) return;
    }
  }

  const PipelineOptions options_;
  PushStage<Item>* const stage_;
  const Weigh weigh_;
  const OnDrop on_drop_;

  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::deque<Item> queue_;
  size_t queued_weight_ = 0;
  uint64_t pushes_ = 0;
  int64_t first_queued_mono_ = 0;
  // The stage's next retry; 0 = none. The first round runs at once: the stage may hold work
  // from an earlier run (a buffer left on disk).
  int64_t wake_mono_ = 1;
  bool busy_ = false;  // The worker is in a round.
  bool settled_ = true;
  int flushers_ = 0;            // Flush() calls waiting.
  bool flush_pending_ = false;  // A Flush() the worker has not yet passed to the stage.
  bool stopped_ = false;
  DropCounts drops_;
  std::jthread thread_;  // Last: started by Start() after every member above exists.
};

}  // namespace vigil
