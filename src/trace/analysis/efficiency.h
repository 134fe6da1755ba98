// SPDX-License-Identifier: Apache-2.0
// Kernel efficiency: duration-weighted SM efficiency (blocks per SM, capped at 1) and estimated
// achieved occupancy from the kernel args Kineto writes, tensor-core use recognised from kernel
// names (cuBLAS/CUTLASS/xmma/wgmma/nvjet on NVIDIA, MFMA "MI" tiles on AMD, flash attention),
// GEMM kernels that miss the tensor cores, and the FLOP/s achieved by the FLOP counts the trace
// carries (with_flops=True). % of roofline is analysis/roofline.h's; SetRooflinePct copies its
// rank figure here, where the report has always carried it.
// Owner: trace. Pure function of a GpuView and the trace.
#pragma once

#include <cstdint>
#include <string>

#include "trace/analysis/gpu_view.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

struct Efficiency {
  int64_t compute_time = 0;       // computation kernels, view units
  double sm_efficiency_pct = -1;  // -1 when the args are absent
  double occupancy_pct = -1;
  int64_t tensor_core_time = 0;        // kernels recognised as tensor-core kernels
  int64_t gemm_time = 0;               // GEMM/conv kernels
  int64_t gemm_no_tc_time = 0;         // GEMM/conv kernels without tensor cores
  uint32_t top_gemm_no_tc = kNoIndex;  // name id of the largest such kernel
  double total_flops = -1;             // sum of cpu_op "flops" args, -1 when absent
  double achieved_flops_per_s = -1;    // total_flops / compute time
  std::string gpu_model;               // hwspec model, "" when unknown
  // The compute peak most modelled kernel time is held to (Roofline::main_peak), -1 without one.
  double peak_flops_per_s = -1;
  // The rank's % of roofline over the replayed device time (RooflineTotals::PctOfReplayed).
  double roofline_pct = -1;
  double TensorCorePct() const {
    return compute_time > 0 ? 100.0 * static_cast<double>(tensor_core_time) / compute_time : 0;
  }
};

bool IsTensorCoreKernel(std::string_view name);
bool IsGemmKernel(std::string_view name);

Efficiency AnalyzeEfficiency(const RankTrace& trace, const GpuView& view);

struct Roofline;
void SetRooflinePct(const Roofline& roofline, Efficiency* efficiency);

}  // namespace vigil::trace
