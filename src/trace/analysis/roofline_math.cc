// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/roofline_math.h"

#include <algorithm>
#include <string>

namespace vigil::trace {

ComputePeak PeakFor(const GpuSpec& gpu, ComputeSpec spec) {
  ComputePeak p;
  if (spec != ComputeSpec::kUnknown) {
    p.name = ComputeSpecName(spec);
    p.flops_per_s = PeakFlopsForComputeSpec(gpu, p.name);
  }
  if (p.flops_per_s <= 0) {
    p.name = ComputeSpecName(ComputeSpec::kVectorFp32);
    p.flops_per_s = PeakFlopsForComputeSpec(gpu, p.name);
  }
  return p;
}

std::string_view RooflineBoundName(RooflineBound bound) {
  return bound == RooflineBound::kCompute ? "compute" : "memory";
}

KernelRooflineFigures KernelRoofline(double flops, double bytes, double measured_ns,
                                     double peak_flops_per_s, double bandwidth_bytes_per_s) {
  KernelRooflineFigures k;
  if (peak_flops_per_s > 0) k.compute_ns = flops / peak_flops_per_s * 1e9;
  if (bandwidth_bytes_per_s > 0) k.memory_ns = bytes / bandwidth_bytes_per_s * 1e9;
  k.roofline_ns = std::max(k.compute_ns, k.memory_ns);
  k.bound = k.compute_ns > k.memory_ns ? RooflineBound::kCompute : RooflineBound::kMemory;
  if (bytes > 0) k.arithmetic_intensity = flops / bytes;
  if (measured_ns > 0) {
    k.achieved_pct = 100.0 * k.roofline_ns / measured_ns;
    k.achieved_flops_per_s = flops / (measured_ns * 1e-9);
  }
  return k;
}

}  // namespace vigil::trace
