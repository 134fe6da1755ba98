// SPDX-License-Identifier: Apache-2.0
#include "daemon/continuous_profiler.h"

#include <time.h>

#include <algorithm>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "profile/folded_output.h"
#include "profile/json_output.h"
#include "profile/perf_sampler.h"
#include "profile/pprof_output.h"
#include "profile/stack_builder.h"
#include "profile/symbolizer.h"

namespace vigil::daemon {
namespace {

// A GPU holder is refreshed every GPU collection; one missed for a minute has gone.
constexpr int64_t kTargetTtlNs = 60 * kNanosPerSecond;
// Sampling runs in slices this long, so Stop() and exited targets are noticed promptly.
constexpr auto kSlice = std::chrono::milliseconds(500);
// At most this many processes per window (each is one perf event per thread).
constexpr size_t kMaxTargets = 256;

constexpr MetricDesc kSamplerCpu{"vigil_daemon_profile_sampler_cpu_seconds_total",
                                 "CPU time the continuous profiler's sampler thread has used.",
                                 MetricKind::kCounter, "seconds"};
constexpr MetricDesc kFrequency{"vigil_daemon_profile_frequency_hertz",
                                "Sampling frequency of continuous profiling after the CPU budget.",
                                MetricKind::kGauge, "hertz"};
constexpr MetricDesc kSamples{"vigil_daemon_profile_samples_total",
                              "Stack samples continuous profiling has taken, per job.",
                              MetricKind::kCounter, ""};

class ProfilerCollector : public Collector {
 public:
  explicit ProfilerCollector(const ContinuousProfiler* profiler) : profiler_(profiler) {}
  Status Collect(MetricWriter& out) override {
    const ContinuousProfilerStats stats = profiler_->stats();
    out.Add(kSamplerCpu, stats.cpu_seconds);
    out.Add(kFrequency, static_cast<double>(stats.frequency_hz));
    for (const auto& [job, samples] : profiler_->profiles().SamplesTotal()) {
      out.Add(kSamples, static_cast<double>(samples), {{"job_id", job}});
    }
    return OkStatus();
  }

 private:
  const ContinuousProfiler* const profiler_;
};

double ClockThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

ContinuousProfiler::ContinuousProfiler(ContinuousProfilerOptions options,
                                       std::shared_ptr<WatchList> watch_list,
                                       std::shared_ptr<JobResolver> resolver)
    : options_(std::move(options)),
      watch_list_(std::move(watch_list)),
      resolver_(std::move(resolver)),
      profiles_(options_.keep),
      budget_(options_.frequency_hz, options_.cpu_budget) {
  stats_.frequency_hz = budget_.frequency_hz();
}

ContinuousProfiler::~ContinuousProfiler() { Stop(); }

void ContinuousProfiler::Start() {
  if (!thread_.joinable()) {
    thread_ = std::thread([this] { Loop(); });
  }
}

void ContinuousProfiler::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
  if (uploader_) {
    uploader_->WaitIdle(3 * kNanosPerSecond);  // The last window, when the fleet is there.
    uploader_->Stop();
  }
}

std::vector<ProfileTarget> ContinuousProfiler::Targets() const {
  std::vector<ProfileTarget> out;
  if (!watch_list_) {
    return out;
  }
  for (const WatchList::Entry& e : watch_list_->Snapshot(UnixNanos(), kTargetTtlNs)) {
    if ((e.reason != "gpu" && e.reason != "ipc") || out.size() >= kMaxTargets) {
      continue;
    }
    ProfileTarget target{.pid = e.pid, .job_id = kNoJob};
    if (resolver_) {
      StatusOr<JobInfo> info = resolver_->Resolve(e.pid);
      if (!info.ok()) {
        continue;  // Gone.
      }
      if (!info->job_id.empty()) {
        target.job_id = info->job_id;
      }
    }
    out.push_back(std::move(target));
  }
  return out;
}

double ContinuousProfiler::ThreadCpu() const {
  return options_.thread_cpu_seconds ? options_.thread_cpu_seconds() : ClockThreadCpuSeconds();
}

bool ContinuousProfiler::WaitUntil(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  return cv_.wait_until(lock, deadline, [this] { return stop_; });
}

void ContinuousProfiler::SetState(std::string state, bool sampling, size_t targets) {
  std::lock_guard lock(mu_);
  if (state != stats_.state) {
    VIGIL_LOG_INFO("continuous profiling: {}", state);
  }
  stats_.state = std::move(state);
  stats_.sampling = sampling;
  stats_.targets = targets;
}

void ContinuousProfiler::Loop() {
  const auto window = std::chrono::nanoseconds(options_.window_ns);
  // Kept across windows: symbol tables are read once per binary, not once per window.
  SymbolizerOptions symbolizer_options;
  symbolizer_options.proc_root = options_.proc_root;
  symbolizer_options.debug_root = options_.debug_root;
  Symbolizer symbolizer(symbolizer_options);
  std::set<int> known;
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stop_) {
        return;
      }
    }
    const auto window_end = std::chrono::steady_clock::now() + window;
    const std::vector<ProfileTarget> targets = Targets();
    if (targets.empty()) {
      SetState("idle: no process holds a GPU or is registered over IPC", false, 0);
      if (WaitUntil(window_end)) {
        return;
      }
      continue;
    }
    std::set<int> now_known;
    for (const ProfileTarget& t : targets) {
      now_known.insert(t.pid);
    }
    for (int pid : known) {
      if (now_known.count(pid) == 0) {
        symbolizer.Forget(pid);  // Gone or off the GPU: its maps and images are dropped.
      }
    }
    known = std::move(now_known);
    SampleWindow(targets, budget_.frequency_hz(), &symbolizer);
    if (WaitUntil(window_end)) {  // A window that ended early (targets gone, refused) waits.
      return;
    }
  }
}

