// SPDX-License-Identifier: Apache-2.0
// Automatic tracing policies (all off by default, each within a budget): periodic sampling (at
// most one trace per job per period, at a random offset so jobs do not all trace at once) and
// low utilisation (a job's GPUs stay under an SM-activity threshold for a while). Every trace it
// starts records why ("auto:periodic", "auto:low_utilisation" with the numbers); traces never
// overlap on a process because TraceService refuses busy processes. The daemon feeds job
// utilisation from its GPU samples and calls Tick() about once a second. Owner: ipc.
// Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ipc/trace_sessions.h"

namespace vigil {

struct AutoTraceOptions {
  bool periodic = false;
  int64_t periodic_every_ns = int64_t{6} * 3600 * 1000000000;  // One trace per job per period.
  bool low_utilisation = false;
  double low_utilisation_below = 0.2;  // SM activity (or utilisation), 0-1.
  int64_t low_utilisation_for_ns = int64_t{600} * 1000000000;
  int64_t low_utilisation_cooldown_ns = int64_t{3600} * 1000000000;  // Per job.
  int max_traces_per_hour = 4;                                       // Budget over both policies.
  int64_t duration_ms = 2000;
  int process_limit = 8;
};

class AutoTracer {
 public:
  // `random` returns uniformly distributed 64-bit values (injected for tests).
  AutoTracer(AutoTraceOptions options, TraceService* service, IpcClock clock,
             std::function<uint64_t()> random);

  // Latest utilisation (0-1) of the GPUs a job holds.
  void ObserveUtilisation(const std::string& job_id, double ratio);
  // Starts the traces that are due; returns their sessions.
  std::vector<TraceSession> Tick();

 private:
  struct JobState {
    int64_t next_periodic_ns = -1;  // Scheduled on first sight at a random offset.
    int64_t low_since_ns = -1;
    double last_ratio = 1;
    int64_t last_low_trace_ns = -1;
  };
  bool TakeBudget(int64_t now);
  std::vector<TraceSession> StartFor(const std::string& job, const std::string& origin,
                                     const std::string& reason);

  AutoTraceOptions options_;
  TraceService* service_;
  IpcClock clock_;
  std::function<uint64_t()> random_;
  std::mutex mu_;
  std::map<std::string, JobState> jobs_;
  std::deque<int64_t> recent_;  // Start times within the last hour.
};

}  // namespace vigil
