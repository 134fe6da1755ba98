// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_loadavg_collector.h"

#include <utility>

#include "base/strings.h"
#include "collectors/collector_context.h"
#include "collectors/proc_parse.h"

namespace vigil {
namespace {

constexpr MetricDesc kLoad1{"vigil_host_load1", "Load average over 1 minute.", MetricKind::kGauge,
                            ""};
constexpr MetricDesc kLoad5{"vigil_host_load5", "Load average over 5 minutes.", MetricKind::kGauge,
                            ""};
constexpr MetricDesc kLoad15{"vigil_host_load15", "Load average over 15 minutes.",
                             MetricKind::kGauge, ""};
constexpr MetricDesc kRunnable{"vigil_host_tasks_runnable",
                               "Scheduling entities currently runnable.", MetricKind::kGauge, ""};
constexpr MetricDesc kTasks{"vigil_host_tasks", "Scheduling entities (processes and threads).",
                            MetricKind::kGauge, ""};
constexpr const MetricDesc* kMetrics[] = {&kLoad1, &kLoad5, &kLoad15, &kRunnable, &kTasks};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcLoadavgCollector>(context.paths);
}

}  // namespace

const CollectorInfo ProcLoadavgCollector::kInfo = {
    .name = "proc_loadavg",
    .help = "Load averages and task counts from /proc/loadavg.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

ProcLoadavgCollector::ProcLoadavgCollector(HostPaths paths) : paths_(std::move(paths)) {}

StatusOr<ProcLoadavgCollector::Loadavg> ProcLoadavgCollector::Parse(std::string_view text) {
  std::string_view f[4];
  for (std::string_view& field : f) {
    if (!NextField(&text, &field)) {
      return DataLossError("loadavg: truncated");
    }
  }
  Loadavg out;
  VIGIL_ASSIGN_OR_RETURN(out.load1, ParseDecimalField(f[0], "loadavg"));
  VIGIL_ASSIGN_OR_RETURN(out.load5, ParseDecimalField(f[1], "loadavg"));
  VIGIL_ASSIGN_OR_RETURN(out.load15, ParseDecimalField(f[2], "loadavg"));
  const size_t slash = f[3].find('/');
  if (slash == std::string_view::npos) {
    return DataLossError("loadavg: expected runnable/total, got '" + SanitizeForLog(f[3], 40) +
                         "'");
  }
  VIGIL_ASSIGN_OR_RETURN(out.runnable, ParseCounterField(f[3].substr(0, slash), "loadavg"));
  VIGIL_ASSIGN_OR_RETURN(out.tasks, ParseCounterField(f[3].substr(slash + 1), "loadavg"));
  return out;
}

Status ProcLoadavgCollector::Collect(MetricWriter& out) {
  const std::string path = paths_.Proc("loadavg");
  VIGIL_RETURN_IF_ERROR(files_.ReadInto(path, &buf_));
  StatusOr<Loadavg> parsed = Parse(buf_);
  if (!parsed.ok()) {
    return parsed.status().WithContext(path);
  }
  out.Add(kLoad1, parsed->load1);
  out.Add(kLoad5, parsed->load5);
  out.Add(kLoad15, parsed->load15);
  out.Add(kRunnable, static_cast<double>(parsed->runnable));
  out.Add(kTasks, static_cast<double>(parsed->tasks));
  return OkStatus();
}

}  // namespace vigil
