// SPDX-License-Identifier: Apache-2.0
#include "attribution/job_resolver.h"

#include <map>
#include <optional>
#include <set>
#include <utility>

#include "attribution/cgroup_path_rules.h"
#include "attribution/mapping_file.h"
#include "attribution/proc_pid_files.h"
#include "attribution/process_environment.h"
#include "attribution/scheduler_names.h"
#include "attribution/user_names.h"
#include "base/file_util.h"
#include "base/strings.h"

namespace vigil {
namespace {

constexpr int kMaxAncestorDepth = 64;
constexpr size_t kMaxCacheEntries = 65536;

// Environment variables that name the job, strongest first.
constexpr std::string_view kJobIdVars[] = {"VIGIL_JOB_ID", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID"};

void Fill(std::string* field, std::string_view value) {
  if (field->empty() && !value.empty()) {
    *field = std::string(value);
  }
}

std::string_view Lookup(const std::map<std::string, std::string>& env, std::string_view key) {
  auto it = env.find(std::string(key));
  return it == env.end() ? std::string_view() : std::string_view(it->second);
}

}  // namespace

struct JobResolver::Impl {
  explicit Impl(JobResolverOptions opts)
      : options(std::move(opts)),
        names(options.kubelet, options.kubelet_configured, options.slurm) {}

  std::string PidFile(int pid, std::string_view name) const {
    return JoinPath(JoinPath(options.proc_root, std::to_string(pid)), name);
  }

  // The process's stat, or NotFound when it is gone.
  StatusOr<ProcStat> ReadStat(int pid) const {
    StatusOr<std::string> text = ReadSmallFile(PidFile(pid, "stat"));
    if (!text.ok()) {
      if (!PathExists(JoinPath(options.proc_root, std::to_string(pid)))) {
        return NotFoundError("process " + std::to_string(pid) + " is gone");
      }
      return text.status();
    }
    std::optional<ProcStat> stat = ParseProcStat(*text);
    if (!stat) {
      return DataLossError("malformed " + PidFile(pid, "stat"));
    }
    return *stat;
  }

  // The registration that covers `pid` (itself or its nearest registered ancestor).
  std::optional<JobInfo> FindRegistration(int pid, uint64_t starttime, int ppid) {
    std::map<int, std::pair<uint64_t, JobInfo>> regs;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (registrations.empty()) {
        return std::nullopt;
      }
      regs = registrations;
    }
    int cur = pid;
    uint64_t cur_start = starttime;
    int parent = ppid;
    for (int depth = 0; depth < kMaxAncestorDepth && cur > 0; ++depth) {
      auto it = regs.find(cur);
      if (it != regs.end() && (it->second.first == 0 || it->second.first == cur_start)) {
        return it->second.second;
      }
      if (parent <= 0 || parent == cur) {
        break;
      }
      cur = parent;
      StatusOr<std::string> status_text = ReadSmallFile(PidFile(cur, "status"));
      StatusOr<ProcStat> stat = ReadStat(cur);
      if (!status_text.ok() || !stat.ok()) {
        break;
      }
      parent = ParseProcStatus(*status_text).ppid;
      cur_start = stat->starttime_ticks;
    }
    return std::nullopt;
  }

  std::map<std::string, std::string> ReadEnvironment(int pid) const {
    return ReadAllowedEnvironment(options.proc_root, pid, options.env_allow_list);
  }

  void ApplyCgroupRules(JobInfo* info, bool user_from_path, int pid) {
    std::optional<CgroupJobMatch> m = MatchCgroupPath(info->cgroup);
    if (!m) {
      return;
    }
    if (user_from_path && !m->user.empty()) {
      Fill(&info->user, UserNameForUid(ParseInt64(m->user).value_or(-1)));
    }
    if (m->rule == "k8s_pod") {
      info->k8s_pod_uid = m->job_id;
      info->k8s_container_id = m->k8s_container_id;
    }
    if (m->job_id.empty() && !m->slurm_sluid.empty()) {
      m->job_id = names.SlurmJobForSluid(m->slurm_sluid, pid, [&] {
        return std::string(Lookup(ReadEnvironment(pid), "SLURM_JOB_ID"));
      });
    }
    if (info->job_id.empty() && !m->job_id.empty()) {
      info->job_id = m->job_id;
      info->rule = m->rule;
      NoteSchedulerJob(m->job_id);
    }
  }

  // Remembers a job id that a cgroup gives: from then on no claim outside it may name it.
  void NoteSchedulerJob(const std::string& job_id) {
    std::lock_guard<std::mutex> lock(mu);
    if (scheduler_jobs.count(job_id) != 0) {
      return;
    }
    if (scheduler_jobs.size() >= kMaxCacheEntries) {
      scheduler_jobs.clear();  // Bounded memory; live jobs are seen again on their next resolve.
    }
    scheduler_jobs.insert(job_id);
    cache.clear();  // A process resolved earlier may have claimed this id.
  }

  bool IsSchedulerJob(const std::string& job_id) {
    std::lock_guard<std::mutex> lock(mu);
    return scheduler_jobs.count(job_id) != 0;
  }

