// SPDX-License-Identifier: Apache-2.0
#include "ipc/auto_trace.h"

#include <set>
#include <utility>

#include <fmt/format.h>

#include "base/logging.h"

namespace vigil {
namespace {

constexpr int64_t kHourNs = int64_t{3600} * 1000000000;

}  // namespace

AutoTracer::AutoTracer(AutoTraceOptions options, TraceService* service, IpcClock clock,
                       std::function<uint64_t()> random)
    : options_(options), service_(service), clock_(std::move(clock)), random_(std::move(random)) {}

void AutoTracer::ObserveUtilisation(const std::string& job_id, double ratio) {
  const int64_t now = clock_();
  std::lock_guard<std::mutex> lock(mu_);
  JobState& job = jobs_[job_id];
  job.last_ratio = ratio;
  if (ratio < options_.low_utilisation_below) {
    if (job.low_since_ns < 0) {
      job.low_since_ns = now;
    }
  } else {
    job.low_since_ns = -1;
  }
}

bool AutoTracer::TakeBudget(int64_t now) {
  while (!recent_.empty() && now - recent_.front() >= kHourNs) {
    recent_.pop_front();
  }
  if (recent_.size() >= static_cast<size_t>(std::max(options_.max_traces_per_hour, 0))) {
    return false;
  }
  recent_.push_back(now);
  return true;
}

std::vector<TraceSession> AutoTracer::StartFor(const std::string& job, const std::string& origin,
                                               const std::string& reason) {
  TraceRequest request;
  request.job_id = job;
  request.duration_ms = options_.duration_ms;
  request.process_limit = options_.process_limit;
  request.origin = origin;
  request.reason = reason;
  request.caller = "vigild";
  auto session = service_->Start(request);
  if (!session.ok()) {
    VIGIL_LOG_WARN("automatic trace not started: job_id={} origin={} err={}", job, origin,
                   session.status().message());
    return {};
  }
  return {*session};
}

std::vector<TraceSession> AutoTracer::Tick() {
  const int64_t now = clock_();
  // Jobs with registered processes are the candidates.
  std::set<std::string> live;
  for (const RegisteredProcess& p : service_->registry()->Snapshot()) {
    if (!p.job_id.empty()) {
      live.insert(p.job_id);
    }
  }
  std::vector<std::pair<std::string, std::pair<std::string, std::string>>> due;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& job_id : live) {
      JobState& job = jobs_[job_id];
      if (options_.periodic) {
        if (job.next_periodic_ns < 0) {
          const uint64_t period =
              static_cast<uint64_t>(std::max<int64_t>(options_.periodic_every_ns, 1));
          job.next_periodic_ns = now + static_cast<int64_t>(random_() % period);
        } else if (now >= job.next_periodic_ns && TakeBudget(now)) {
          job.next_periodic_ns = now + options_.periodic_every_ns;
          due.push_back({job_id,
                         {"auto:periodic", fmt::format("periodic sample (one per {}s per job)",
                                                       options_.periodic_every_ns / 1000000000)}});
          continue;
        }
      }
      if (options_.low_utilisation && job.low_since_ns >= 0 &&
          now - job.low_since_ns >= options_.low_utilisation_for_ns &&
          (job.last_low_trace_ns < 0 ||
           now - job.last_low_trace_ns >= options_.low_utilisation_cooldown_ns) &&
          TakeBudget(now)) {
        job.last_low_trace_ns = now;
        due.push_back(
            {job_id,
             {"auto:low_utilisation",
              fmt::format("GPU activity {:.3f} below {:.3f} for {}s", job.last_ratio,
                          options_.low_utilisation_below, (now - job.low_since_ns) / 1000000000)}});
      }
    }
    // Forget jobs that are gone.
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      it = live.count(it->first) == 0 && it->second.low_since_ns < 0 ? jobs_.erase(it)
                                                                     : std::next(it);
    }
  }
  std::vector<TraceSession> started;
  for (const auto& [job, what] : due) {
    for (TraceSession& s : StartFor(job, what.first, what.second)) {
      started.push_back(std::move(s));
    }
  }
  return started;
}

}  // namespace vigil
