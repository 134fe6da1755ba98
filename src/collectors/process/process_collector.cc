// SPDX-License-Identifier: Apache-2.0
#include "collectors/process/process_collector.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "attribution/proc_pid_files.h"
#include "base/file_util.h"
#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "collectors/job_labels.h"

namespace vigil {
namespace {

constexpr int64_t kWatchTtlNs = 600 * kNanosPerSecond;
constexpr size_t kMaxCmdlineBytes = 64 << 10;

constexpr MetricDesc kCpuUser{"vigil_process_cpu_user_seconds_total",
                              "User-mode CPU time of the group's live processes.",
                              MetricKind::kCounter, "seconds"};
constexpr MetricDesc kCpuSystem{"vigil_process_cpu_system_seconds_total",
                                "Kernel-mode CPU time of the group's live processes.",
                                MetricKind::kCounter, "seconds"};
constexpr MetricDesc kRss{"vigil_process_resident_memory_bytes",
                          "Resident memory of the group's processes, summed.", MetricKind::kGauge,
                          "bytes"};
constexpr MetricDesc kThreads{"vigil_process_threads", "Threads of the group's processes, summed.",
                              MetricKind::kGauge, ""};
constexpr MetricDesc kFds{"vigil_process_open_fds",
                          "Open file descriptors of the group's processes, summed.",
                          MetricKind::kGauge, ""};
constexpr MetricDesc kUnreadableFds{
    "vigil_process_unreadable_fd_dirs",
    "Processes of the group whose fd directory could not be listed (permission).",
    MetricKind::kGauge, ""};
constexpr MetricDesc kStart{"vigil_process_start_time_seconds",
                            "Start time of the group's oldest process, Unix seconds.",
                            MetricKind::kGauge, "seconds"};
constexpr MetricDesc kCount{"vigil_process_count", "Processes in the group.", MetricKind::kGauge,
                            ""};

constexpr const MetricDesc* kMetrics[] = {&kCpuUser, &kCpuSystem,     &kRss,   &kThreads,
                                          &kFds,     &kUnreadableFds, &kStart, &kCount};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcessCollector>(context);
}

struct Group {
  Labels labels;
  double user_seconds = 0;
  double system_seconds = 0;
  double rss_bytes = 0;
  double threads = 0;
  double fds = 0;
  double unreadable_fd_dirs = 0;
  double count = 0;
  uint64_t min_start_ticks = UINT64_MAX;
};

std::optional<int> ParsePid(std::string_view name) {
  std::optional<int64_t> v = ParseInt64(name);
  if (!v || *v <= 0 || *v > INT32_MAX) {
    return std::nullopt;
  }
  return static_cast<int>(*v);
}

}  // namespace

