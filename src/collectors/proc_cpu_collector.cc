// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_cpu_collector.h"

#include <algorithm>
#include <string>
#include <utility>

#include "base/strings.h"
#include "collectors/collector_context.h"
#include "collectors/proc_parse.h"

namespace vigil {
namespace {

constexpr MetricDesc kCpuSeconds{
    "vigil_host_cpu_seconds_total",
    "CPU time spent in each mode; the cpu label all is the host-wide sum.", MetricKind::kCounter,
    "seconds"};
constexpr MetricDesc kCpuUtilization{
    "vigil_host_cpu_utilization_ratio",
    "Share of CPU time not idle or waiting on I/O since the previous reading.", MetricKind::kGauge,
    "ratio"};
constexpr MetricDesc kContextSwitches{"vigil_host_context_switches_total",
                                      "Context switches since boot.", MetricKind::kCounter, ""};
constexpr MetricDesc kInterrupts{"vigil_host_interrupts_total", "Interrupts serviced since boot.",
                                 MetricKind::kCounter, ""};
constexpr MetricDesc kForks{"vigil_host_forks_total", "Processes and threads created since boot.",
                            MetricKind::kCounter, ""};
constexpr MetricDesc kProcsRunning{"vigil_host_procs_running", "Tasks in a runnable state.",
                                   MetricKind::kGauge, ""};
constexpr MetricDesc kProcsBlocked{"vigil_host_procs_blocked", "Tasks blocked waiting on I/O.",
                                   MetricKind::kGauge, ""};
constexpr MetricDesc kBootTime{"vigil_host_boot_time_seconds",
                               "System boot time in seconds since the Unix epoch.",
                               MetricKind::kGauge, "seconds"};

constexpr const MetricDesc* kMetrics[] = {&kCpuSeconds,   &kCpuUtilization, &kContextSwitches,
                                          &kInterrupts,   &kForks,          &kProcsRunning,
                                          &kProcsBlocked, &kBootTime};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcCpuCollector>(context.paths);
}

std::string CpuLabel(int cpu) { return cpu < 0 ? std::string("all") : std::to_string(cpu); }

Status ParseCpuLine(std::string_view name, std::string_view rest, ProcCpuCollector::CpuTicks* out) {
  if (name.size() > 3) {
    std::optional<uint64_t> index = ParseUint64(name.substr(3));
    if (!index || *index > 1u << 20) {
      return DataLossError("stat: bad cpu name '" + SanitizeForLog(name, 40) + "'");
    }
    out->cpu = static_cast<int>(*index);
  }
  std::string_view field;
  while (out->modes < static_cast<int>(out->ticks.size()) && NextField(&rest, &field)) {
    VIGIL_ASSIGN_OR_RETURN(out->ticks[out->modes], ParseCounterField(field, "stat"));
    ++out->modes;
  }
  if (out->modes < 4) {
    return DataLossError("stat: truncated line for " + SanitizeForLog(name, 40));
  }
  return OkStatus();
}

}  // namespace

const CollectorInfo ProcCpuCollector::kInfo = {
    .name = "proc_cpu",
    .help = "CPU time by mode, utilisation, context switches and forks from /proc/stat.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

ProcCpuCollector::ProcCpuCollector(HostPaths paths, double user_hz)
    : paths_(std::move(paths)), user_hz_(user_hz > 0 ? user_hz : HostUserHz()) {}

StatusOr<ProcCpuCollector::Stat> ProcCpuCollector::Parse(std::string_view text) {
  Stat stat;
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view name;
    if (!NextField(&line, &name)) {
      continue;
    }
    if (name.starts_with("cpu")) {
      CpuTicks ticks;
      VIGIL_RETURN_IF_ERROR(ParseCpuLine(name, line, &ticks));
      if (ticks.cpu < 0 && !stat.cpus.empty()) {
        return DataLossError("stat: host-wide cpu line is not first");
      }
      stat.cpus.push_back(ticks);
      continue;
    }
    std::optional<uint64_t>* target = nullptr;
    if (name == "ctxt") {
      target = &stat.context_switches;
    } else if (name == "intr") {
      target = &stat.interrupts;  // Only the first field: the total; per-IRQ counts follow.
    } else if (name == "processes") {
      target = &stat.forks;
    } else if (name == "procs_running") {
      target = &stat.procs_running;
    } else if (name == "procs_blocked") {
      target = &stat.procs_blocked;
    } else if (name == "btime") {
      target = &stat.boot_time;
    } else {
      continue;
    }
    std::string_view value;
    if (!NextField(&line, &value)) {
      return DataLossError("stat: truncated line for " + std::string(name));
    }
    VIGIL_ASSIGN_OR_RETURN(*target, ParseCounterField(value, name));
  }
  if (stat.cpus.empty() || stat.cpus.front().cpu >= 0) {
    return DataLossError("stat: no host-wide cpu line");
  }
  return stat;
}

std::optional<double> ProcCpuCollector::Utilization(const CpuTicks& before, const CpuTicks& after) {
  uint64_t total = 0;
  uint64_t idle = 0;
  const int modes = std::min(before.modes, after.modes);
  for (int i = 0; i < modes; ++i) {
    if (after.ticks[i] < before.ticks[i]) {
      return std::nullopt;
    }
    const uint64_t delta = after.ticks[i] - before.ticks[i];
    total += delta;
    if (i == 3 || i == 4) {  // idle, iowait
      idle += delta;
    }
  }
  if (total == 0) {
    return std::nullopt;
  }
  return static_cast<double>(total - idle) / static_cast<double>(total);
}

Status ProcCpuCollector::Collect(MetricWriter& out) {
  const std::string path = paths_.Proc("stat");
  VIGIL_RETURN_IF_ERROR(files_.ReadInto(path, &buf_));
  StatusOr<Stat> parsed = Parse(buf_);
  if (!parsed.ok()) {
    return parsed.status().WithContext(path);
  }
  const Stat& stat = *parsed;
  for (size_t k = 0; k < stat.cpus.size(); ++k) {
    const CpuTicks& cpu = stat.cpus[k];
    const std::string label = CpuLabel(cpu.cpu);
    for (int i = 0; i < cpu.modes; ++i) {
      out.Add(kCpuSeconds, static_cast<double>(cpu.ticks[i]) / user_hz_,
              {{"cpu", label}, {"mode", std::string(kModes[i])}});
    }
    const CpuTicks* before = nullptr;
    if (k < previous_.size() && previous_[k].cpu == cpu.cpu) {
      before = &previous_[k];  // The usual case: the same CPUs in the same order.
    } else {
      auto it = std::find_if(previous_.begin(), previous_.end(),
                             [&](const CpuTicks& p) { return p.cpu == cpu.cpu; });
      before = it == previous_.end() ? nullptr : &*it;
    }
    if (before != nullptr) {
      if (std::optional<double> ratio = Utilization(*before, cpu)) {
        out.Add(kCpuUtilization, *ratio, {{"cpu", label}});
      }
    }
  }
  previous_ = stat.cpus;
  const std::pair<const MetricDesc*, const std::optional<uint64_t>*> scalars[] = {
      {&kContextSwitches, &stat.context_switches},
      {&kInterrupts, &stat.interrupts},
      {&kForks, &stat.forks},
      {&kProcsRunning, &stat.procs_running},
      {&kProcsBlocked, &stat.procs_blocked},
      {&kBootTime, &stat.boot_time}};
  for (const auto& [desc, value] : scalars) {
    if (value->has_value()) {
      out.Add(*desc, static_cast<double>(**value));
    }
  }
  return OkStatus();
}

}  // namespace vigil
