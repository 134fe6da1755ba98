// SPDX-License-Identifier: Apache-2.0
// The per-host and per-GPU pages' queries (docs/fleet.md "Hosts and GPUs"): over an exact window
// [since, until) (not rounded to hours: the minute rows are read), each GPU's reported time,
// allocated and busy seconds, SM activity, FLOP/s estimate, utilisation, memory, power and
// temperature in buckets of `step_s`, and the jobs that held it. Buckets are aligned to multiples
// of step_s since the epoch; the first and last may be partial (cut by the window), a bucket
// with no report is absent. Owner: fleet. Thread-compatible, like ledger_query.h.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "fleet/sqlite_db.h"

namespace vigil {

struct GpuSeriesQuery {
  std::string host;
  std::string gpu_uuid;  // Empty: every GPU of the host.
  int64_t since_ns = 0;
  int64_t until_ns = 0;
  int64_t step_s = 0;  // A positive multiple of 60; 0: DefaultGpuStep(window).
};

// The most points one GPU's series may have (a 30-day window at 1 h is 720).
inline constexpr int64_t kMaxGpuPoints = 1500;

// The smallest of 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h, 1 d giving at most 360 buckets.
int64_t DefaultGpuStep(int64_t window_s);

// NotFound for an unknown host (or GPU of that host); InvalidArgument for a bad step or window.
StatusOr<nlohmann::json> QueryGpuSeries(Db& db, const GpuSeriesQuery& q);

}  // namespace vigil
