// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/roofline.h"

#include <algorithm>
#include <map>
#include <span>
#include <tuple>

#include "hwspec/gpu_specs.h"
#include "trace/analysis/roofline_math.h"
#include "trace/analysis/roofline_replay.h"

namespace vigil::trace {
namespace {

// The hwspec entry of each device the trace describes; the first known one for the rest.
class DeviceSpecs {
 public:
  explicit DeviceSpecs(const TraceMeta& meta) {
    for (const DeviceProps& p : meta.devices) {
      const GpuSpec* spec = FindGpuSpec(p.name);
      if (spec == nullptr) continue;
      by_id_.emplace(p.id, spec);
      if (fallback_ == nullptr) fallback_ = spec;
    }
  }
  const GpuSpec* For(int32_t device) const {
    auto it = by_id_.find(device);
    return it != by_id_.end() ? it->second : fallback_;
  }

 private:
  std::map<int32_t, const GpuSpec*> by_id_;
  const GpuSpec* fallback_ = nullptr;
};

}  // namespace

double RooflineTotals::Coverage() const {
  return kernel_ns > 0 ? static_cast<double>(modelled_ns) / static_cast<double>(kernel_ns) : 0;
}

double RooflineTotals::PctOfReplayed() const {
  if (!has_peaks || modelled_kernels == 0 || replayed_ns <= 0) return -1;
  return 100.0 * roofline_ns / static_cast<double>(replayed_ns);
}

double RooflineTotals::PctOfWall() const {
  if (!has_peaks || modelled_kernels == 0 || wall_ns <= 0) return -1;
  return 100.0 * roofline_ns / static_cast<double>(wall_ns);
}

Roofline AnalyzeRoofline(const RankTrace& t, const GpuView& v, const OpModelFn& model,
                         const GraphCaptures* captures) {
  Roofline out;
  out.computed = true;
  const EventTable& e = t.events;
  const int64_t unit = v.unit_ns;
  const DeviceSpecs specs(t.meta);
  GraphCaptureLinks capture_links;
  if (captures != nullptr) {
    capture_links = LinkGraphCaptures(t, v, *captures);
    out.graph_captures_given = true;
    out.graph_captures = capture_links.summary;
  }
  out.graph_replayed_kernels = t.links.graph_kernels;
  const OpKernelLinks links =
      LinkKernelsToOps(t, v, model, captures != nullptr ? &capture_links : nullptr);
  // Steps: GPU work launched inside a ProfilerStep range belongs to it.
  const std::vector<Step>& steps = t.links.steps;
  std::vector<std::vector<size_t>> step_rows(steps.size());
  auto step_of = [&](size_t i) -> size_t {
    if (v.launch_ts[i] == kNoTime || steps.empty()) return steps.size();
    const int64_t ts = v.launch_ts[i] * unit;
    auto it = std::upper_bound(steps.begin(), steps.end(), ts,
                               [](int64_t x, const Step& s) { return x < s.ts; });
    if (it == steps.begin()) return steps.size();
    --it;
    return ts < it->ts + it->dur ? static_cast<size_t>(it - steps.begin()) : steps.size();
  };
  std::vector<RooflineTotals> step_totals(steps.size());
  std::vector<size_t> gpu_rows;
  std::map<std::tuple<const RankTrace*, uint32_t, uint32_t>, size_t> shape_index;
  std::map<std::string_view, int64_t> time_by_peak;
  std::vector<uint8_t> op_counted(links.ops.size(), 0);
  const GpuSpec* first_spec = nullptr;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v.is_kernel[i]) continue;
    gpu_rows.push_back(i);
    const size_t s = step_of(i);
    if (s < steps.size()) step_rows[s].push_back(i);
    const uint32_t row = v.row[i];
    if (e.kind[row] != EventKind::kKernel) continue;
    const int64_t dur_ns = v.dur[i] * unit;
    RooflineTotals* totals[2] = {&out.rank, s < steps.size() ? &step_totals[s] : nullptr};
    for (RooflineTotals* x : totals) {
      if (x == nullptr) continue;
      ++x->kernels;
      x->kernel_ns += dur_ns;
    }
    const uint32_t op = links.op_of[i];
    if (op == kNoIndex) continue;
    const LinkedOp& o = links.ops[op];
    // The operator's work shared across its kernels by their time.
    const double share = o.kernel_time > 0 ? static_cast<double>(v.dur[i]) / o.kernel_time
                                           : 1.0 / std::max<uint32_t>(o.kernels, 1);
    const double flops = o.work.flops * share, bytes = o.work.bytes * share;
    const GpuSpec* gpu = specs.For(e.device[row]);
    if (first_spec == nullptr) first_spec = gpu;
    ComputePeak peak;
    KernelRooflineFigures k;
    if (gpu != nullptr) {
      peak = PeakFor(*gpu, o.work.spec);
      k = KernelRoofline(flops, bytes, static_cast<double>(dur_ns), peak.flops_per_s,
                         gpu->memory_bandwidth_bytes_per_s);
      time_by_peak[peak.name] += dur_ns;
      out.kernel_roofline_ns.emplace_back(row, static_cast<int64_t>(k.roofline_ns));
    }
    for (RooflineTotals* x : totals) {
      if (x == nullptr) continue;
      ++x->modelled_kernels;
      x->modelled_ns += dur_ns;
      x->roofline_ns += k.roofline_ns;
      x->flops += flops;
      x->bytes += bytes;
    }
    const EventTable& oe = o.source->events;
    auto [it, inserted] = shape_index.emplace(
        std::tuple{o.source, oe.name[o.row], oe.shapes[o.row]}, out.shapes.size());
    if (inserted) {
      RooflineShape sh;
      sh.source = o.source;
      sh.name = oe.name[o.row];
      sh.shapes = oe.shapes[o.row];
      sh.category = o.work.category;
      sh.peak = peak.name;
      sh.peak_flops_per_s = peak.flops_per_s;
      out.shapes.push_back(sh);
    }
    RooflineShape& sh = out.shapes[it->second];
    if (!op_counted[op]) {
      op_counted[op] = 1;
      ++sh.calls;
    }
    ++sh.kernels;
    sh.kernel_ns += dur_ns;
    sh.flops += flops;
    sh.bytes += bytes;
    sh.roofline_ns += k.roofline_ns;
  }
  if (first_spec == nullptr) first_spec = specs.For(-1);
  if (first_spec != nullptr) {
    out.gpu_model = std::string(first_spec->model);
    out.memory_bandwidth_bytes_per_s = first_spec->memory_bandwidth_bytes_per_s;
    out.rank.has_peaks = true;
    for (RooflineTotals& x : step_totals) x.has_peaks = true;
  }
  for (const auto& [name, ns] : time_by_peak) {
    if (out.main_peak.empty() || ns > time_by_peak[out.main_peak]) out.main_peak = name;
  }
  if (first_spec != nullptr && !out.main_peak.empty()) {
    out.main_peak_flops_per_s = PeakFlopsForComputeSpec(*first_spec, out.main_peak);
  }
  // The one place the replayed device length is computed: per device, the busy time of the union
  // of its streams, the concurrency the trace shows kept (docs/trace-json-schema.md says why not
  // the critical-path engine's dependency replay).
  auto replayed_ns = [&](std::span<const size_t> rows) {
    return ReplayedLengthStandIn(v, rows) * unit;
  };
  out.rank.replayed_ns = replayed_ns(gpu_rows);
  out.rank.wall_ns = DeviceWallTime(v, gpu_rows) * unit;
  for (size_t s = 0; s < steps.size(); ++s) {
    RooflineTotals& x = step_totals[s];
    x.replayed_ns = replayed_ns(step_rows[s]);
    x.wall_ns = DeviceWallTime(v, step_rows[s]) * unit;
    out.steps.push_back(RooflineStep{steps[s].number, x});
  }
  std::stable_sort(
      out.shapes.begin(), out.shapes.end(),
      [](const RooflineShape& a, const RooflineShape& b) { return a.kernel_ns > b.kernel_ns; });
  return out;
}

}  // namespace vigil::trace
