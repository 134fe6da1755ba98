// SPDX-License-Identifier: Apache-2.0
#include "ipc/process_registry.h"

#include <utility>

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/logging.h"
#include "base/strings.h"

namespace vigil {
namespace {

// What a Kineto process claims: the integer it sent ($SLURM_JOB_ID, 0 for none).
JobInfo KinetoClaim(int64_t job_id) {
  JobInfo claim;
  claim.job_id = job_id != 0 ? std::to_string(job_id) : "";
  claim.framework = "pytorch";
  return claim;
}

void SetLabels(const JobInfo& job, RegisteredProcess* p) {
  p->team = job.team;
  p->model = job.model;
  p->framework = job.framework;
}

void SetSettled(const JobInfo& claim, const JobInfo& job, int64_t now, RegisteredProcess* p) {
  p->claim = claim;
  p->job_id = job.job_id;
  SetLabels(job, p);
  p->settled_ns = now;
}

}  // namespace

bool RegisteredProcess::MatchesJob(const std::string& job) const {
  return job == job_id || (job == "0" && kineto_job_id == 0);
}

ProcessRegistry::ProcessRegistry(ProcessRegistryOptions options, IpcClock clock)
    : options_(std::move(options)), clock_(std::move(clock)) {}

RegisteredProcess* ProcessRegistry::FindLocked(int32_t host_pid) {
  auto it = by_host_pid_.find(host_pid);
  return it == by_host_pid_.end() ? nullptr : &it->second;
}

RegisteredProcess* ProcessRegistry::Upsert(const Claim& claim, const PeerCredentials& cred,
                                           int64_t job_id, const std::string& job_str,
                                           const std::string& source, const IpcAddress& from,
                                           bool* created) {
  const int64_t now = clock_();
  auto it = by_host_pid_.find(claim.host_pids[0]);
  *created = it == by_host_pid_.end();
  if (*created) {
    if (by_host_pid_.size() >= options_.max_processes) {
      ++counters_.registry_full;
      return nullptr;
    }
    RegisteredProcess p;
    p.host_pid = claim.host_pids[0];
    p.registered_ns = now;
    it = by_host_pid_.emplace(p.host_pid, std::move(p)).first;
  }
  RegisteredProcess& p = it->second;
  p.pid = claim.pids[0];
  p.uid = cred.uid;
  p.pids = claim.pids;
  p.host_pids = claim.host_pids;
  p.kineto_job_id = job_id;
  p.job_id = job_str;
  p.source = source;
  p.last_seen_ns = now;
  p.reply_to = from;
  return &p;
}

JobInfo ProcessRegistry::Settle(int32_t host_pid, const JobInfo& claim) const {
  if (options_.settle_claim) {
    return options_.settle_claim(host_pid, claim);
  }
  return claim;
}

void ProcessRegistry::MaybeResettle(int32_t host_pid) {
  if (!options_.settle_claim) {
    return;
  }
  JobInfo claim;
  {
    std::lock_guard<std::mutex> lock(mu_);
    RegisteredProcess* p = FindLocked(host_pid);
    if (p == nullptr || clock_() - p->settled_ns < options_.resettle_ns) {
      return;
    }
    claim = p->claim;
  }
  const JobInfo job = Settle(host_pid, claim);
  std::lock_guard<std::mutex> lock(mu_);
  if (RegisteredProcess* p = FindLocked(host_pid); p != nullptr && p->claim == claim) {
    SetSettled(claim, job, clock_(), p);
  }
}

StatusOr<int32_t> ProcessRegistry::RegisterContext(const PeerCredentials& cred,
                                                   const KinetoContext& context,
                                                   const IpcAddress& from) {
  auto claim = VerifyClaim(cred, {context.pid});
  if (!claim.ok()) {
    ++counters_.refused_claims;
    return claim.status();
  }
  const JobInfo asked = KinetoClaim(context.job_id);
  const JobInfo job = Settle(claim->host_pids[0], asked);
  int32_t count = 0;
  std::lock_guard<std::mutex> lock(mu_);
  bool created = false;
  RegisteredProcess* p = Upsert(*claim, cred, context.job_id, job.job_id, "kineto", from, &created);
  if (p == nullptr) {
    return ResourceExhaustedError("process registry is full");
  }
  SetSettled(asked, job, clock_(), p);
  p->gpus.insert(context.gpu);
  for (const auto& [pid, other] : by_host_pid_) {
    if (other.job_id == p->job_id && other.gpus.count(context.gpu) != 0) {
      ++count;
    }
  }
  return count;
}

StatusOr<std::string> ProcessRegistry::Poll(const PeerCredentials& cred,
                                            const KinetoRequest& request, const IpcAddress& from) {
  auto claim = VerifyClaim(cred, request.pids);
  if (!claim.ok()) {
    ++counters_.refused_claims;
    return claim.status();
  }
  const int32_t host_pid = claim->host_pids[0];
  std::optional<JobInfo> job;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (RegisteredProcess* known = FindLocked(host_pid); known != nullptr) {
      job = JobInfo{};  // Settled once, at registration.
      job->job_id = known->job_id;
    }
  }
  const bool settled_now = !job.has_value();
  const JobInfo asked = KinetoClaim(request.job_id);
  if (settled_now) {
    job = Settle(host_pid, asked);
  } else {
    MaybeResettle(host_pid);
    std::lock_guard<std::mutex> lock(mu_);
    if (RegisteredProcess* known = FindLocked(host_pid); known != nullptr) {
      job->job_id = known->job_id;
    }
  }
  std::string config;
  std::string delivered_trace;
  {
    std::lock_guard<std::mutex> lock(mu_);
    bool created = false;
    RegisteredProcess* p =
        Upsert(*claim, cred, request.job_id, job->job_id, "kineto", from, &created);
    if (p == nullptr) {
      return ResourceExhaustedError("process registry is full");
    }
    if (settled_now) {
      SetSettled(asked, *job, clock_(), p);
    }
    if ((request.config_type & kKinetoConfigActivities) != 0 && !p->pending_config.empty()) {
      config = p->pending_config + "\n";
      p->pending_config.clear();
      delivered_trace = p->trace_id;
    }
  }
  if (!delivered_trace.empty() && observer_ != nullptr) {
    observer_->OnDelivered(host_pid, delivered_trace, clock_());
  }
  return config;
}

