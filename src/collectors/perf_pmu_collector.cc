// SPDX-License-Identifier: Apache-2.0
#include "collectors/perf_pmu_collector.h"

#include <algorithm>
#include <map>
#include <utility>

#include "base/strings.h"
#include "collectors/cgroup/cgroup_layout.h"
#include "collectors/collector_context.h"

namespace vigil {
namespace {

constexpr size_t kMaxReasonsShown = 6;
constexpr size_t kMaxCgroups = 32;

constexpr MetricDesc kInstructions{"vigil_pmu_instructions_total",
                                   "Instructions retired (perf instructions).",
                                   MetricKind::kCounter, ""};
constexpr MetricDesc kCycles{"vigil_pmu_cycles_total", "CPU cycles (perf cycles).",
                             MetricKind::kCounter, ""};
constexpr MetricDesc kIpc{"vigil_pmu_ipc", "Instructions per cycle over the last interval.",
                          MetricKind::kGauge, ""};
constexpr MetricDesc kCacheReferences{"vigil_pmu_cache_references_total",
                                      "Cache accesses by level (llc: perf cache-references).",
                                      MetricKind::kCounter, ""};
constexpr MetricDesc kCacheMisses{
    "vigil_pmu_cache_misses_total",
    "Cache misses by level (llc: perf cache-misses, l1d: L1-dcache-load-misses).",
    MetricKind::kCounter, ""};
constexpr MetricDesc kDtlbMisses{"vigil_pmu_dtlb_load_misses_total",
                                 "Data TLB load misses (perf dTLB-load-misses).",
                                 MetricKind::kCounter, ""};
constexpr MetricDesc kBranchMisses{"vigil_pmu_branch_misses_total",
                                   "Mispredicted branches (perf branch-misses).",
                                   MetricKind::kCounter, ""};
constexpr MetricDesc kTaskClock{"vigil_pmu_task_clock_seconds_total",
                                "Time counted by the task-clock software event.",
                                MetricKind::kCounter, "seconds"};
constexpr MetricDesc kContextSwitches{"vigil_pmu_context_switches_total",
                                      "Context switches (software event).", MetricKind::kCounter,
                                      ""};
constexpr MetricDesc kCpuMigrations{"vigil_pmu_cpu_migrations_total",
                                    "Task migrations between CPUs (software event).",
                                    MetricKind::kCounter, ""};
constexpr MetricDesc kPageFaults{"vigil_pmu_page_faults_total",
                                 "Page faults by kind: minor, major or all (software events).",
                                 MetricKind::kCounter, ""};
constexpr MetricDesc kMemoryRead{"vigil_pmu_memory_read_bytes_total",
                                 "DRAM bytes read, from the memory controllers' CAS counts.",
                                 MetricKind::kCounter, "bytes"};
constexpr MetricDesc kMemoryWrite{"vigil_pmu_memory_write_bytes_total",
                                  "DRAM bytes written, from the memory controllers' CAS counts.",
                                  MetricKind::kCounter, "bytes"};
constexpr MetricDesc kMemoryBytes{
    "vigil_pmu_memory_bytes_total",
    "DRAM bytes read and written together, from the data fabric's channel counts.",
    MetricKind::kCounter, "bytes"};
constexpr MetricDesc kEvents{"vigil_pmu_events_total",
                             "Counts of configured events without a family of their own.",
                             MetricKind::kCounter, ""};
constexpr MetricDesc kMultiplexRatio{
    "vigil_pmu_multiplex_ratio",
    "Share of the last interval an event was on a counter (time_running over time_enabled).",
    MetricKind::kGauge, "ratio"};
constexpr MetricDesc kPmuInfo{
    "vigil_pmu_info", "Always 1; labels name the CPU vendor and the core PMU (none in VMs).",
    MetricKind::kGauge, "info"};
constexpr MetricDesc kUnavailable{"vigil_pmu_unavailable_events",
                                  "Configured events or cgroups that cannot be counted here.",
                                  MetricKind::kGauge, ""};
constexpr const MetricDesc* kMetrics[] = {
    &kInstructions,   &kCycles,       &kIpc,         &kCacheReferences, &kCacheMisses,
    &kDtlbMisses,     &kBranchMisses, &kTaskClock,   &kContextSwitches, &kCpuMigrations,
    &kPageFaults,     &kMemoryRead,   &kMemoryWrite, &kMemoryBytes,     &kEvents,
    &kMultiplexRatio, &kPmuInfo,      &kUnavailable,
};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  PerfPmuCollector::Options o = context.OptionsFor<PerfPmuCollector::Options>();
  o.paths = context.paths;
  return std::make_unique<PerfPmuCollector>(std::move(o));
}

// The family and labels for an event, by what it counts.
void MapEvent(const PmuEvent& e, const MetricDesc** desc, Labels* labels, double* divisor) {
  *divisor = 1;
  const std::string& k = e.kind;
  if (k == "instructions") {
    *desc = &kInstructions;
  } else if (k == "cycles") {
    *desc = &kCycles;
  } else if (k == "cache-references") {
    *desc = &kCacheReferences;
    *labels = {{"level", "llc"}};
  } else if (k == "cache-misses") {
    *desc = &kCacheMisses;
    *labels = {{"level", "llc"}};
  } else if (k == "L1-dcache-load-misses") {
    *desc = &kCacheMisses;
    *labels = {{"level", "l1d"}};
  } else if (k == "dTLB-load-misses") {
    *desc = &kDtlbMisses;
  } else if (k == "branch-misses") {
    *desc = &kBranchMisses;
  } else if (k == "task-clock") {
    *desc = &kTaskClock;
    *divisor = 1e9;  // Nanoseconds.
  } else if (k == "context-switches") {
    *desc = &kContextSwitches;
  } else if (k == "cpu-migrations") {
    *desc = &kCpuMigrations;
  } else if (k == "minor-faults" || k == "major-faults" || k == "page-faults") {
    *desc = &kPageFaults;
    *labels = {{"kind", k == "minor-faults" ? "minor" : k == "major-faults" ? "major" : "all"}};
  } else if (k == "memory-read") {
    *desc = &kMemoryRead;
  } else if (k == "memory-write") {
    *desc = &kMemoryWrite;
  } else if (k == "memory-data") {
    *desc = &kMemoryBytes;
  } else {
    *desc = &kEvents;
    *labels = {{"event", e.name}};
  }
}

std::string Summarise(const std::vector<std::string>& reasons) {
  std::vector<std::string> shown(
      reasons.begin(),
      reasons.begin() + static_cast<ptrdiff_t>(std::min(reasons.size(), kMaxReasonsShown)));
  std::string out = Join(shown, "; ");
  if (reasons.size() > kMaxReasonsShown) {
    out += "; and " + std::to_string(reasons.size() - kMaxReasonsShown) + " more";
  }
  return out;
}

}  // namespace

