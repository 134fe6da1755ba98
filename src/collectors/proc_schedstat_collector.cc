// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_schedstat_collector.h"

#include <utility>

#include "base/strings.h"
#include "collectors/collector_context.h"
#include "collectors/proc_parse.h"

namespace vigil {
namespace {

constexpr MetricDesc kRunning{"vigil_host_schedstat_running_seconds_total",
                              "Time tasks ran on this CPU.", MetricKind::kCounter, "seconds"};
constexpr MetricDesc kWaiting{"vigil_host_schedstat_waiting_seconds_total",
                              "Time runnable tasks waited for this CPU.", MetricKind::kCounter,
                              "seconds"};
constexpr MetricDesc kTimeslices{"vigil_host_schedstat_timeslices_total",
                                 "Timeslices run on this CPU.", MetricKind::kCounter, ""};

constexpr const MetricDesc* kMetrics[] = {&kRunning, &kWaiting, &kTimeslices};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcSchedstatCollector>(context.paths);
}

}  // namespace

const CollectorInfo ProcSchedstatCollector::kInfo = {
    .name = "proc_schedstat",
    .help = "Per-CPU scheduler running and waiting time from /proc/schedstat.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

ProcSchedstatCollector::ProcSchedstatCollector(HostPaths paths) : paths_(std::move(paths)) {}

Status ProcSchedstatCollector::Parse(std::string_view text, std::vector<Cpu>* out) {
  out->clear();
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view name;
    if (!NextField(&line, &name) || name.size() <= 3 || !name.starts_with("cpu")) {
      continue;  // version, timestamp and domain lines.
    }
    // yld_count, legacy 0, sched_count, sched_goidle, ttwu_count, ttwu_local, rq_cpu_time (ns),
    // run_delay (ns), pcount (Documentation/scheduler/sched-stats.rst).
    uint64_t v[9];
    std::string_view field;
    int n = 0;
    for (; n < 9 && NextField(&line, &field); ++n) {
      VIGIL_ASSIGN_OR_RETURN(v[n], ParseCounterField(field, "schedstat"));
    }
    if (n < 9) {
      return DataLossError("schedstat: truncated line for " + SanitizeForLog(name, 40));
    }
    out->push_back({name.substr(3), v[6], v[7], v[8]});
  }
  return OkStatus();
}

Status ProcSchedstatCollector::Collect(MetricWriter& out) {
  const std::string path = paths_.Proc("schedstat");
  Status read = files_.ReadInto(path, &buf_);
  if (read.code() == StatusCode::kNotFound) {
    return NotFoundError(path + ": not present (kernel built without CONFIG_SCHEDSTATS)");
  }
  VIGIL_RETURN_IF_ERROR(read);
  Status s = Parse(buf_, &cpus_);
  if (!s.ok()) {
    return s.WithContext(path);
  }
  for (const Cpu& cpu : cpus_) {
    const std::string label(cpu.cpu);
    out.Add(kRunning, static_cast<double>(cpu.running_ns) / 1e9, {{"cpu", label}});
    out.Add(kWaiting, static_cast<double>(cpu.waiting_ns) / 1e9, {{"cpu", label}});
    out.Add(kTimeslices, static_cast<double>(cpu.timeslices), {{"cpu", label}});
  }
  return OkStatus();
}

}  // namespace vigil