StatusOr<RegisteredProcess> ProcessRegistry::RegisterClient(const PeerCredentials& cred,
                                                            const ClientRegistration& reg,
                                                            const IpcAddress& from) {
  std::vector<int32_t> pids = reg.pids;
  if (pids.empty() || pids[0] != reg.pid) {
    pids.insert(pids.begin(), reg.pid);
  }
  auto claim = VerifyClaim(cred, pids);
  if (!claim.ok()) {
    ++counters_.refused_claims;
    return claim.status();
  }
  JobInfo asked;
  asked.job_id = reg.job_id;
  asked.team = reg.team;
  asked.model = reg.model;
  asked.framework = reg.framework;
  const JobInfo job = Settle(claim->host_pids[0], asked);
  std::lock_guard<std::mutex> lock(mu_);
  bool created = false;
  RegisteredProcess* p = Upsert(*claim, cred, 0, job.job_id, "vigil_client", from, &created);
  if (p == nullptr) {
    return ResourceExhaustedError("process registry is full");
  }
  SetSettled(asked, job, clock_(), p);
  p->peak_flops = reg.peak_flops;
  if (reg.gpu >= 0) {
    p->gpus.insert(reg.gpu);
  }
  return *p;
}

StatusOr<std::string> ProcessRegistry::PollClient(const PeerCredentials& cred,
                                                  const IpcAddress& from) {
  std::string config;
  std::string delivered_trace;
  int32_t host_pid = cred.pid;
  {
    std::lock_guard<std::mutex> lock(mu_);
    RegisteredProcess* p = FindLocked(cred.pid);
    if (p == nullptr) {
      return NotFoundError(fmt::format("pid {} has not registered", cred.pid));
    }
    p->last_seen_ns = clock_();
    p->reply_to = from;
    if (!p->pending_config.empty()) {
      config = p->pending_config;
      p->pending_config.clear();
      delivered_trace = p->trace_id;
    }
  }
  if (!delivered_trace.empty() && observer_ != nullptr) {
    observer_->OnDelivered(host_pid, delivered_trace, clock_());
  }
  return config;
}