const CollectorInfo PerfPmuCollector::kInfo = {
    .name = "perf_pmu",
    .help = "CPU performance counters and software events from perf_event_open.",
    // A few fds per CPU and one read() per group and CPU each tick: cheap enough to be always on,
    // and CPU time alone hides a CPU that waits on memory.
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

PerfPmuCollector::PerfPmuCollector(Options options) : options_(std::move(options)) {
  if (options_.sys == nullptr) {
    options_.sys = &RealPerfEventSys();
  }
}

Status PerfPmuCollector::Setup() {
  reduced_.clear();
  VIGIL_ASSIGN_OR_RETURN(pmu_host_,
                         DetectPmuHost(options_.paths.proc_root, options_.paths.sys_root));
  StatusOr<PmuEventSelection> sel = SelectPmuEvents(pmu_host_, options_.events);
  if (!sel.ok()) {
    config_error_ = sel.status().WithContext("pmu_events");
    return config_error_;
  }
  const bool have_core = pmu_host_.CorePmu() != nullptr;
  if (!have_core) {
    reduced_.push_back("no hardware PMU (event sources: " + pmu_host_.DeviceNames() +
                       "): software events only");
  }
  for (const std::string& u : sel->unavailable) {
    if (have_core || !(u.starts_with("preset ") && u.ends_with("no hardware PMU"))) {
      reduced_.push_back(u);
    }
  }
  if (!have_core && sel->events.empty()) {
    sel = SelectPmuEvents(pmu_host_, "software");  // What every kernel counts, VMs included.
    if (!sel.ok()) {
      return sel.status();
    }
  }
  PmuCounterOptions copts;
  copts.cpus = pmu_host_.online_cpus;
  if (copts.cpus.empty()) {
    return NotFoundError("perf_pmu: no online CPUs found");
  }
  cgroup_labels_.clear();
  if (!options_.cgroups.empty()) {
    StatusOr<CgroupLayout> layout = DetectCgroupLayout(options_.paths);
    std::string root;
    if (layout.ok()) {
      root = layout->V1Root("perf_event");
      if (root.empty()) {
        root = layout->unified;  // cgroup2 carries perf_event implicitly.
      }
    }
    if (root.empty()) {
      reduced_.push_back("cgroups: no perf_event cgroup hierarchy is mounted");
    } else {
      copts.cgroup_root = root;
      for (const std::string& c : options_.cgroups) {
        if (cgroup_labels_.size() >= kMaxCgroups) {
          reduced_.push_back("cgroups: only the first " + std::to_string(kMaxCgroups) +
                             " are counted");
          break;
        }
        if (c.find("..") != std::string::npos) {
          reduced_.push_back("cgroup " + SanitizeForLog(c, 80) + ": '..' is not allowed");
          continue;
        }
        std::string path = c.starts_with('/') ? c : "/" + c;
        copts.cgroups.push_back(path);
        cgroup_labels_.push_back(std::move(path));
      }
    }
  }
  auto counters = std::make_unique<PmuCounters>(std::move(sel->events), copts, options_.sys);
  VIGIL_RETURN_IF_ERROR(counters->Open());
  for (const std::string& f : counters->failures()) {
    reduced_.push_back(f);
  }
  counters_ = std::move(counters);

  // Where each event's counts go, computed once.
  const std::vector<PmuEvent>& events = counters_->events();
  metrics_.assign(events.size(), EventMetric{});
  std::map<std::pair<const MetricDesc*, Labels>, int> uncore_index;
  instructions_ = cycles_ = -1;
  for (size_t i = 0; i < events.size(); ++i) {
    EventMetric& m = metrics_[i];
    MapEvent(events[i], &m.desc, &m.labels, &m.divisor);
    if (events[i].scope == PmuEventScope::kUncore) {
      auto [it, added] = uncore_index.emplace(std::make_pair(m.desc, m.labels),
                                              static_cast<int>(uncore_index.size()));
      m.uncore_series = it->second;
    } else if (events[i].kind == "instructions") {
      instructions_ = static_cast<int>(i);
    } else if (events[i].kind == "cycles") {
      cycles_ = static_cast<int>(i);
    }
  }
  uncore_series_ = uncore_index.size();
  cpus_ = copts.cpus;
  cpu_slot_.assign(static_cast<size_t>(cpus_.back()) + 1, -1);
  for (size_t s = 0; s < cpus_.size(); ++s) {
    cpu_slot_[static_cast<size_t>(cpus_[s])] = static_cast<int>(s);
  }
  per_cpu_.assign(events.size(), std::vector<Acc>(cpus_.size()));
  per_cgroup_.assign(events.size(), std::vector<Acc>(cgroup_labels_.size()));
  host_.assign(events.size(), Acc{});
  uncore_.assign(uncore_series_, 0);
  return OkStatus();
}

Status PerfPmuCollector::Collect(MetricWriter& out) {
  if (!config_error_.ok()) {
    return config_error_;
  }
  if (counters_ == nullptr) {
    Status s = Setup();
    if (!s.ok()) {
      counters_.reset();
      return s;
    }
  }
  Status read = counters_->Read();
  Write(out);
  if (!read.ok()) {
    return read;
  }
  if (!reduced_.empty()) {
    return NotFoundError(Summarise(reduced_));
  }
  return OkStatus();
}

void PerfPmuCollector::Write(MetricWriter& out) {
  const std::vector<PmuEvent>& events = counters_->events();
  for (size_t e = 0; e < events.size(); ++e) {
    std::fill(per_cpu_[e].begin(), per_cpu_[e].end(), Acc{});
    std::fill(per_cgroup_[e].begin(), per_cgroup_[e].end(), Acc{});
    host_[e] = Acc{};
  }
  std::fill(uncore_.begin(), uncore_.end(), 0.0);
  auto add = [](Acc& a, const PmuCounters::Count& c) {
    a.total += c.total;
    a.delta += c.last_delta;
    a.enabled_ns += c.enabled_ns;
    a.running_ns += c.running_ns;
    a.read = true;
  };
  for (const PmuCounters::Count& c : counters_->Counts()) {
    if (!c.read) {
      continue;
    }
    add(host_[c.event], c);
    if (events[c.event].scope == PmuEventScope::kUncore) {
      uncore_[static_cast<size_t>(metrics_[c.event].uncore_series)] += c.total;
    } else if (c.target.cgroup >= 0) {
      add(per_cgroup_[c.event][static_cast<size_t>(c.target.cgroup)], c);
    } else if (static_cast<size_t>(c.target.cpu) < cpu_slot_.size() &&
               cpu_slot_[static_cast<size_t>(c.target.cpu)] >= 0) {
      add(per_cpu_[c.event][static_cast<size_t>(cpu_slot_[static_cast<size_t>(c.target.cpu)])], c);
    }
  }
  auto with = [](const Labels& base, std::initializer_list<std::pair<const char*, std::string>> l) {
    Labels labels = base;
    for (const auto& [k, v] : l) {
      labels.emplace_back(k, v);
    }
    return labels;
  };
  std::vector<bool> uncore_written(uncore_series_, false);
  for (size_t e = 0; e < events.size(); ++e) {
    const EventMetric& m = metrics_[e];
    if (m.uncore_series >= 0) {
      const size_t s = static_cast<size_t>(m.uncore_series);
      if (!uncore_written[s] && host_[e].read) {
        out.Add(*m.desc, uncore_[s] / m.divisor, m.labels);
        uncore_written[s] = true;
      }
    } else {
      double all = 0;
      bool any = false;
      for (size_t s = 0; s < cpus_.size(); ++s) {
        const Acc& a = per_cpu_[e][s];
        if (a.read) {
          out.Add(*m.desc, a.total / m.divisor,
                  with(m.labels, {{"cpu", std::to_string(cpus_[s])}}));
          all += a.total;
          any = true;
        }
      }
      if (any) {
        out.Add(*m.desc, all / m.divisor, with(m.labels, {{"cpu", "all"}}));
      }
      for (size_t g = 0; g < cgroup_labels_.size(); ++g) {
        const Acc& a = per_cgroup_[e][g];
        if (a.read) {
          out.Add(*m.desc, a.total / m.divisor,
                  with(m.labels, {{"cgroup", cgroup_labels_[g]}, {"cpu", "all"}}));
        }
      }
    }
    if (host_[e].read && host_[e].enabled_ns > 0) {
      out.Add(kMultiplexRatio,
              static_cast<double>(host_[e].running_ns) / static_cast<double>(host_[e].enabled_ns),
              {{"event", events[e].name}});
    }
  }
  if (instructions_ >= 0 && cycles_ >= 0) {
    const size_t i = static_cast<size_t>(instructions_);
    const size_t c = static_cast<size_t>(cycles_);
    for (size_t s = 0; s < cpus_.size(); ++s) {
      const Acc& ins = per_cpu_[i][s];
      const Acc& cyc = per_cpu_[c][s];
      if (ins.read && cyc.read && cyc.delta > 0) {
        out.Add(kIpc, ins.delta / cyc.delta, {{"cpu", std::to_string(cpus_[s])}});
      }
    }
    double ins_all = 0;
    double cyc_all = 0;
    for (size_t s = 0; s < cpus_.size(); ++s) {
      ins_all += per_cpu_[i][s].delta;
      cyc_all += per_cpu_[c][s].delta;
    }
    if (cyc_all > 0) {
      out.Add(kIpc, ins_all / cyc_all, {{"cpu", "all"}});
    }
  }
  const PmuDevice* core = pmu_host_.CorePmu();
  out.Add(kPmuInfo, 1,
          {{"vendor", std::string(CpuVendorName(pmu_host_.vendor))},
           {"core_pmu", core ? core->name : std::string("none")}});
  // The "no hardware PMU" line is the state, not a missing event.
  const size_t missing = reduced_.size() - (core == nullptr && !reduced_.empty() ? 1 : 0);
  out.Add(kUnavailable, static_cast<double>(missing));
}

}  // namespace vigil
