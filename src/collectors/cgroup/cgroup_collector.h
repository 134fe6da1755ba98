// SPDX-License-Identifier: Apache-2.0
// sys_cgroup: CPU, throttling, memory and I/O per cgroup, on cgroup v1, v2 and hybrid hosts.
// Reports the cgroups named by CgroupCollectorOptions::patterns, or by default the root, its
// direct children, SLURM job and Kubernetes pod cgroups, the cgroups of watched processes and of
// jobs the resolver knows; at most kMaxCgroups per tick (the rest are counted as skipped).
// Globs are expanded again every kGlobRescanNs, or on the next tick after a globbed cgroup went
// away (listing the hierarchies was half the collector's cost at a 1 s interval): a new cgroup
// only a glob names is reported within 10 s, one of a watched process or known job at once.
// Files are read through descriptors kept open between rescans.
// Labels: cgroup, plus job_id and user when the resolver maps the cgroup to a job. Runs on the
// daemon's collector sequence; not thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collectors/cgroup/cgroup_layout.h"
#include "collectors/collector.h"
#include "collectors/collector_context.h"
#include "collectors/kept_files.h"

namespace vigil {

struct CgroupCollectorOptions {
  // Cgroups of interest, as path globs relative to the hierarchy root ("/slurm/uid_*/job_*").
  // Empty: cgroups of watched processes plus the top-level slices/jobs.
  std::vector<std::string> patterns;
};

class CgroupCollector : public Collector {
 public:
  static const CollectorInfo kInfo;
  static constexpr size_t kMaxCgroups = 200;
  static constexpr int64_t kGlobRescanNs = 10'000'000'000;

  explicit CgroupCollector(const CollectorContext& context);
  Status Collect(MetricWriter& out) override;

  // The cgroup paths this tick would report (exposed for tests), in report order, and how many
  // were left out by the cap.
  std::vector<std::string> SelectCgroups(const CgroupLayout& layout, size_t* skipped);

 private:
  // The configured or default globs expanded over every hierarchy read from, kept until due.
  const std::set<std::string>& Globbed(const CgroupLayout& layout);

  CollectorContext context_;
  std::optional<CgroupLayout> layout_;
  int64_t clock_ticks_;
  std::set<std::string> globbed_;
  int64_t globbed_at_ns_ = 0;  // Monotonic; 0: never expanded.
  bool glob_gone_ = false;     // A globbed cgroup was not found: expand again next tick.
  KeptFiles files_;
};

}  // namespace vigil
