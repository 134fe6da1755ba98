// SPDX-License-Identifier: Apache-2.0
// Exact windows over the ledger (docs/fleet.md "Windows"), shared by the attribution, jobs and
// per-GPU queries. A window [since, until) is counted at minute grain: an edge inside a minute
// counts that whole minute (since rounds down, until up, to the minute; no proration). The hours
// wholly inside the window, and inside one bucket, are read from the hourly rollups (job_hour,
// host_hour), which are kept longer; the rest (the partial hours at both edges, and the hours a
// bucket boundary cuts) from the per-minute rows (ledger_minute). Buckets start at the counted
// since. Where the minute rows an edge needs are past their retention (--retention shorter than
// --rollup-retention), that edge widens to its whole hour, read from the rollup, and the plan
// says so (WindowJson: the window counted, the one asked for, the widened edges).
// Owner: fleet. Pure functions, except ReadMinuteCut (reads the Db it is given).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "fleet/sqlite_db.h"

namespace vigil {

// Sums of the minute rows of `ledger_minute m` by kind of row: the GPU's own row (job_key 0)
// holds its reported (wall) time and device energy; a job's row its allocated, busy and
// held-but-idle seconds.
inline constexpr const char* kMinuteGpuWall = "sum(CASE WHEN m.job_key=0 THEN m.wall_s ELSE 0 END)";
inline constexpr const char* kMinuteGpuEnergy =
    "sum(CASE WHEN m.job_key=0 THEN m.energy_j ELSE 0 END)";
inline constexpr const char* kMinuteJobAlloc =
    "sum(CASE WHEN m.job_key<>0 THEN m.alloc_s ELSE 0 END)";
inline constexpr const char* kMinuteJobBusy =
    "sum(CASE WHEN m.job_key<>0 THEN m.busy_s ELSE 0 END)";
inline constexpr const char* kMinuteJobHeld =
    "sum(CASE WHEN m.job_key<>0 THEN m.held_idle_s ELSE 0 END)";

// A window in whole seconds (sub-second parts dropped) and the minutes that overlap it:
// minute rows with first_minute_s <= minute_s < end_minute_s.
struct MinuteWindow {
  int64_t since_s = 0, until_s = 0;
  int64_t first_minute_s = 0, end_minute_s = 0;
};
MinuteWindow ToMinutes(int64_t since_ns, int64_t until_ns);

// What one query reads for a window: rollup hours and minute ranges, never overlapping, which
// together cover [since_s, until_s) exactly.
struct WindowPlan {
  int64_t asked_since_s = 0, asked_until_s = 0;       // As asked for, in whole seconds.
  int64_t since_s = 0, until_s = 0;                   // Counted: minute (or widened: hour) aligned.
  bool since_widened = false, until_widened = false;  // To the hour: minute rows past retention.
  int64_t bucket_s = 0;                               // 0: one bucket.
  int64_t hours_from = 0, hours_to = 0;               // Rollup hours in [hours_from, hours_to) ...
  int64_t split_origin = 0, split_every = 0;  // ... but those a bucket boundary cuts (below).
  std::vector<std::pair<int64_t, int64_t>> minute_ranges;  // [from, to), ascending, disjoint.

  // The SQL condition on a rollup's hour column selecting the hours read from the rollup.
  std::string HourFilter(std::string_view column) const;
  // The SQL expression of the bucket start (unix s) of a row at time `column`; "0" without
  // buckets.
  std::string BucketOf(std::string_view column) const;
  // {since, until (RFC 3339), since_s, until_s: counted; asked_since, asked_until; and
  // whole_hour_edges: [] or the edges ("since", "until") widened to the hour}.
  nlohmann::json WindowJson() const;
};

// bucket_s: 0 or a positive multiple of 3600 (the caller checks). minute_cut_s: minute rows
// before it are gone (ReadMinuteCut). An until before since counts nothing.
WindowPlan PlanWindow(int64_t since_ns, int64_t until_ns, int64_t bucket_s, int64_t minute_cut_s);

// The time before which retention deleted ledger_minute rows (unix s), 0 when it never did.
StatusOr<int64_t> ReadMinuteCut(Db& db);

}  // namespace vigil
