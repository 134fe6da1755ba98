// SPDX-License-Identifier: Apache-2.0
#include "ipc/job_metrics.h"

#include <cmath>
#include <utility>

namespace vigil {

const MetricDesc kJobStepSeconds{"vigil_job_step_seconds",
                                 "Mean training step time reported by the job's processes.",
                                 MetricKind::kGauge, "seconds"};
const MetricDesc kJobModelFlops{"vigil_job_model_flops",
                                "Model FLOPs per step per process, as reported by the job.",
                                MetricKind::kGauge, ""};
const MetricDesc kJobMfuRatio{"vigil_job_mfu_ratio",
                              "Achieved model FLOP/s over the declared peak FLOP/s of the "
                              "reporting processes.",
                              MetricKind::kGauge, "ratio"};
const MetricDesc kJobDeviceSecondsPerInputByte{
    "vigil_job_device_seconds_per_input_byte",
    "Device-seconds spent per input byte consumed (one device per reporting process).",
    MetricKind::kGauge, "seconds"};

JobMetrics::JobMetrics(IpcClock clock, int64_t stale_ns)
    : clock_(std::move(clock)), stale_ns_(stale_ns) {}

Status JobMetrics::Record(const RegisteredProcess& process, const StepReport& r) {
  if (r.steps <= 0 || !std::isfinite(r.step_seconds) || r.step_seconds < 0 ||
      !std::isfinite(r.model_flops) || r.model_flops < 0) {
    return InvalidArgumentError("step report needs steps > 0 and finite, non-negative values");
  }
  const std::string job = process.job_id.empty() ? "unknown" : process.job_id;
  std::lock_guard<std::mutex> lock(mu_);
  Job& j = jobs_[job];
  j.labels = {{"job_id", job}};
  if (!process.team.empty()) {
    j.labels.emplace_back("team", process.team);
  }
  if (!process.model.empty()) {
    j.labels.emplace_back("model", process.model);
  }
  if (!process.framework.empty()) {
    j.labels.emplace_back("framework", process.framework);
  }
  ProcessWindow& w = j.window[process.host_pid];
  w.steps += r.steps;
  w.seconds += r.step_seconds;
  w.flops += r.model_flops * static_cast<double>(r.steps);
  w.bytes += r.input_bytes;
  w.peak_flops = process.peak_flops;
  j.last_report_ns = clock_();
  return OkStatus();
}

Status JobMetrics::Collect(MetricWriter& out) {
  const int64_t now = clock_();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    Job& j = it->second;
    if (now - j.last_report_ns > stale_ns_) {
      it = jobs_.erase(it);
      continue;
    }
    if (!j.window.empty()) {
      int64_t steps = 0;
      double seconds = 0, flops = 0, achieved = 0, peak = 0;
      uint64_t bytes = 0;
      for (const auto& [pid, w] : j.window) {
        steps += w.steps;
        seconds += w.seconds;
        flops += w.flops;
        bytes += w.bytes;
        if (w.peak_flops > 0 && w.seconds > 0) {
          achieved += w.flops / w.seconds;
          peak += w.peak_flops;
        }
      }
      if (steps > 0) {
        j.step_seconds = seconds / static_cast<double>(steps);
        j.model_flops = flops / static_cast<double>(steps);
        j.mfu = peak > 0 ? achieved / peak : -1;
        j.seconds_per_byte = bytes > 0 ? seconds / static_cast<double>(bytes) : -1;
        j.have_values = true;
      }
      j.window.clear();
    }
    if (j.have_values) {
      out.Add(kJobStepSeconds, j.step_seconds, j.labels);
      out.Add(kJobModelFlops, j.model_flops, j.labels);
      if (j.mfu >= 0) {
        out.Add(kJobMfuRatio, j.mfu, j.labels);
      }
      if (j.seconds_per_byte >= 0) {
        out.Add(kJobDeviceSecondsPerInputByte, j.seconds_per_byte, j.labels);
      }
    }
    ++it;
  }
  return OkStatus();
}

}  // namespace vigil