const CollectorInfo ProcessCollector::kInfo = {
    .name = "proc_process",
    .help = "CPU, memory, threads and fds of watched or matching processes, per (comm, job).",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

ProcessCollector::ProcessCollector(const CollectorContext& context)
    : context_(context), clock_ticks_(sysconf(_SC_CLK_TCK)), page_size_(sysconf(_SC_PAGESIZE)) {
  for (const std::string& pattern : context_.OptionsFor<ProcessCollectorOptions>().patterns) {
    try {
      patterns_.emplace_back(pattern, std::regex::extended | std::regex::nosubs);
    } catch (const std::regex_error& e) {
      VIGIL_LOG_WARN("ignoring bad process pattern: pattern={} err={}", SanitizeForLog(pattern),
                     e.what());
    }
  }
  if (clock_ticks_ <= 0) {
    clock_ticks_ = 100;
  }
  if (page_size_ <= 0) {
    page_size_ = 4096;
  }
}

bool ProcessCollector::MatchesPattern(int pid) {
  const std::string dir = context_.paths.Proc(std::to_string(pid));
  StatusOr<std::string> comm = ReadSmallFile(JoinPath(dir, "comm"), 4096);
  std::string comm_text = comm.ok() ? std::string(Trim(*comm)) : std::string();
  StatusOr<std::string> raw = ReadSmallFile(JoinPath(dir, "cmdline"), kMaxCmdlineBytes);
  std::string cmdline = raw.ok() ? CmdlineToString(*raw) : std::string();
  for (const std::regex& re : patterns_) {
    if ((!comm_text.empty() && std::regex_search(comm_text, re)) ||
        (!cmdline.empty() && std::regex_search(cmdline, re))) {
      return true;
    }
  }
  return false;
}

std::vector<int> ProcessCollector::SelectPids() {
  std::vector<int> pids;
  if (context_.watch_list) {
    for (const WatchList::Entry& e : context_.watch_list->Snapshot(UnixNanos(), kWatchTtlNs)) {
      pids.push_back(e.pid);
    }
  }
  if (!patterns_.empty()) {
    StatusOr<std::vector<std::string>> names = ListDir(context_.paths.proc_root);
    if (names.ok()) {
      for (const std::string& name : *names) {
        std::optional<int> pid = ParsePid(name);
        if (pid && MatchesPattern(*pid)) {
          pids.push_back(*pid);
        }
      }
    }
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

Status ProcessCollector::Collect(MetricWriter& out) {
  if (!PathExists(context_.paths.proc_root)) {
    return NotFoundError("no proc filesystem at " + context_.paths.proc_root);
  }
  std::map<Labels, Group> groups;
  for (int pid : SelectPids()) {
    const std::string dir = context_.paths.Proc(std::to_string(pid));
    StatusOr<std::string> stat_text = ReadSmallFile(JoinPath(dir, "stat"));
    std::optional<ProcStat> stat =
        stat_text.ok() ? ParseProcStat(*stat_text) : std::optional<ProcStat>();
    if (!stat) {
      if (context_.watch_list && !PathExists(dir)) {
        context_.watch_list->Unwatch(pid);  // Exited: stop watching.
      }
      continue;
    }
    Labels labels = {{"comm", stat->comm}};
    if (context_.resolver) {
      StatusOr<JobInfo> job = context_.resolver->Resolve(pid);
      if (!job.ok() && IsAbsent(job.status()) && !PathExists(dir)) {
        continue;  // Exited between the two reads.
      }
      if (job.ok()) {
        AppendJobLabels(*job, &labels);
      }
    }
    SortLabels(&labels);
    Group& g = groups[labels];
    g.labels = labels;
    g.count += 1;
    g.user_seconds += static_cast<double>(stat->utime_ticks) / static_cast<double>(clock_ticks_);
    g.system_seconds += static_cast<double>(stat->stime_ticks) / static_cast<double>(clock_ticks_);
    g.threads += static_cast<double>(stat->num_threads);
    g.min_start_ticks = std::min(g.min_start_ticks, stat->starttime_ticks);
    // statm's second field: resident pages (the same count as stat's rss field).
    StatusOr<std::string> statm = ReadSmallFile(JoinPath(dir, "statm"), 4096);
    std::vector<std::string_view> statm_fields =
        statm.ok() ? SplitWhitespace(Trim(*statm)) : std::vector<std::string_view>();
    std::optional<int64_t> resident =
        statm_fields.size() >= 2 ? ParseInt64(statm_fields[1]) : std::optional<int64_t>();
    g.rss_bytes += static_cast<double>(resident.value_or(stat->rss_pages) * page_size_);
    StatusOr<std::vector<std::string>> fds = ListDir(JoinPath(dir, "fd"));
    if (fds.ok()) {
      g.fds += static_cast<double>(fds->size());
    } else if (fds.status().code() == StatusCode::kPermissionDenied) {
      g.unreadable_fd_dirs += 1;
    }
  }

  std::optional<double> boot_time;
  if (StatusOr<std::string> text = ReadSmallFile(context_.paths.Proc("stat")); text.ok()) {
    std::string_view rest = *text;
    std::string_view line;
    while (NextLine(&rest, &line)) {
      if (line.starts_with("btime ")) {
        if (std::optional<int64_t> v = ParseInt64(Trim(line.substr(6)))) {
          boot_time = static_cast<double>(*v);
        }
      }
    }
  }

  for (const auto& [key, g] : groups) {
    out.Add(kCpuUser, g.user_seconds, g.labels);
    out.Add(kCpuSystem, g.system_seconds, g.labels);
    out.Add(kRss, g.rss_bytes, g.labels);
    out.Add(kThreads, g.threads, g.labels);
    out.Add(kFds, g.fds, g.labels);
    if (g.unreadable_fd_dirs > 0) {
      out.Add(kUnreadableFds, g.unreadable_fd_dirs, g.labels);
    }
    if (boot_time) {
      out.Add(
          kStart,
          *boot_time + static_cast<double>(g.min_start_ticks) / static_cast<double>(clock_ticks_),
          g.labels);
    }
    out.Add(kCount, g.count, g.labels);
  }
  return OkStatus();
}

}  // namespace vigil
