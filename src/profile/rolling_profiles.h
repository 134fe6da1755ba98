// SPDX-License-Identifier: Apache-2.0
// Continuous profiling's memory: a ring of the last `keep` sampling windows, each holding one
// Profile per job, merged on read. The daemon's sampler thread adds a window when one ends;
// the HTTP and RPC threads list the jobs and read a job's merged profile. Windows older than the
// ring are dropped whole, so memory is bounded by `keep` windows of distinct stacks (each window's
// stacks are capped by the caller's sampling rate). Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "profile/profile.h"

namespace vigil {

// The job a sample of a process without one is filed under.
inline constexpr char kNoJob[] = "no-job";

// Adds every stack of `from` to `into`, interning `from`'s frames in `into`'s table. `into`'s
// info keeps its own fields except: lost, Python and GIL samples add up; pids are unioned; the
// time span grows to cover both (a default-constructed `into` takes `from`'s).
void MergeProfileInto(const Profile& from, Profile* into);

struct ProfileWindow {
  int64_t start_unix_ns = 0;
  int64_t end_unix_ns = 0;
  int frequency_hz = 0;
  std::map<std::string, Profile> jobs;  // job_id ("no-job" for none) -> its samples.
};

struct RollingJobSummary {
  std::string job_id;
  uint64_t samples = 0;       // Over the windows held.
  size_t windows = 0;         // Windows with samples of this job.
  int64_t start_unix_ns = 0;  // Start of its oldest window held.
  int64_t end_unix_ns = 0;    // End of its newest.
};

class RollingProfiles {
 public:
  explicit RollingProfiles(size_t keep);

  // Appends a finished window, dropping the oldest beyond `keep`.
  void AddWindow(ProfileWindow window);
  // Jobs with samples in the windows held, by job id.
  std::vector<RollingJobSummary> Jobs() const;
  // The job's windows merged (oldest first); nullopt when no window holds the job.
  std::optional<Profile> Merged(const std::string& job_id) const;

  size_t keep() const { return keep_; }
  size_t windows() const;
  // Samples ever added per job (windows dropped from the ring included).
  std::map<std::string, uint64_t> SamplesTotal() const;

 private:
  const size_t keep_;
  mutable std::mutex mu_;
  std::deque<ProfileWindow> ring_;
  std::map<std::string, uint64_t> samples_total_;
};

}  // namespace vigil