void ContinuousProfiler::SampleWindow(const std::vector<ProfileTarget>& targets, int frequency_hz,
                                      Symbolizer* symbolizer) {
  const double cpu_start = ThreadCpu();
  const int64_t start_unix = UnixNanos();
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::nanoseconds(options_.window_ns);

  SamplerOptions sampler_options;
  std::map<int, std::string> job_of;
  for (const ProfileTarget& t : targets) {
    sampler_options.pids.push_back(t.pid);
    job_of[t.pid] = t.job_id;
  }
  sampler_options.frequency_hz = frequency_hz;
  sampler_options.kernel_stacks = false;    // User stacks only: no kallsyms walk per sample.
  sampler_options.copy_user_stack = false;  // Frame pointers: no 8 KiB copy per sample.
  sampler_options.proc_root = options_.proc_root;
  // New threads are found within a second: at 19 Hz a thread's first second is one sample or so,
  // and /proc/PID/task walks at the default 5 Hz were a good part of the sampler's CPU.
  sampler_options.rescan_interval = std::chrono::milliseconds(1000);
  StatusOr<std::unique_ptr<PerfSampler>> sampler = PerfSampler::Start(sampler_options);
  if (!sampler.ok()) {
    const bool refused = sampler.status().code() == StatusCode::kPermissionDenied;
    SetState(fmt::format("{}: {}", refused ? "off: perf_event_open refused" : "idle",
                         sampler.status().message()),
             false, 0);
    std::lock_guard lock(mu_);
    stats_.cpu_seconds += ThreadCpu() - cpu_start;
    return;
  }
  SetState("sampling", true, targets.size());

  StackBuilderOptions builder_options;
  builder_options.python = true;
  builder_options.proc_root = options_.proc_root;
  StackBuilder builder(builder_options, symbolizer, nullptr);

  ProfileWindow result;
  result.start_unix_ns = start_unix;
  result.frequency_hz = frequency_hz;
  Status run;
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stop_) {
        break;
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= end || (*sampler)->open_events() == 0) {
      break;
    }
    run = (*sampler)->Run(std::min(end, now + kSlice), [&](const RawSample& sample) {
      auto it = job_of.find(sample.pid);
      const std::string& job = it == job_of.end() ? std::string(kNoJob) : it->second;
      builder.Add(sample, &result.jobs[job]);
    });
    if (!run.ok()) {
      break;
    }
  }
  result.end_unix_ns = UnixNanos();
  const int64_t duration = result.end_unix_ns - start_unix;
  for (auto& [job, profile] : result.jobs) {
    ProfileInfo& info = profile.info();
    info.event = (*sampler)->event_name();
    info.frequency_hz = frequency_hz;
    info.start_unix_ns = start_unix;
    info.duration_ns = duration;
    for (const ProfileTarget& t : targets) {
      if (t.job_id == job) {
        info.pids.push_back(t.pid);
      }
    }
  }
  const bool had_samples = !result.jobs.empty();
  result.end_unix_ns = std::max(result.end_unix_ns, start_unix + 1);
  Upload(result);
  profiles_.AddWindow(std::move(result));

  const double cpu = ThreadCpu() - cpu_start;
  const double wall = static_cast<double>(duration) / 1e9;
  const BudgetStep step = budget_.EndWindow(cpu, wall);
  if (step.decision == BudgetDecision::kLower) {
    VIGIL_LOG_WARN(
        "continuous profiling: sampler used {:.3f}% of a core (budget {:.3f}%): {} Hz -> {} Hz",
        step.used * 100, options_.cpu_budget * 100, frequency_hz, step.frequency_hz);
  } else if (step.decision == BudgetDecision::kRaise) {
    VIGIL_LOG_INFO(
        "continuous profiling: sampler used {:.3f}% of a core (budget {:.3f}%): {} Hz -> {} Hz",
        step.used * 100, options_.cpu_budget * 100, frequency_hz, step.frequency_hz);
  }
  std::lock_guard lock(mu_);
  stats_.cpu_seconds += cpu;
  stats_.last_window_used = step.used;
  stats_.frequency_hz = step.frequency_hz;
  stats_.windows += had_samples ? 1 : 0;
  if (!run.ok()) {
    stats_.state = "idle: sampling failed: " + run.message();
    stats_.sampling = false;
  }
}

