// SPDX-License-Identifier: Apache-2.0
#include "collectors/cgroup/cgroup_collector.h"

#include <unistd.h>

#include <map>
#include <set>

#include "base/file_util.h"
#include "base/logging.h"
#include "base/time_util.h"
#include "collectors/cgroup/cgroup_selection.h"
#include "collectors/cgroup/cgroup_stats.h"

namespace vigil {
namespace {

// Watched pids are taken from the watch list with this freshness.
constexpr int64_t kWatchTtlNs = 600 * kNanosPerSecond;

constexpr MetricDesc kCpuUsage{"vigil_cgroup_cpu_usage_seconds_total",
                               "CPU time used by the cgroup's tasks.", MetricKind::kCounter,
                               "seconds"};
constexpr MetricDesc kCpuUser{"vigil_cgroup_cpu_user_seconds_total",
                              "CPU time the cgroup's tasks spent in user mode.",
                              MetricKind::kCounter, "seconds"};
constexpr MetricDesc kCpuSystem{"vigil_cgroup_cpu_system_seconds_total",
                                "CPU time the cgroup's tasks spent in the kernel.",
                                MetricKind::kCounter, "seconds"};
constexpr MetricDesc kPeriods{"vigil_cgroup_cpu_periods_total",
                              "CFS enforcement periods that elapsed while the cgroup was runnable.",
                              MetricKind::kCounter, ""};
constexpr MetricDesc kThrottledPeriods{"vigil_cgroup_cpu_throttled_periods_total",
                                       "CFS periods in which the cgroup was throttled.",
                                       MetricKind::kCounter, ""};
constexpr MetricDesc kThrottled{"vigil_cgroup_cpu_throttled_seconds_total",
                                "Time the cgroup's tasks were throttled by its CPU quota.",
                                MetricKind::kCounter, "seconds"};
constexpr MetricDesc kMemUsage{"vigil_cgroup_memory_usage_bytes",
                               "Memory charged to the cgroup (memory.current or usage_in_bytes).",
                               MetricKind::kGauge, "bytes"};
constexpr MetricDesc kMemPeak{"vigil_cgroup_memory_peak_bytes",
                              "Highest memory usage recorded for the cgroup.", MetricKind::kGauge,
                              "bytes"};
constexpr MetricDesc kMemLimit{"vigil_cgroup_memory_limit_bytes",
                               "Memory limit of the cgroup; absent when unlimited.",
                               MetricKind::kGauge, "bytes"};
constexpr MetricDesc kIoRead{"vigil_cgroup_io_read_bytes_total",
                             "Bytes the cgroup read from block devices, all devices summed.",
                             MetricKind::kCounter, "bytes"};
constexpr MetricDesc kIoWritten{"vigil_cgroup_io_written_bytes_total",
                                "Bytes the cgroup wrote to block devices, all devices summed.",
                                MetricKind::kCounter, "bytes"};
constexpr MetricDesc kMonitored{"vigil_cgroup_monitored_cgroups",
                                "Cgroups reported in the last collection.", MetricKind::kGauge, ""};
constexpr MetricDesc kSkipped{"vigil_cgroup_skipped_cgroups",
                              "Cgroups of interest left out of the last collection by the cap.",
                              MetricKind::kGauge, ""};
constexpr MetricDesc kUnreadable{"vigil_cgroup_unreadable_files",
                                 "Cgroup files that existed but could not be read last time.",
                                 MetricKind::kGauge, ""};
constexpr MetricDesc kLayout{
    "vigil_cgroup_layout_info",
    "Cgroup layout of the host (version is v1, v2 or hybrid; root is the cgroup the mounts show, "
    "/ unless a container sees only its own); always 1.",
    MetricKind::kGauge, "info"};

constexpr const MetricDesc* kMetrics[] = {
    &kCpuUsage,  &kCpuUser,   &kCpuSystem, &kPeriods,    &kThrottledPeriods,
    &kThrottled, &kMemUsage,  &kMemPeak,   &kMemLimit,   &kIoRead,
    &kIoWritten, &kMonitored, &kSkipped,   &kUnreadable, &kLayout};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<CgroupCollector>(context);
}

void AddIf(MetricWriter& out, const MetricDesc& desc, const std::optional<double>& value,
           const Labels& labels) {
  if (value) {
    out.Add(desc, *value, labels);
  }
}

// Keeps insertion order, drops duplicates.
class OrderedPaths {
 public:
  void Add(const std::string& path) {
    if (!path.empty() && seen_.insert(path).second) {
      paths_.push_back(path);
    }
  }
  std::vector<std::string>& paths() { return paths_; }

 private:
  std::set<std::string> seen_;
  std::vector<std::string> paths_;
};

}  // namespace

