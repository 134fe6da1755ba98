// SPDX-License-Identifier: Apache-2.0
#include "profile/rolling_profiles.h"

#include <algorithm>
#include <set>
#include <utility>

namespace vigil {

void MergeProfileInto(const Profile& from, Profile* into) {
  std::vector<int> ids;
  ids.reserve(from.frames().size());
  for (const ProfileFrame& frame : from.frames()) {
    ids.push_back(into->Intern(frame));
  }
  std::vector<int> stack;
  for (const auto& [frames, count] : from.stacks()) {
    stack.clear();
    for (int id : frames) {
      stack.push_back(ids[static_cast<size_t>(id)]);
    }
    into->Add(stack, count);
  }
  ProfileInfo& out = into->info();
  const ProfileInfo& in = from.info();
  if (out.start_unix_ns == 0 && out.duration_ns == 0) {
    out.event = in.event;
    out.frequency_hz = in.frequency_hz;
    out.start_unix_ns = in.start_unix_ns;
    out.duration_ns = in.duration_ns;
  } else {
    const int64_t end =
        std::max(out.start_unix_ns + out.duration_ns, in.start_unix_ns + in.duration_ns);
    out.start_unix_ns = std::min(out.start_unix_ns, in.start_unix_ns);
    out.duration_ns = end - out.start_unix_ns;
  }
  out.lost_samples += in.lost_samples;
  out.python_samples += in.python_samples;
  out.gil_samples += in.gil_samples;
  std::set<int> pids(out.pids.begin(), out.pids.end());
  pids.insert(in.pids.begin(), in.pids.end());
  out.pids.assign(pids.begin(), pids.end());
}

RollingProfiles::RollingProfiles(size_t keep) : keep_(std::max<size_t>(keep, 1)) {}

void RollingProfiles::AddWindow(ProfileWindow window) {
  std::lock_guard lock(mu_);
  for (const auto& [job, profile] : window.jobs) {
    samples_total_[job] += profile.total_samples();
  }
  ring_.push_back(std::move(window));
  while (ring_.size() > keep_) {
    ring_.pop_front();
  }
}

std::vector<RollingJobSummary> RollingProfiles::Jobs() const {
  std::lock_guard lock(mu_);
  std::map<std::string, RollingJobSummary> jobs;
  for (const ProfileWindow& window : ring_) {
    for (const auto& [job, profile] : window.jobs) {
      if (profile.total_samples() == 0) {
        continue;
      }
      RollingJobSummary& s = jobs[job];
      if (s.windows == 0) {
        s.job_id = job;
        s.start_unix_ns = window.start_unix_ns;
      }
      s.samples += profile.total_samples();
      s.windows++;
      s.end_unix_ns = window.end_unix_ns;
    }
  }
  std::vector<RollingJobSummary> out;
  for (auto& [job, summary] : jobs) {
    out.push_back(std::move(summary));
  }
  return out;
}

std::optional<Profile> RollingProfiles::Merged(const std::string& job_id) const {
  std::lock_guard lock(mu_);
  std::optional<Profile> out;
  for (const ProfileWindow& window : ring_) {
    auto it = window.jobs.find(job_id);
    if (it == window.jobs.end() || it->second.total_samples() == 0) {
      continue;
    }
    if (!out) {
      out.emplace();
    }
    MergeProfileInto(it->second, &*out);
  }
  return out;
}

size_t RollingProfiles::windows() const {
  std::lock_guard lock(mu_);
  return ring_.size();
}

std::map<std::string, uint64_t> RollingProfiles::SamplesTotal() const {
  std::lock_guard lock(mu_);
  return samples_total_;
}

}  // namespace vigil
