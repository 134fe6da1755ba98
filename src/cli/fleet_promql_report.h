// SPDX-License-Identifier: Apache-2.0
// `vigil fleet report --prometheus URL`: the GPU-hour attribution of vigil-fleet's
// /api/v1/attribution computed with PromQL from the counters vigild integrates and remote-writes
// (vigil_gpu_allocated_seconds_total, _busy_, _held_idle_, vigil_job_gpu_energy_joules_total,
// vigil_gpu_energy_joules_total) and vigil_gpu_up, against Prometheus or VictoriaMetrics (same
// HTTP API). Builds the queries, parses the engine's replies and assembles a report with the same
// JSON shape as the fleet API, so the CLI renders both alike. Needs no recording rules.
//   * allocated / busy / held-idle / energy: sum by (label) (increase(counter[window])), one
//     instant query at the window's end (/api/v1/query), or per bucket with /api/v1/query_range.
//   * idle (no job held the GPU): per GPU, the seconds vigil_gpu_up was present (a subquery sampled
//     every `resolution_s`) minus its allocated seconds, clamped at 0; a GPU-minute resolution,
//     not the ledger's exact wall time.
//   * --by job adds the means of vigil_job_mfu_ratio, vigil_job_model_flops and
//     vigil_job_step_seconds (avg_over_time).
// The network part is a function the caller passes (the CLI's HTTP client; tests a fake).
// Owner: cli. Pure functions; thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace vigil {

struct PromqlReportRequest {
  std::string by = "team";  // team|model|user|job|framework|host|gpu_model
  int64_t since_s = 0;      // Window [since_s, until_s], Unix seconds.
  int64_t until_s = 0;
  int64_t bucket_s = 0;  // 0: one row per key; else buckets aligned to multiples of it.
  double price_per_gpu_hour = 0;
};

// What one query computes, in the report's terms.
enum class PromqlColumn {
  kAllocatedS,
  kBusyS,
  kHeldIdleS,
  kEnergyJ,
  kIdleS,
  kMfu,
  kFlopsPerStep,
  kStepS,
  kDeviceSecondsPerInputByte
};

struct PromqlQuery {
  PromqlColumn column;
  std::string expr;
};

// One value of a reply: the group key (the dimension's label value; "" when absent) at a time.
struct PromqlPoint {
  std::string key;
  int64_t time_s = 0;
  double value = 0;
};

// The label a dimension groups by ("job_id" for job). InvalidArgument for an unknown one.
StatusOr<std::string> PromqlGroupLabel(std::string_view by);
// The subquery step used for idle time over a range: range/5000 rounded up, at least 15 s.
int64_t PromqlIdleResolution(int64_t range_s);
// The queries for `by`, each over a range of `range_s` seconds (the window, or one bucket).
StatusOr<std::vector<PromqlQuery>> BuildPromqlQueries(std::string_view by, int64_t range_s);
// Parses an /api/v1/query ("vector") or /api/v1/query_range ("matrix") reply; the key of each
// series is its `label` value. Non-finite values are skipped. An engine's error reply is an
// error with its message.
StatusOr<std::vector<PromqlPoint>> ParsePromqlReply(std::string_view body,
                                                    const std::string& label);
// Builds the report from each query's points ({"by","since","until","bucket_s",
// "price_per_gpu_hour","rows","totals"} as /api/v1/attribution, plus "source" and "notes").
// With buckets a point at time t belongs to the bucket that ends at t.
nlohmann::json AssemblePromqlReport(
    const PromqlReportRequest& r,
    const std::vector<std::pair<PromqlColumn, std::vector<PromqlPoint>>>& results);

// GET-or-POST of `path` (e.g. "/api/v1/query") with form parameters; returns the body of a 200
// reply, else an error (the engine's message when it sent one).
using PromqlFetch = std::function<StatusOr<std::string>(
    const std::string& path, const std::vector<std::pair<std::string, std::string>>& params)>;

// Runs every query (instant at until_s, or a range over the buckets) and assembles the report.
StatusOr<nlohmann::json> RunPromqlReport(const PromqlReportRequest& r, const PromqlFetch& fetch);

}  // namespace vigil