const CollectorInfo CgroupCollector::kInfo = {
    .name = "sys_cgroup",
    .help = "CPU, throttling, memory and I/O per cgroup (v1, v2 and hybrid hosts).",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

CgroupCollector::CgroupCollector(const CollectorContext& context)
    : context_(context), clock_ticks_(sysconf(_SC_CLK_TCK)) {}

std::vector<std::string> CgroupCollector::SelectCgroups(const CgroupLayout& layout,
                                                        size_t* skipped) {
  OrderedPaths wanted;
  // 1. Cgroups of watched processes and of known jobs come first: they are why we are here.
  if (context_.watch_list) {
    for (const WatchList::Entry& e : context_.watch_list->Snapshot(UnixNanos(), kWatchTtlNs)) {
      StatusOr<std::string> text =
          ReadSmallFile(context_.paths.Proc(std::to_string(e.pid) + "/cgroup"));
      if (!text.ok()) {
        continue;  // Gone since it was watched.
      }
      for (const std::string& path : CgroupPathsOfProcess(ParseProcCgroup(*text), layout)) {
        wanted.Add(path);
      }
    }
  }
  if (context_.resolver) {
    for (const JobInfo& job : context_.resolver->CachedJobs()) {
      wanted.Add(job.cgroup);
    }
  }
  // 2. Configured or default globs over every hierarchy read from.
  for (const std::string& path : Globbed(layout)) {
    wanted.Add(path);
  }
  std::vector<std::string>& paths = wanted.paths();
  *skipped = paths.size() > kMaxCgroups ? paths.size() - kMaxCgroups : 0;
  if (paths.size() > kMaxCgroups) {
    paths.resize(kMaxCgroups);
  }
  return std::move(paths);
}

const std::set<std::string>& CgroupCollector::Globbed(const CgroupLayout& layout) {
  const int64_t now = MonotonicNanos();
  if (globbed_at_ns_ != 0 && !glob_gone_ && now - globbed_at_ns_ < kGlobRescanNs) {
    return globbed_;
  }
  globbed_at_ns_ = now;
  glob_gone_ = false;
  files_.CloseAll();  // Nothing of a cgroup removed since stays open.
  std::vector<std::string_view> patterns;
  if (context_.OptionsFor<CgroupCollectorOptions>().patterns.empty()) {
    for (std::string_view p : DefaultCgroupPatterns()) {
      patterns.push_back(p);
    }
  } else {
    for (const std::string& p : context_.OptionsFor<CgroupCollectorOptions>().patterns) {
      patterns.push_back(p);
    }
  }
  const std::vector<std::string> roots = StatRoots(layout);
  // Expansion stops early once far past the cap; `skipped` is then a lower bound.
  const size_t expand_limit = 4 * kMaxCgroups;
  globbed_.clear();
  for (std::string_view pattern : patterns) {
    for (const std::string& root : roots) {
      for (const std::string& path : ExpandCgroupGlob(root, pattern, expand_limit)) {
        globbed_.insert(layout.HierarchyPath(root, path));
      }
    }
  }
  return globbed_;
}

Status CgroupCollector::Collect(MetricWriter& out) {
  if (!layout_) {
    VIGIL_ASSIGN_OR_RETURN(CgroupLayout layout, DetectCgroupLayout(context_.paths));
    for (const auto& [dir, root] : layout.mount_roots) {
      VIGIL_LOG_WARN(
          "cgroup: {} shows only the cgroup {} (a container without the host's cgroup tree): "
          "cgroups outside it, such as other containers' jobs, cannot be read; mount the host's "
          "/sys/fs/cgroup into the container to see them",
          dir, root);
    }
    layout_ = std::move(layout);
  }
  size_t skipped = 0;
  const std::vector<std::string> paths = SelectCgroups(*layout_, &skipped);

  std::map<std::string, JobInfo> jobs_by_cgroup;
  if (context_.resolver) {
    for (JobInfo& job : context_.resolver->CachedJobs()) {
      jobs_by_cgroup.emplace(job.cgroup, std::move(job));
    }
  }
  int unreadable = 0;
  int monitored = 0;
  for (const std::string& path : paths) {
    CgroupStats s = ReadCgroupStats(*layout_, path, clock_ticks_, &files_);
    unreadable += s.unreadable_files;
    if (!s.found) {
      glob_gone_ |= globbed_.contains(path);
      continue;  // Removed since it was listed.
    }
    ++monitored;
    Labels labels = {{"cgroup", path}};
    if (context_.resolver) {
      auto it = jobs_by_cgroup.find(path);
      JobInfo job =
          it != jobs_by_cgroup.end() ? it->second : context_.resolver->ResolveCgroup(path);
      if (!job.job_id.empty()) {
        labels.emplace_back("job_id", job.job_id);
      }
      if (!job.user.empty()) {
        labels.emplace_back("user", job.user);
      }
    }
    AddIf(out, kCpuUsage, s.cpu_usage_seconds, labels);
    AddIf(out, kCpuUser, s.cpu_user_seconds, labels);
    AddIf(out, kCpuSystem, s.cpu_system_seconds, labels);
    AddIf(out, kPeriods, s.cpu_periods, labels);
    AddIf(out, kThrottledPeriods, s.cpu_throttled_periods, labels);
    AddIf(out, kThrottled, s.cpu_throttled_seconds, labels);
    AddIf(out, kMemUsage, s.memory_usage_bytes, labels);
    AddIf(out, kMemPeak, s.memory_peak_bytes, labels);
    AddIf(out, kMemLimit, s.memory_limit_bytes, labels);
    AddIf(out, kIoRead, s.io_read_bytes, labels);
    AddIf(out, kIoWritten, s.io_written_bytes, labels);
  }
  out.Add(kMonitored, monitored);
  out.Add(kSkipped, static_cast<double>(skipped));
  out.Add(kUnreadable, unreadable);
  const std::vector<std::string> roots = StatRoots(*layout_);
  out.Add(kLayout, 1,
          {{"version", std::string(CgroupKindName(layout_->kind))},
           {"root", std::string(roots.empty() ? "/" : layout_->MountRoot(roots.front()))}});
  return OkStatus();
}

}  // namespace vigil
