// SPDX-License-Identifier: Apache-2.0
#include "attribution/slurm_job_lookup.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "attribution/bounded_command.h"
#include "base/strings.h"
#include "base/time_util.h"

namespace vigil {
namespace {

constexpr size_t kMaxKnownJobs = 65536;

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

bool IsJobId(std::string_view s) {
  // "1234", or an array element "1234_7", or a heterogeneous component "1234+1".
  return !s.empty() && s.size() <= 32 && s[0] >= '0' && s[0] <= '9' &&
         std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || c == '_' || c == '+'; });
}

}  // namespace

std::map<int, std::string> ParseScontrolListpids(std::string_view text,
                                                 std::map<std::string, std::string>* sluids) {
  std::map<int, std::string> out;
  std::string_view line;
  int pid_col = -1, job_col = -1, sluid_col = -1;
  while (NextLine(&text, &line)) {
    std::vector<std::string_view> f = Fields(line);
    if (f.empty()) continue;
    if (pid_col < 0) {
      for (size_t i = 0; i < f.size(); ++i) {
        if (f[i] == "PID") pid_col = static_cast<int>(i);
        if (f[i] == "JOBID") job_col = static_cast<int>(i);
        if (f[i] == "SLUID") sluid_col = static_cast<int>(i);
      }
      if (pid_col < 0 || job_col < 0) {
        return {};  // Not listpids output.
      }
      continue;
    }
    const size_t need = static_cast<size_t>(std::max({pid_col, job_col, sluid_col})) + 1;
    if (f.size() < need) continue;
    std::optional<int64_t> pid = ParseInt64(f[static_cast<size_t>(pid_col)]);
    std::string_view job = f[static_cast<size_t>(job_col)];
    if (!pid || *pid <= 0 || *pid > (1 << 22) || !IsJobId(job)) continue;
    out[static_cast<int>(*pid)] = std::string(job);
    if (sluids != nullptr && sluid_col >= 0) {
      std::string_view sluid = f[static_cast<size_t>(sluid_col)];
      if (!sluid.empty() && sluid.size() <= 64) (*sluids)[std::string(sluid)] = std::string(job);
    }
  }
  return out;
}

SlurmJobLookup::SlurmJobLookup(SlurmJobLookupOptions options) : options_(std::move(options)) {}

int64_t SlurmJobLookup::Now() const {
  return options_.monotonic_ns ? options_.monotonic_ns() : MonotonicNanos();
}

bool SlurmJobLookup::LearnLocked(const std::string& sluid, const std::string& job_id) {
  auto it = sluid_jobs_.find(sluid);
  if (it != sluid_jobs_.end()) return it->second == job_id;
  auto other = job_sluids_.find(job_id);
  if (other != job_sluids_.end() && other->second != sluid) return false;
  if (sluid_jobs_.size() >= kMaxKnownJobs) {
    sluid_jobs_.clear();  // Bounded memory; live jobs are learnt again.
    job_sluids_.clear();
  }
  sluid_jobs_[sluid] = job_id;
  job_sluids_[job_id] = sluid;
  health_.known_jobs = sluid_jobs_.size();
  return true;
}

bool SlurmJobLookup::Learn(const std::string& sluid, const std::string& job_id) {
  if (sluid.empty() || !IsJobId(job_id)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  return LearnLocked(sluid, job_id);
}

void SlurmJobLookup::Refresh(bool force) {
  const int64_t now = Now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t since = now - last_run_ns_;
    if (ran_ && since < options_.refresh_ns && !(force && since >= options_.min_refresh_ns)) {
      return;
    }
    ran_ = true;
    last_run_ns_ = now;
  }
  if (options_.scontrol.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    health_.message = options_.off_reason;
    return;
  }
  StatusOr<BoundedCommandResult> run = RunBoundedCommand(
      {options_.scontrol, "listpids"}, options_.call_deadline_ns, options_.max_output_bytes);
  std::map<std::string, std::string> sluids;
  std::map<int, std::string> pids;
  std::string error;
  if (!run.ok()) {
    error = run.status().ToString();
  } else if (run->exit_code != 0) {
    error = options_.scontrol + " listpids exited with status " + std::to_string(run->exit_code);
  } else {
    pids = ParseScontrolListpids(run->out, &sluids);
  }
  std::lock_guard<std::mutex> lock(mu_);
  health_.scontrol_ok = error.empty();
  health_.message = error;
  if (error.empty()) {
    pid_jobs_ = std::move(pids);
    for (const auto& [sluid, job] : sluids) LearnLocked(sluid, job);
  }
}

std::optional<std::string> SlurmJobLookup::JobId(const std::string& sluid, int pid) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    health_.used = true;
    auto it = sluid_jobs_.find(sluid);
    if (it != sluid_jobs_.end()) return it->second;
  }
  if (pid <= 0) return std::nullopt;
  std::lock_guard<std::mutex> run(run_mu_);
  for (bool force : {false, true}) {
    Refresh(force);  // The second pass: a process newer than the last answer.
    std::lock_guard<std::mutex> lock(mu_);
    auto known = sluid_jobs_.find(sluid);
    if (known != sluid_jobs_.end()) return known->second;
    auto it = pid_jobs_.find(pid);
    if (it != pid_jobs_.end()) {
      if (LearnLocked(sluid, it->second)) return it->second;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

SlurmJobLookupHealth SlurmJobLookup::health() const {
  std::lock_guard<std::mutex> lock(mu_);
  return health_;
}

}  // namespace vigil
