// SPDX-License-Identifier: Apache-2.0
// The roofline of one piece of GPU work: the peak it is held to (by the dtype pair of its work
// model, from the hwspec table) and its roofline time, max(FLOPs / compute peak, bytes / memory
// bandwidth). Why apart from roofline.cc: the per-kernel arithmetic is what users check by hand,
// so it is small, pure and tested alone.
// Owner: trace. Pure functions.
#pragma once

#include <string_view>

#include "hwspec/gpu_specs.h"
#include "trace/analysis/work_model/op_work.h"

namespace vigil::trace {

// The compute peak for a work model's spec on a device. Where the device has no unit for the
// spec (INT8 on Volta, BF16 vector on Volta, kUnknown) the work is held to the vector FP32 peak
// and `name` says so: the name is always the peak actually used.
struct ComputePeak {
  double flops_per_s = 0;
  std::string_view name;  // a ComputeSpecName, e.g. "matrix_bf16"
};
ComputePeak PeakFor(const GpuSpec& gpu, ComputeSpec spec);

enum class RooflineBound : uint8_t { kCompute, kMemory };
std::string_view RooflineBoundName(RooflineBound bound);  // "compute", "memory"

struct KernelRooflineFigures {
  double roofline_ns = 0;            // max(compute_ns, memory_ns)
  double compute_ns = 0;             // flops / peak
  double memory_ns = 0;              // bytes / bandwidth
  double achieved_pct = 0;           // roofline_ns / measured (can exceed 100: a model error)
  double arithmetic_intensity = -1;  // flops / bytes, -1 when bytes is 0
  double achieved_flops_per_s = 0;   // flops / measured
  RooflineBound bound = RooflineBound::kMemory;
};

// Work of `flops` and `bytes` measured at `measured_ns` (> 0) against the two roofs.
KernelRooflineFigures KernelRoofline(double flops, double bytes, double measured_ns,
                                     double peak_flops_per_s, double bandwidth_bytes_per_s);

}  // namespace vigil::trace
