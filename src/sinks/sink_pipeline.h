// SPDX-License-Identifier: Apache-2.0
// The push pipeline every batch sink shares (JSON lines, remote-write, fleet push): a bounded
// queue of batches (when full, the oldest is dropped and counted), one worker thread that hands
// what was queued to the sink's stage, Flush() that waits until the stage has written or
// delivered everything, and Stop() that flushes, joins the thread and counts what came too late.
// A sink implements PipelineStage (encode, write, send, buffer) and owns one SinkPipeline; its
// stage runs on the worker thread only, so the sink's I/O needs no lock of its own.
// Thread-safe: Push(), Flush(), Stop(), drops() and stopped() may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "metrics/metric.h"
#include "sinks/drop_counts.h"

namespace vigil {

struct PipelineOptions {
  std::string name;  // The sink's name, for logs.
  size_t max_queued_batches = 256;
  // Hold batches up to linger_ns so they merge into one round, unless linger_samples samples
  // wait already (0 = no sample bound) or a Flush() asks for them.
  int64_t linger_ns = 0;
  size_t linger_samples = 0;
  int64_t stop_timeout_ns = 5'000'000'000;  // How long Stop() flushes before giving up.
};

// What a sink plugs into the pipeline. Every method runs on the pipeline's worker thread.
class PipelineStage {
 public:
  virtual ~PipelineStage() = default;
  // Batches taken off the queue, oldest first (never empty).
  virtual void Process(std::vector<BatchPtr> batches) = 0;
  // Called after every round: retries that are due. `stopping` is true on the thread's last round.
  // Returns the monotonic time (MonotonicNanos()) of the next retry, or 0 when there is none.
  virtual int64_t Pump(bool stopping) = 0;
  // A Flush() started: retry now, whatever the backoff says.
  virtual void OnFlush() {}
  // Everything processed so far is written or delivered, as far as Flush() should wait for.
  virtual bool Settled() const = 0;
};

class SinkPipeline {
 public:
  // `stage` is borrowed and must outlive Stop(). Start() begins the worker thread.
  SinkPipeline(PipelineOptions options, PipelineStage* stage);
  ~SinkPipeline();
  SinkPipeline(const SinkPipeline&) = delete;
  SinkPipeline& operator=(const SinkPipeline&) = delete;

  // Call once, after the stage is fully constructed.
  void Start();
  // Queues one batch; never blocks on I/O. After Stop() the batch is dropped and counted.
  void Push(BatchPtr batch);
  // Waits until the queue is empty and the stage is settled, at most timeout_ns.
  void Flush(int64_t timeout_ns);
  // Flushes (stop_timeout_ns), runs the stage's last round and joins the thread. Idempotent.
  void Stop();

  bool stopped() const;
  DropCounts drops() const;  // Batches dropped by the queue: overflow, or pushed after Stop().

 private:
  void Loop(std::stop_token stop);

  const PipelineOptions options_;
  PipelineStage* const stage_;

  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::deque<BatchPtr> queue_;
  size_t queued_samples_ = 0;
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
