// SPDX-License-Identifier: Apache-2.0
// Topline efficiency from profiling counters: estimated FLOP/s = sum over pipes of
// (pipe activity x compute units x FLOP per clock per unit x measured SM clock). Pipe activity is
// the fraction of cycles the pipe was busy averaged over all SMs (GPM / DCGM definition), so the
// product is the FLOP rate that pipe sustained. Owner: gpu. Pure functions.
//
// Assumptions (documented in docs/gpu.md): HMMA (tensor) activity is costed at the FP16/BF16
// dense rate because neither GPM nor DCGM separates TF32/FP16/FP8 tensor work (TF32 is then
// over-, FP8 under-estimated by 2x); "any tensor" activity stands in when the HMMA split is
// missing; IMMA is costed at twice the FP16 tensor rate (INT8 = 2x FP16 on Volta..Blackwell);
// non-tensor FP16 at twice the FP32 rate (packed half2).
#pragma once

#include <optional>

#include "gpu/gpu_reading.h"
#include "hwspec/gpu_specs.h"

namespace vigil {

struct FlopsEstimate {
  double flops = 0;             // Estimated FLOP/s.
  double dense_peak_flops = 0;  // The dense FP16/BF16 tensor peak (largest peak if none).
  double dense_peak_ratio = 0;  // flops / dense_peak_flops.
};

// nullopt when no pipe activity was measured. `sm_clock_hz` is the measured SM clock; when
// absent the spec's boost clock is used.
std::optional<FlopsEstimate> EstimateFlops(const GpuSpec& spec, const GpuActivity& activity,
                                           std::optional<double> sm_clock_hz);

}  // namespace vigil
