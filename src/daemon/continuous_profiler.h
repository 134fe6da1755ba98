// SPDX-License-Identifier: Apache-2.0
// Continuous CPU profiling in vigild (off by default): a thread samples the processes that hold
// GPUs (the GPU collector's "gpu" entries in the watch list) and those registered over the IPC
// fabric ("ipc"), in windows of --profile.window at --profile.frequency, with frame-pointer
// unwinding and Python frames, and files each window's stacks per job (JobResolver; "no-job" for
// none) into a RollingProfiles ring of --profile.keep windows. Its own thread CPU time is measured
// per window and the next window's frequency follows SamplingBudget. When perf_event_open is
// refused or nothing holds a GPU it idles, retrying each window, and its status says why; it never
// stops the daemon. With a fleet URL each finished window's stacks of every job (not "no-job")
// are queued, folded, on a ProfileUploader (sinks/profile_uploader.h) for vigil-fleet; folding
// runs on the sampler thread, inside the CPU budget, and an upload that fails degrades alone
// (counted in the status reply's "upload"). Status, profiles and metrics are read from other
// threads (thread-safe).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "attribution/job_resolver.h"
#include "base/status.h"
#include "collectors/collector.h"
#include "collectors/watch_list.h"
#include "profile/rolling_profiles.h"
#include "profile/sampling_budget.h"
#include "sinks/profile_uploader.h"

namespace vigil {
class Symbolizer;
}  // namespace vigil

namespace vigil::daemon {

struct ContinuousProfilerOptions {
  int frequency_hz = 19;
  int64_t window_ns = 60LL * 1000 * 1000 * 1000;
  size_t keep = 10;
  double cpu_budget = 0.005;  // CPU seconds per second: 0.5 % of one core.
  std::string proc_root = "/proc";
  std::string debug_root = "/usr/lib/debug";
  // The sampler thread's CPU seconds so far; null = CLOCK_THREAD_CPUTIME_ID (tests inject one).
  std::function<double()> thread_cpu_seconds;
};

// One row of the target list: a process to sample and the job it is filed under.
struct ProfileTarget {
  int pid = 0;
  std::string job_id;  // Never empty: kNoJob for none.
};

struct ContinuousProfilerStats {
  std::string state = "starting";  // "sampling", "idle: ...", "off: ...".
  bool sampling = false;
  int frequency_hz = 0;         // Effective, for the current window.
  double cpu_seconds = 0;       // Sampler thread CPU over the run.
  double last_window_used = 0;  // CPU seconds per second in the last finished window.
  uint64_t windows = 0;         // Finished windows with samples.
  size_t targets = 0;           // Processes sampled in the current window.
};

class ContinuousProfiler {
 public:
  ContinuousProfiler(ContinuousProfilerOptions options, std::shared_ptr<WatchList> watch_list,
                     std::shared_ptr<JobResolver> resolver);
  ~ContinuousProfiler();  // Stop().
  ContinuousProfiler(const ContinuousProfiler&) = delete;
  ContinuousProfiler& operator=(const ContinuousProfiler&) = delete;

  // Where finished windows go besides the ring; call before Start().
  void SetUploader(std::unique_ptr<ProfileUploader> uploader) { uploader_ = std::move(uploader); }
  void Start();
  // Ends the current window early (its samples are kept), joins the thread, gives the uploader
  // a few seconds for what waits and stops it.
  void Stop();

  // The processes the next window samples: watch-list entries with reason "gpu" or "ipc".
  std::vector<ProfileTarget> Targets() const;

  ContinuousProfilerStats stats() const;
  const RollingProfiles& profiles() const { return profiles_; }
  const ContinuousProfilerOptions& options() const { return options_; }

  // {"enabled": true, "state", "frequency_hz", "configured_hz", "window_s", "keep", "jobs",
  //  "targets", "cpu_seconds", "cpu_budget", "last_window_cpu", "upload" (with a fleet URL:
  //  ProfileUploader::StatusJson)}: the status reply's part.
  nlohmann::json StatusJson() const;
  // {"window_s", "keep", "frequency_hz", "jobs": [{"job_id", "samples", "windows",
  //  "start_unix_ns", "end_unix_ns"}]}: GET /api/v1/profiles.
  nlohmann::json ListJson() const;

  // The self metrics: vigil_daemon_profile_sampler_cpu_seconds_total,
  // vigil_daemon_profile_frequency_hertz, vigil_daemon_profile_samples_total{job_id}.
  std::unique_ptr<Collector> MakeCollector() const;
  static std::vector<const MetricDesc*> Metrics();

 private:
  void Loop();
  // Samples `targets` until the window ends or Stop() and files the window.
  void SampleWindow(const std::vector<ProfileTarget>& targets, int frequency_hz,
                    Symbolizer* symbolizer);
  double ThreadCpu() const;
  // Waits until `deadline` or Stop(); true when stopping.
  bool WaitUntil(std::chrono::steady_clock::time_point deadline);
  void SetState(std::string state, bool sampling, size_t targets);
  // Queues the window's job profiles on the uploader, when there is one.
  void Upload(const ProfileWindow& window);

  const ContinuousProfilerOptions options_;
  const std::shared_ptr<WatchList> watch_list_;
  const std::shared_ptr<JobResolver> resolver_;
  RollingProfiles profiles_;
  SamplingBudget budget_;
  std::unique_ptr<ProfileUploader> uploader_;  // Null without a fleet URL.
  std::thread thread_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  ContinuousProfilerStats stats_;
};

// The uploader of continuous profiles to vigil-fleet at `fleet_url` (vigild --fleet-url, with
// --fleet-token-file and --fleet-ca-file as the fleet push uses them); null without a URL or
// when it is unusable (logged: profiling goes on without uploads).
std::unique_ptr<ProfileUploader> MakeProfileUploader(const std::string& fleet_url,
                                                     const std::string& host,
                                                     const std::string& token_file,
                                                     const std::string& ca_file);

// A job's rolling profile as an HTTP body: `format` json (default), folded or pprof (gzipped).
struct RenderedProfile {
  std::string content_type;
  std::string body;
  std::string filename;  // For Content-Disposition; "" for inline text.
};
StatusOr<RenderedProfile> RenderRollingProfile(const RollingProfiles& profiles,
                                               const std::string& job_id,
                                               const std::string& format);

}  // namespace vigil::daemon
