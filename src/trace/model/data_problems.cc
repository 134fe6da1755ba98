// SPDX-License-Identifier: Apache-2.0
#include "trace/model/data_problems.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "trace/model/linker.h"

namespace vigil::trace {
namespace {

// Analyses by name, as the reports title them.
constexpr std::string_view kTemporal = "temporal breakdown";
constexpr std::string_view kKernels = "kernel breakdown";
constexpr std::string_view kIdle = "idle time";
constexpr std::string_view kOverlap = "communication overlap";
constexpr std::string_view kLaunch = "launch statistics";
constexpr std::string_view kCriticalPath = "critical path";
constexpr std::string_view kQueue = "queue length";
constexpr std::string_view kEfficiency = "efficiency and roofline";
constexpr std::string_view kInsights = "GPU insights";
constexpr std::string_view kSteps = "per-step breakdowns";
constexpr std::string_view kMemcpy = "memcpy analysis";

double Share(uint64_t part, uint64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}

// " (cudaMemsetAsync 210)": the calls most often without a GPU event, where the count is the
// linker's (it also leaves out launches inside a stream capture, which this does not see).
std::string MissingByName(const RankTrace& t) {
  const EventTable& e = t.events;
  if (t.links.launched.empty()) return "";
  std::map<std::string_view, uint64_t> by_name;
  uint64_t total = 0;
  for (uint32_t i = 0; i < e.size(); ++i) {
    if ((e.kind[i] != EventKind::kRuntime && e.kind[i] != EventKind::kDriver) ||
        t.links.launched[i] != kNoIndex) {
      continue;
    }
    const std::string_view n = t.strings.Get(e.name[i]);
    if (!IsLaunchName(n) || n == "cudaMemcpy" || n == "hipMemcpy") continue;
    ++by_name[n];
    ++total;
  }
  if (total != t.quality.launches_without_gpu || by_name.empty()) return "";
  std::vector<std::pair<uint64_t, std::string_view>> top;
  for (const auto& [n, c] : by_name) top.emplace_back(c, n);
  std::sort(top.rbegin(), top.rend());
  std::string out;
  for (size_t k = 0; k < std::min<size_t>(2, top.size()); ++k) {
    out += fmt::format("{}{} {}", k ? ", " : " (", top[k].second, top[k].first);
  }
  return out + ")";
}

}  // namespace

std::string JoinAffected(const std::vector<std::string_view>& affects) {
  std::string out;
  for (size_t i = 0; i < affects.size(); ++i) {
    if (i > 0) out += i + 1 == affects.size() ? " and " : ", ";
    out += affects[i];
  }
  return out;
}

std::vector<DataProblem> FindDataProblems(const RankTrace& t) {
  const DataQuality& q = t.quality;
  const uint64_t gpu = t.links.gpu.size();
  std::vector<DataProblem> out;
  if (q.truncated) {
    out.push_back({"truncated",
                   fmt::format("the file ends early ({}); only the {} events before the cut "
                               "were analysed",
                               q.truncation_detail, q.events_total),
                   {kTemporal, kKernels, kIdle, kCriticalPath, kSteps, kInsights}});
  }
  if (q.launches > 0 && gpu == 0) {
    out.push_back(
        {"gpu_activity_not_captured",
         fmt::format("{} kernel launches and copies but no GPU event: the GPU activity was not "
                     "captured (profiler without ProfilerActivity.CUDA, or CUPTI lost it), so "
                     "this is not a CPU-only program",
                     q.launches),
         {kTemporal, kKernels, kIdle, kOverlap, kLaunch, kCriticalPath, kQueue, kMemcpy,
          kEfficiency, kInsights}});
  } else if (q.launches_without_gpu > 0) {
    out.push_back({"gpu_activity_partial",
                   fmt::format("{} of {} launches ({:.1f}%) have no GPU event{}: part of the GPU "
                               "activity is missing (dropped CUPTI records, or the capture "
                               "stopped before the GPU finished)",
                               q.launches_without_gpu, q.launches,
                               Share(q.launches_without_gpu, q.launches), MissingByName(t)),
                   {kLaunch, kCriticalPath, kIdle, kKernels}});
  }
  if (q.gpu_without_launch > 0) {
    out.push_back({"gpu_events_without_launch",
                   fmt::format("{} of {} GPU events ({:.1f}%) have no launch call with their "
                               "correlation id (CPU side not captured, or ids lost)",
                               q.gpu_without_launch, gpu, Share(q.gpu_without_launch, gpu)),
                   {kLaunch, kCriticalPath, kIdle, kSteps}});
  }
  if (q.overlapping_kernels_same_stream > 0) {
    out.push_back(
        {"overlapping_kernels_same_stream",
         fmt::format("{} GPU events start before the previous one on their stream ends; a stream "
                     "runs its work in order, so timestamps are skewed or events carry the wrong "
                     "stream",
                     q.overlapping_kernels_same_stream),
         {kIdle, kQueue, kCriticalPath, kKernels}});
  }
  if (q.negative_durations > 0) {
    out.push_back({"negative_durations",
                   fmt::format("{} events have a negative duration", q.negative_durations),
                   {kTemporal, kKernels, kIdle, kCriticalPath}});
  }
  if (q.events_unparsable > 0) {
    out.push_back(
        {"unparsable_events",
         fmt::format("{} events could not be parsed and were skipped", q.events_unparsable),
         {kTemporal, kKernels, kIdle, kCriticalPath, kLaunch}});
  }
  if (!q.unknown_categories.empty()) {
    std::string names;
    for (const auto& [c, n] : q.unknown_categories) {
      names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", c, n);
    }
    out.push_back({"unknown_categories",
                   fmt::format("{} event categories not known to the reader, not analysed: {}",
                               q.unknown_categories.size(), names),
                   {}});
  }
  return out;
}

}  // namespace vigil::trace
