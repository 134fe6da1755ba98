// SPDX-License-Identifier: Apache-2.0
// Read-side queries of the ledger, answering the fleet HTTP API (docs/protocols.md "Fleet
// push" and docs/fleet.md): attribution of GPU-hours (busy / held-but-idle / idle) by a dimension
// over a window, bucketed in time; jobs (with MFU, model FLOP/s and step time from
// libvigil_client); one job; hosts; GPUs idle now; top wasters. Windows are exact at minute
// grain (ledger_window.h): the whole hours inside [since, until) come from the hourly rollups,
// the partial hours at the edges (and the hours a bucket boundary cuts) from the minute rows; an
// edge inside a minute counts that whole minute; an edge whose minute rows are past retention
// counts its whole hour. Replies name the window counted ("since", "until", "since_s",
// "until_s"), the one asked for ("asked_since", "asked_until") and the edges widened to the
// hour ("whole_hour_edges"). Owner: fleet.
// Thread-compatible: each call uses the Db it is given (LedgerStore::Read serialises them).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "fleet/sqlite_db.h"

namespace vigil {

struct AttributionQuery {
  std::string by = "team";  // team|model|user|job|framework|rule|host|gpu_model
  int64_t since_ns = 0;
  int64_t until_ns = 0;
  int64_t bucket_s = 0;  // 0: one row per key; else a multiple of 3600, buckets from since.
  double price_per_gpu_hour = 0;
};

// The group key for GPU time no job held, in dimensions of jobs.
inline constexpr const char* kUnallocatedKey = "(unallocated)";

StatusOr<nlohmann::json> QueryAttribution(Db& db, const AttributionQuery& q);
StatusOr<nlohmann::json> QueryJobs(Db& db, int64_t since_ns, int64_t until_ns, double price,
                                   int64_t limit);
// NotFound when no job has this id.
StatusOr<nlohmann::json> QueryJob(Db& db, const std::string& job_id, double price);
StatusOr<nlohmann::json> QueryHosts(Db& db, int64_t now_ns);
// GPUs that reported in the last `window_ns` with no job (idle) or with jobs but no activity.
StatusOr<nlohmann::json> QueryIdleNow(Db& db, int64_t now_ns, int64_t window_ns);
// Means of libvigil_client's job gauges for one job id over minutes in [from_s, to_s):
// {"mfu_ratio", "model_flops_per_step", "model_flops_per_second", "step_seconds",
// "device_seconds_per_input_byte"}, each null when the job reported none.
// model_flops_per_second = mean FLOPs per step / mean step time.
StatusOr<nlohmann::json> QueryJobEfficiency(Db& db, const std::string& job_id, int64_t from_s,
                                            int64_t to_s);
// Allocated GPU-seconds of each job id over [since, until), counted as the other queries count
// windows, and the window counted (WindowPlan::WindowJson: since, until, asked_since, ...).
struct JobAllocation {
  nlohmann::json window;
  std::map<std::string, double> alloc_s;
};
StatusOr<JobAllocation> QueryJobAllocation(Db& db, int64_t since_ns, int64_t until_ns);
// Jobs ordered by held-but-idle GPU-hours.
StatusOr<nlohmann::json> QueryTopWasters(Db& db, int64_t since_ns, int64_t until_ns, double price,
                                         int64_t limit);

}  // namespace vigil