StatusOr<RegisteredProcess> ProcessRegistry::Touch(const PeerCredentials& cred) {
  MaybeResettle(cred.pid);
  std::lock_guard<std::mutex> lock(mu_);
  RegisteredProcess* p = FindLocked(cred.pid);
  if (p == nullptr) {
    return NotFoundError(fmt::format("pid {} has not registered", cred.pid));
  }
  p->last_seen_ns = clock_();
  return *p;
}

std::vector<RegisteredProcess> ProcessRegistry::Match(const std::string& job,
                                                      const std::set<int32_t>& pids) const {
  const bool all_pids = pids.empty() || (pids.size() == 1 && *pids.begin() == 0);
  std::vector<RegisteredProcess> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [host_pid, p] : by_host_pid_) {
    if (!job.empty() && !p.MatchesJob(job)) {
      continue;
    }
    bool hit = all_pids;
    for (size_t i = 0; !hit && i < p.pids.size(); ++i) {
      hit = pids.count(p.pids[i]) != 0 || pids.count(p.host_pids[i]) != 0;
    }
    // Exited: its /proc entry is gone (a zombie keeps one until reaped, and is not polling
    // either, but it is gone within the parent's next wait).
    if (hit && options_.match_only_live &&
        !PathExists(JoinPath(options_.proc_root, std::to_string(host_pid)))) {
      hit = false;
    }
    if (hit) {
      out.push_back(p);
    }
  }
  return out;
}

std::vector<RegisteredProcess> ProcessRegistry::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<RegisteredProcess> out;
  out.reserve(by_host_pid_.size());
  for (const auto& [host_pid, p] : by_host_pid_) {
    out.push_back(p);
  }
  return out;
}

std::optional<RegisteredProcess> ProcessRegistry::Find(int32_t host_pid) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_host_pid_.find(host_pid);
  if (it == by_host_pid_.end()) {
    return std::nullopt;
  }
  return it->second;
}

bool ProcessRegistry::Offer(int32_t host_pid, const std::string& config,
                            const std::string& trace_id) {
  std::lock_guard<std::mutex> lock(mu_);
  RegisteredProcess* p = FindLocked(host_pid);
  if (p == nullptr || !p->trace_id.empty() || !p->pending_config.empty()) {
    return false;
  }
  p->pending_config = config;
  p->trace_id = trace_id;
  return true;
}

void ProcessRegistry::Release(int32_t host_pid, const std::string& trace_id) {
  std::lock_guard<std::mutex> lock(mu_);
  RegisteredProcess* p = FindLocked(host_pid);
  if (p != nullptr && p->trace_id == trace_id) {
    p->trace_id.clear();
    p->pending_config.clear();
  }
}

void ProcessRegistry::Adopt(RegisteredProcess process) {
  process.last_seen_ns = clock_();
  std::lock_guard<std::mutex> lock(mu_);
  const int32_t key = process.host_pid;
  by_host_pid_[key] = std::move(process);
}

size_t ProcessRegistry::Expire() {
  const int64_t now = clock_();
  std::vector<std::pair<int32_t, std::string>> gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = by_host_pid_.begin(); it != by_host_pid_.end();) {
      if (now - it->second.last_seen_ns > options_.expiry_ns) {
        VIGIL_LOG_INFO("ipc process expired: pid={} job_id={}", it->second.pid,
                       SanitizeForLog(it->second.job_id));
        gone.emplace_back(it->first, it->second.trace_id);
        it = by_host_pid_.erase(it);
      } else {
        ++it;
      }
    }
  }
  counters_.expired += gone.size();
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    for (auto it = claim_cache_.begin(); it != claim_cache_.end();) {
      it = now - it->second.verified_ns >= options_.claim_cache_ns ? claim_cache_.erase(it)
                                                                   : std::next(it);
    }
  }
  if (observer_ != nullptr) {
    for (const auto& [host_pid, trace_id] : gone) {
      if (!trace_id.empty()) {
        observer_->OnExpired(host_pid, trace_id, now);
      }
    }
  }
  return gone.size();
}

size_t ProcessRegistry::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_host_pid_.size();
}

}  // namespace vigil
