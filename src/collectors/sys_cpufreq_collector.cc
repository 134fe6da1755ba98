// SPDX-License-Identifier: Apache-2.0
#include "collectors/sys_cpufreq_collector.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include "base/file_util.h"
#include "base/strings.h"
#include "collectors/collector_context.h"

namespace vigil {
namespace {

constexpr MetricDesc kFreq{"vigil_host_cpu_frequency_hertz",
                           "Frequency the hardware reports (cpuinfo_cur_freq x 1000; root only).",
                           MetricKind::kGauge, "hertz"};
constexpr MetricDesc kFreqMin{"vigil_host_cpu_frequency_min_hertz",
                              "Lowest frequency the CPU supports (cpuinfo_min_freq x 1000).",
                              MetricKind::kGauge, "hertz"};
constexpr MetricDesc kFreqMax{"vigil_host_cpu_frequency_max_hertz",
                              "Highest frequency the CPU supports (cpuinfo_max_freq x 1000).",
                              MetricKind::kGauge, "hertz"};
constexpr MetricDesc kScaling{"vigil_host_cpu_scaling_frequency_hertz",
                              "Frequency the governor last set or saw (scaling_cur_freq x 1000).",
                              MetricKind::kGauge, "hertz"};
constexpr MetricDesc kScalingMin{"vigil_host_cpu_scaling_frequency_min_hertz",
                                 "Governor's lower frequency limit (scaling_min_freq x 1000).",
                                 MetricKind::kGauge, "hertz"};
constexpr MetricDesc kScalingMax{"vigil_host_cpu_scaling_frequency_max_hertz",
                                 "Governor's upper frequency limit (scaling_max_freq x 1000).",
                                 MetricKind::kGauge, "hertz"};
constexpr MetricDesc kGovernor{"vigil_host_cpu_scaling_governor",
                               "1 for the governor in use, 0 for the other available ones.",
                               MetricKind::kGauge, ""};
constexpr const MetricDesc* kMetrics[] = {&kFreq,       &kFreqMin,    &kFreqMax, &kScaling,
                                          &kScalingMin, &kScalingMax, &kGovernor};

struct FreqFile {
  std::string_view file;
  const MetricDesc* desc;
};
constexpr FreqFile kFiles[] = {
    {"cpuinfo_cur_freq", &kFreq},       {"cpuinfo_min_freq", &kFreqMin},
    {"cpuinfo_max_freq", &kFreqMax},    {"scaling_cur_freq", &kScaling},
    {"scaling_min_freq", &kScalingMin}, {"scaling_max_freq", &kScalingMax},
};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<SysCpufreqCollector>(context.paths);
}

}  // namespace

const CollectorInfo SysCpufreqCollector::kInfo = {
    .name = "sys_cpufreq",
    .help = "CPU frequencies, limits and governors from /sys/devices/system/cpu/cpu*/cpufreq.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

SysCpufreqCollector::SysCpufreqCollector(HostPaths paths, int rescan_every)
    : paths_(std::move(paths)), schedule_(rescan_every) {}

Status SysCpufreqCollector::Rescan() {
  reader_.CloseKept();  // Nothing from the old listing stays open.
  plan_.clear();
  governors_.clear();
  const std::string root = paths_.Sys("devices/system/cpu");
  Status error;
  std::vector<std::pair<uint64_t, std::string>> cpus;
  for (const std::string& entry : ListSorted(root, "cpu", &error)) {
    uint64_t n = 0;
    if (NumberAfterPrefix(entry, "cpu", &n) && IsDirectory(JoinPath(root, entry + "/cpufreq"))) {
      cpus.emplace_back(n, entry);
    }
  }
  std::sort(cpus.begin(), cpus.end());  // cpu2 before cpu10.
  for (const auto& [n, entry] : cpus) {
    const std::string dir = JoinPath(root, entry + "/cpufreq");
    const Labels labels = {{"cpu", std::to_string(n)}};
    for (const FreqFile& f : kFiles) {
      const std::string path = JoinPath(dir, f.file);
      // cpuinfo_cur_freq is mode 0400: an unprivileged daemon leaves it out of the plan.
      if (access(path.c_str(), R_OK) == 0) {
        plan_.push_back({path, f.desc, 1e3, labels});
      }
    }
    Governors g{.cpu = std::to_string(n),
                .current_path = JoinPath(dir, "scaling_governor"),
                .available = {}};
    StatusOr<std::string_view> available =
        reader_.Read(JoinPath(dir, "scaling_available_governors"));
    if (available.ok()) {
      for (std::string_view name : SplitWhitespace(*available)) {
        g.available.emplace_back(name);
      }
    }
    if (PathExists(g.current_path)) {
      governors_.push_back(std::move(g));
    }
  }
  if (cpus.empty()) {
    return NotFoundError(root + ": no cpu*/cpufreq (no frequency scaling driver)" +
                         (error.ok() ? "" : " (" + error.message() + ")"));
  }
  return OkStatus();
}

Status SysCpufreqCollector::Collect(MetricWriter& out) {
  VIGIL_RETURN_IF_ERROR(schedule_.RescanIfDue([this] { return Rescan(); }));
  Status error = EmitPlanned(plan_, reader_, schedule_, out);
  for (const Governors& g : governors_) {
    StatusOr<std::string_view> current = reader_.Read(g.current_path);
    if (!current.ok()) {
      schedule_.Invalidate();
      continue;
    }
    bool listed = false;
    for (const std::string& name : g.available) {
      listed = listed || name == *current;
      out.Add(kGovernor, name == *current ? 1 : 0, {{"cpu", g.cpu}, {"governor", name}});
    }
    if (!listed) {  // Drivers without scaling_available_governors (intel_pstate lists two).
      out.Add(kGovernor, 1, {{"cpu", g.cpu}, {"governor", std::string(*current)}});
    }
  }
  return error;
}

}  // namespace vigil