  // What a process says about its own job (IPC claim or environment) may name the job only where
  // the scheduler has not, and never a job the scheduler runs elsewhere on this host.
  bool MayClaim(const JobInfo& info, const std::string& job_id) {
    return info.job_id.empty() && !job_id.empty() && !IsSchedulerJob(job_id);
  }

  // The job part of an IPC claim: it names the job only where MayClaim allows.
  void ClaimJob(const JobInfo& claim, JobInfo* info) {
    if (MayClaim(*info, claim.job_id)) {
      info->job_id = claim.job_id;
      info->rule = "ipc_registration";
    }
  }

  // The labels of an IPC claim, applied last (the operator's mapping file fills first): they
  // count only for the job the claim names, once that is the process's job.
  static void ClaimLabels(const JobInfo& claim, JobInfo* info) {
    if (claim.job_id.empty() || claim.job_id != info->job_id) {
      return;  // Claims about a job the process is not in are dropped whole.
    }
    Fill(&info->team, claim.team);
    Fill(&info->model, claim.model);
    Fill(&info->framework, claim.framework);
  }

  void ApplyEnvironment(int pid, JobInfo* info) {
    const std::map<std::string, std::string> env = ReadEnvironment(pid);
    if (env.empty()) {
      return;
    }
    for (std::string_view var : kJobIdVars) {
      const std::string value(Lookup(env, var));
      if (MayClaim(*info, value)) {
        info->job_id = value;
        info->rule = "env";
      }
    }
    Fill(&info->team, Lookup(env, "VIGIL_TEAM"));
    Fill(&info->model, Lookup(env, "VIGIL_MODEL"));
    Fill(&info->framework, Lookup(env, "VIGIL_FRAMEWORK"));
    if (!Lookup(env, "TORCHELASTIC_RUN_ID").empty()) {
      Fill(&info->framework, "pytorch");
    }
  }

  void ApplyMapping(JobInfo* info) {
    std::shared_ptr<const JobMapping> m;
    {
      std::lock_guard<std::mutex> lock(mu);
      m = mapping;
    }
    const bool had_job = !info->job_id.empty();
    if (m && m->Apply(info) && !had_job && !info->job_id.empty()) {
      info->rule = "mapping_file";
    }
  }

  StatusOr<JobInfo> Compute(int pid, const ProcStat& stat) {
    JobInfo info;
    StatusOr<std::string> cgroup_text = ReadSmallFile(PidFile(pid, "cgroup"));
    if (cgroup_text.ok()) {
      info.cgroup = PreferredCgroupPath(ParseProcCgroup(*cgroup_text));
    }
    StatusOr<std::string> status_text = ReadSmallFile(PidFile(pid, "status"));
    if (!status_text.ok() && !PathExists(JoinPath(options.proc_root, std::to_string(pid)))) {
      return NotFoundError("process " + std::to_string(pid) + " is gone");
    }
    ProcStatus status = status_text.ok() ? ParseProcStatus(*status_text) : ProcStatus();
    const int ppid = status.ppid >= 0 ? status.ppid : stat.ppid;
    ApplyCgroupRules(&info, /*user_from_path=*/false, pid);  // The scheduler's word first.
    const std::optional<JobInfo> reg = FindRegistration(pid, stat.starttime_ticks, ppid);
    if (reg) {
      ClaimJob(*reg, &info);
    }
    Fill(&info.user, UserNameForUid(status.uid));
    ApplyEnvironment(pid, &info);
    ApplyMapping(&info);
    if (reg) {
      ClaimLabels(*reg, &info);
    }
    if (info.rule.empty()) {
      info.rule = "none";
    }
    return info;
  }

  StatusOr<JobInfo> ResolveCached(int pid, bool* cached);

