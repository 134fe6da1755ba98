// SPDX-License-Identifier: Apache-2.0
// Automatic profiling triggers (docs/fleet.md "Profiling as a service"): once a minute the ledger
// is read for jobs that have run at least `min_running` and still report, whose per-minute busy
// ratio (busy GPU-seconds / allocated GPU-seconds) over the last `window` is steady (enough
// minutes covered, standard deviation under `max_stddev`) and low (mean under `busy_below`).
// Each such job that was never profiled gets one request, reason e.g. "low_utilization: busy 23%
// over 30 min", within a fleet-wide budget of `max_per_hour` automatic requests. Every decision
// on a candidate, fired or skipped (budget, service refused), is recorded with its reason in the
// ledger table profiling_decisions; a skip is recorded at most once an hour per job and reason.
// Owner: fleet. Thread-safe: Check() is serialised by a mutex; Start() runs it on a thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "fleet/ledger_store.h"
#include "fleet/profiling_service.h"

namespace vigil {

struct ProfilingTriggerOptions {
  int64_t min_running_ns = int64_t{30} * 60 * 1000000000;  // Job age before it is judged.
  int64_t window_ns = int64_t{30} * 60 * 1000000000;       // Minutes looked at.
  double min_coverage = 0.5;  // Share of the window's minutes with allocated GPU time.
  double busy_below = 0.3;    // Mean busy ratio under this is low.
  double max_stddev = 0.1;    // Per-minute busy ratios this stable are a steady state.
  int64_t max_per_hour = 4;   // Automatic requests, fleet-wide.
  int64_t recent_ns = int64_t{5} * 60 * 1000000000;  // The job reported this recently.
  int64_t duration_ms = 2000;
  int64_t every_ns = int64_t{60} * 1000000000;  // Start(): how often Check() runs.
};

// What the ledger says about one running job over the window.
struct JobUtilisation {
  std::string job_id;
  int64_t first_seen_ns = 0, last_seen_ns = 0;
  int64_t minutes = 0;  // Minutes in the window with allocated time.
  double alloc_s = 0, busy_s = 0;
  double mean_ratio = 0, stddev_ratio = 0;
};

struct ProfilingDecision {
  std::string job_id;
  std::string decision;  // "fired" or "skipped"
  std::string reason;
  std::string request_id;  // When fired.
};

// Jobs with allocated GPU time in [now - window, now), with their per-minute statistics.
StatusOr<std::vector<JobUtilisation>> ReadJobUtilisation(Db& db, int64_t now_ns, int64_t window_ns);
// {"decisions": [{"time","job_id","decision","reason","request_id"}]}, newest first.
StatusOr<nlohmann::json> QueryProfilingDecisions(Db& db, int64_t limit);

class ProfilingTriggers {
 public:
  ProfilingTriggers(ProfilingTriggerOptions options, LedgerStore* store, ProfilingService* service);
  ~ProfilingTriggers();
  ProfilingTriggers(const ProfilingTriggers&) = delete;
  ProfilingTriggers& operator=(const ProfilingTriggers&) = delete;

  // One evaluation at now_ns: the decisions taken (also recorded in the ledger).
  StatusOr<std::vector<ProfilingDecision>> Check(int64_t now_ns);
  // Runs Check() every `every_ns` on a thread of its own until Stop().
  void Start();
  void Stop();

 private:
  Status Record(const ProfilingDecision& d, int64_t now_ns);
  StatusOr<bool> RecentlyRecorded(const ProfilingDecision& d, int64_t now_ns);

  const ProfilingTriggerOptions options_;
  LedgerStore* const store_;
  ProfilingService* const service_;
  std::mutex mu_;
  std::jthread thread_;
};

}  // namespace vigil
