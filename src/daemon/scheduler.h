// SPDX-License-Identifier: Apache-2.0
// The scheduler wires collectors to the store and sinks: one thread runs every enabled collector
// on ticks aligned to wall-clock multiples of its interval (a 10 s collector runs at :00, :10,
// ...), times it, records its health (ok / absent / failed, with the reason) and hands the batch,
// plus the meta-metrics vigil_collector_{success,duration_seconds,samples}{collector}, to the
// consumer. A failing collector never stops the others or the daemon. The clock is injectable so
// tests step time without sleeping. Configure()/Health() are thread-safe; RunDue()/RunAllOnce()
// belong to the thread that owns the collectors (the scheduler's own thread once Start()ed).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"
#include "collectors/collector.h"
#include "metrics/metric.h"

namespace vigil::daemon {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t UnixNanos() const = 0;
  virtual int64_t MonotonicNanos() const = 0;
};

// The real clocks (base/time_util.h).
const Clock& SystemClock();

// The first wall-clock multiple of `interval_ns` strictly after `now_ns`:
// now + (interval - now % interval).
int64_t NextAlignedTick(int64_t now_ns, int64_t interval_ns);

enum class CollectorState { kPending, kOk, kAbsent, kFailed, kDisabled };
std::string_view CollectorStateName(CollectorState state);

struct CollectorHealth {
  std::string name;
  CollectorState state = CollectorState::kPending;
  std::string message;  // The last failure or absence reason; "" when ok.
  StatusCode code = StatusCode::kOk;
  int64_t interval_ns = 0;
  int64_t last_run_unix_ns = 0;  // 0 = never ran.
  double duration_s = 0;         // Of the last run.
  size_t samples = 0;            // Written by the last run.
  uint64_t runs = 0;
};

using CollectorFactory = std::function<std::unique_ptr<Collector>()>;
using BatchConsumer = std::function<void(BatchPtr)>;

class Scheduler {
 public:
  // `clock` is borrowed and outlives the scheduler; `consumer` runs on the scheduler's thread.
  Scheduler(const Clock* clock, BatchConsumer consumer);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Adds a collector (before Start()). The factory runs when the collector is first enabled; a
  // null result makes the collector failed.
  void Add(std::string name, CollectorFactory factory, int64_t interval_ns, bool enabled);
  // Changes a collector's interval or switches it on or off; the loop picks it up at once.
  // NotFound for an unknown name.
  Status Configure(std::string_view name, int64_t interval_ns, bool enabled);

  // Runs every enabled collector whose tick is due (a newly enabled one runs at once) and
  // returns the Unix time of the earliest next tick.
  int64_t RunDue();
  // Runs every enabled collector once, now (vigild --once).
  void RunAllOnce();

  void Start();
  void Stop();

  std::vector<CollectorHealth> Health() const;
  // Unix time at which the loop last finished a RunDue(); 0 before the first.
  int64_t last_pass_unix_ns() const;
  // Shortest interval among enabled collectors (0 when none).
  int64_t min_interval_ns() const;
  int64_t max_interval_ns() const;

 private:
  struct Entry {
    CollectorFactory factory;
    std::unique_ptr<Collector> instance;  // Touched only by the running thread.
    CollectorHealth health;               // Guarded by mu_.
    bool enabled = false;                 // Guarded by mu_.
    int64_t next_due_ns = 0;              // Guarded by mu_; 0 = run at the next pass.
    bool absent_logged = false;           // Running thread only.
    int64_t last_batch_ns = 0;            // Time stamped on the previous batch.
    int64_t last_warn_mono_ns = 0;        // Running thread only.
    int64_t cpu_ns = 0;                   // Running thread only: CPU time of every run.
  };

  void RunOne(Entry& entry);
  void Loop(std::stop_token stop);

  const Clock* clock_;
  BatchConsumer consumer_;
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  bool wake_ = false;
  std::vector<std::unique_ptr<Entry>> entries_;
  int64_t last_pass_unix_ns_ = 0;
  std::jthread thread_;  // Last.
};

}  // namespace vigil::daemon