ContinuousProfilerStats ContinuousProfiler::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

nlohmann::json ContinuousProfiler::StatusJson() const {
  const ContinuousProfilerStats s = stats();
  nlohmann::json out{{"enabled", true},
                     {"state", s.state},
                     {"sampling", s.sampling},
                     {"frequency_hz", s.frequency_hz},
                     {"configured_hz", budget_.configured_hz()},
                     {"window_s", static_cast<double>(options_.window_ns) / 1e9},
                     {"keep", options_.keep},
                     {"jobs", profiles_.Jobs().size()},
                     {"targets", s.targets},
                     {"cpu_seconds", s.cpu_seconds},
                     {"cpu_budget", options_.cpu_budget},
                     {"last_window_cpu", s.last_window_used}};
  if (uploader_) {
    out["upload"] = uploader_->StatusJson();
  }
  return out;
}

nlohmann::json ContinuousProfiler::ListJson() const {
  nlohmann::json jobs = nlohmann::json::array();
  for (const RollingJobSummary& j : profiles_.Jobs()) {
    jobs.push_back({{"job_id", j.job_id},
                    {"samples", j.samples},
                    {"windows", j.windows},
                    {"start_unix_ns", j.start_unix_ns},
                    {"end_unix_ns", j.end_unix_ns}});
  }
  return nlohmann::json{{"window_s", static_cast<double>(options_.window_ns) / 1e9},
                        {"keep", options_.keep},
                        {"frequency_hz", stats().frequency_hz},
                        {"jobs", std::move(jobs)}};
}

std::unique_ptr<Collector> ContinuousProfiler::MakeCollector() const {
  return std::make_unique<ProfilerCollector>(this);
}

std::vector<const MetricDesc*> ContinuousProfiler::Metrics() {
  return {&kSamplerCpu, &kFrequency, &kSamples};
}

StatusOr<RenderedProfile> RenderRollingProfile(const RollingProfiles& profiles,
                                               const std::string& job_id,
                                               const std::string& format) {
  if (!format.empty() && format != "json" && format != "folded" && format != "pprof") {
    return InvalidArgumentError("format must be json, folded or pprof, not " +
                                SanitizeForLog(format, 40));
  }
  std::optional<Profile> profile = profiles.Merged(job_id);
  if (!profile) {
    return NotFoundError("no continuous profile for job " + SanitizeForLog(job_id, 200));
  }
  RenderedProfile out;
  if (format == "folded") {
    out.content_type = "text/plain; charset=utf-8";
    out.body = WriteFolded(*profile);
  } else if (format == "pprof") {
    out.content_type = "application/octet-stream";  // As Go's net/http/pprof serves profiles.
    out.body = WritePprof(*profile);
    out.filename = "profile.pb.gz";
  } else {
    out.content_type = "application/json";
    out.body =
        ProfileToJson(*profile).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return out;
}

}  // namespace vigil::daemon