  JobResolverOptions options;
  std::mutex mu;
  std::shared_ptr<const JobMapping> mapping;                    // Guarded by mu.
  std::unordered_map<int, std::pair<uint64_t, JobInfo>> cache;  // pid -> (starttime, info).
  std::map<int, std::pair<uint64_t, JobInfo>> registrations;    // pid -> (starttime, info).
  std::set<std::string> scheduler_jobs;                         // Job ids a cgroup gave.
  SchedulerNames names;  // Kubernetes names, Slurm SLUIDs; thread-safe on its own.
};

JobResolver::JobResolver(JobResolverOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

JobResolver::~JobResolver() = default;

Status JobResolver::LoadMapping() {
  if (impl_->options.mapping_file.empty()) {
    return OkStatus();
  }
  VIGIL_ASSIGN_OR_RETURN(JobMapping mapping, JobMapping::Load(impl_->options.mapping_file));
  auto shared = std::make_shared<const JobMapping>(std::move(mapping));
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->mapping = std::move(shared);
  impl_->cache.clear();  // Cached answers may have used the old rules.
  return OkStatus();
}

StatusOr<JobInfo> JobResolver::Impl::ResolveCached(int pid, bool* cached) {
  if (pid <= 0) return InvalidArgumentError("bad pid " + std::to_string(pid));
  VIGIL_ASSIGN_OR_RETURN(ProcStat stat, ReadStat(pid));
  JobInfo info;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(pid);
    *cached = it != cache.end() && it->second.first == stat.starttime_ticks;
    if (*cached) info = it->second.second;
  }
  if (!*cached) {
    VIGIL_ASSIGN_OR_RETURN(info, Compute(pid, stat));
    std::lock_guard<std::mutex> lock(mu);
    if (cache.size() >= kMaxCacheEntries) cache.clear();  // Bounded; Prune() keeps it far below.
    cache[pid] = {stat.starttime_ticks, info};
  }
  names.NamePod(&info);  // Names learnt since the answer was cached count at once.
  return info;
}

StatusOr<JobInfo> JobResolver::Resolve(int pid) {
  bool cached = false;
  return impl_->ResolveCached(pid, &cached);
}

StatusOr<JobInfo> JobResolver::ResolveOnDevice(int pid,
                                               const std::vector<std::string>& device_ids) {
  bool cached = false;
  VIGIL_ASSIGN_OR_RETURN(JobInfo info, impl_->ResolveCached(pid, &cached));
  impl_->names.NameFromDevice(device_ids, /*confirm=*/!cached, &info);
  return info;
}

std::vector<std::string> JobResolver::Degradations() const { return impl_->names.Degradations(); }

void JobResolver::RecordRegistration(int pid, const JobInfo& info) {
  StatusOr<ProcStat> stat = impl_->ReadStat(pid);
  // starttime 0 when the process cannot be read: the registration then matches any process with
  // this pid until Prune() sees it gone.
  const uint64_t start = stat.ok() ? stat->starttime_ticks : 0;
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->registrations.find(pid);
  if (it != impl_->registrations.end() && it->second.first == start && it->second.second == info) {
    return;  // The same claim again: cached answers stand.
  }
  impl_->registrations[pid] = {start, info};
  impl_->cache.clear();  // Descendants' cached answers are stale now.
}

JobInfo JobResolver::SettleClaim(int pid, const JobInfo& claim) {
  // A claim of no job is no registration (it would hide an ancestor's); its labels may still
  // describe whatever job the process is in.
  if (!claim.job_id.empty()) {
    RecordRegistration(pid, claim);
  }
  JobInfo info;
  if (StatusOr<JobInfo> resolved = Resolve(pid); resolved.ok()) {
    info = *resolved;
  } else {
    impl_->ClaimJob(claim, &info);
    impl_->ApplyMapping(&info);
    impl_->ClaimLabels(claim, &info);
  }
  if (claim.job_id.empty()) {
    Fill(&info.team, claim.team);
    Fill(&info.model, claim.model);
    Fill(&info.framework, claim.framework);
  }
  if (info.rule.empty()) {
    info.rule = "none";
  }
  return info;
}

void JobResolver::Prune() {
  std::vector<std::pair<int, uint64_t>> known;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    for (const auto& [pid, entry] : impl_->cache) {
      known.emplace_back(pid, entry.first);
    }
    for (const auto& [pid, entry] : impl_->registrations) {
      known.emplace_back(pid, entry.first);
    }
  }
  std::set<int> gone;
  std::map<int, uint64_t> alive_start;
  for (const auto& [pid, start] : known) {
    if (gone.count(pid) > 0 || alive_start.count(pid) > 0) {
      continue;
    }
    StatusOr<ProcStat> stat = impl_->ReadStat(pid);
    if (stat.ok()) {
      alive_start[pid] = stat->starttime_ticks;
    } else {
      gone.insert(pid);
    }
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto stale = [&](int pid, uint64_t start) {
    if (gone.count(pid) > 0) {
      return true;
    }
    auto it = alive_start.find(pid);
    return it != alive_start.end() && start != 0 && it->second != start;
  };
  std::erase_if(impl_->cache, [&](const auto& kv) { return stale(kv.first, kv.second.first); });
  const size_t dropped = std::erase_if(
      impl_->registrations, [&](const auto& kv) { return stale(kv.first, kv.second.first); });
  if (dropped > 0) {
    impl_->cache.clear();  // Descendants may have inherited a registration that is gone now.
  }
}

JobInfo JobResolver::ResolveCgroup(const std::string& cgroup_path) {
  JobInfo info;
  info.cgroup = cgroup_path;
  impl_->ApplyCgroupRules(&info, /*user_from_path=*/true, /*pid=*/0);
  impl_->ApplyMapping(&info);
  impl_->names.NamePod(&info);
  if (info.rule.empty()) {
    info.rule = "none";
  }
  return info;
}

std::vector<JobInfo> JobResolver::CachedJobs() {
  std::vector<JobInfo> out;
  std::set<std::pair<std::string, std::string>> seen;  // (job_id, cgroup)
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (const auto& [pid, entry] : impl_->cache) {
    const JobInfo& info = entry.second;
    if (!info.job_id.empty() && seen.insert({info.job_id, info.cgroup}).second) {
      out.push_back(info);
    }
  }
  return out;
}

}  // namespace vigil
