// SPDX-License-Identifier: Apache-2.0
// Turns the probes' map contents into ProcessSummary values: launches by kernel name, syncs by
// API (with histograms) and by stack, the driver's and the caching allocator's memory views
// with leak candidates grouped by allocation stack, copies by direction. Names and stacks come
// from a resolver (the session's, which symbolises and caches), so this part is pure.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "snoop/map_reader.h"
#include "snoop/snoop_summary.h"

namespace vigil::snoop {

class NameResolver {
 public:
  virtual ~NameResolver() = default;
  // The kernel launched by API row `api` with function key `func` (host stub or CUfunction).
  virtual std::string KernelName(uint32_t pid, uint32_t api, uint64_t func) = 0;
  virtual CallStack Stack(uint32_t pid, int64_t stack_id) = 0;
};

struct AggregateOptions {
  uint64_t now_ns = 0;  // bpf_ktime_get_ns now (CLOCK_MONOTONIC).
  uint64_t leak_age_ns = 30'000'000'000ull;
  size_t max_stacks = 20;  // Leak groups and sync stacks kept per process.
};

// Summaries of the pids in `contents`, keyed by pid (only counters filled; pid, command,
// libraries and exited are the caller's).
std::map<uint32_t, ProcessSummary> Aggregate(const MapContents& contents, NameResolver& names,
                                             const AggregateOptions& options);

}  // namespace vigil::snoop
