// SPDX-License-Identifier: Apache-2.0
// proc_process: CPU, memory, threads and open files of the processes of interest (watched by
// the GPU collectors or the IPC registry, or matching ProcessCollectorOptions::patterns).
// PIDs are high-cardinality and stay out of labels: processes are aggregated per (comm, job),
// with labels comm plus job_id, user, team, model and framework from the resolver. A process
// that exits between listing and reading is skipped silently. Runs on the daemon's collector
// sequence; not thread-safe.
#pragma once

#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "collectors/collector.h"
#include "collectors/collector_context.h"

namespace vigil {

struct ProcessCollectorOptions {
  // Extended regexes matched against a process's comm and command line ("pattern" reason).
  std::vector<std::string> patterns;
};

class ProcessCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit ProcessCollector(const CollectorContext& context);
  Status Collect(MetricWriter& out) override;

  // Pids of interest this tick: watched ones, then pattern matches; sorted, distinct.
  std::vector<int> SelectPids();

 private:
  bool MatchesPattern(int pid);

  CollectorContext context_;
  std::vector<std::regex> patterns_;
  int64_t clock_ticks_;
  int64_t page_size_;
};

}  // namespace vigil
