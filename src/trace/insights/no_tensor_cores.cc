// SPDX-License-Identifier: Apache-2.0
// no_tensor_cores: matrix multiplies/convolutions run on the FP32 (SIMT) pipes instead of tensor
// cores. Fires when GEMM kernels without tensor-core names take more than
// `no_tensor_cores_gemm_pct` of computation time, on a GPU that has tensor cores; the advice names
// only the formats the GPU runs on them (no TF32 or BF16 before NVIDIA Ampere).
#include "trace/insights/rule_helpers.h"

namespace vigil::trace {

void RuleNoTensorCores(const Report& report, const InsightThresholds& th,
                       std::vector<Insight>* out) {
  for (const RankReport& r : report.ranks) {
    const Efficiency& e = r.efficiency;
    if (e.compute_time <= 0) continue;
    const GpuFeatures& gpu = r.workload.gpu;
    if (!gpu.tensor_cores) continue;  // nothing to miss
    double pct = Pct(static_cast<double>(e.gemm_no_tc_time), static_cast<double>(e.compute_time));
    if (pct < th.Get("no_tensor_cores_gemm_pct")) continue;
    Insight in;
    in.id = "no_tensor_cores";
    in.severity = Severity::kWarning;
    in.title = "Matrix multiplies of rank " + std::to_string(r.rank) + " miss the tensor cores";
    in.detail = std::to_string(static_cast<int>(pct)) +
                "% of computation time is GEMM/convolution kernels without tensor cores.";
    if (e.top_gemm_no_tc != kNoIndex) {
      // The first kernel with that name as the pointer into the trace.
      for (size_t i = 0; i < r.view.size(); ++i) {
        if (r.view.name_of(i) == e.top_gemm_no_tc) {
          in.evidence.push_back(RowEvidence(r, "kernel", r.view.row[i],
                                            static_cast<double>(e.gemm_no_tc_time * r.unit_ns)));
          break;
        }
      }
    }
    in.estimated_gain_pct = ProjectedGainPct(r, WhatIfChange::kGemmOnTensorCores);
    const bool training = r.workload.kind == WorkloadKind::kTraining;
    if (gpu.tf32 && gpu.bf16) {
      in.recommendation =
          "Use bf16/fp16 autocast (torch.autocast) or enable TF32 "
          "(torch.backends.cuda.matmul.allow_tf32 = True, "
          "torch.set_float32_matmul_precision('high')), "
          "and keep matrix dimensions multiples of 8.";
    } else {
      const std::string arch = gpu.architecture.empty() ? "this GPU" : gpu.architecture;
      in.recommendation =
          std::string("Use fp16 autocast (torch.autocast(\"cuda\", dtype=torch.float16)") +
          (training ? " with torch.cuda.amp.GradScaler" : "") +
          ") and keep matrix dimensions multiples of 8; " + arch +
          " has FP16 tensor cores but no TF32 or BF16 ones.";
    }
    out->push_back(std::move(in));
  }
}

constexpr ThresholdSpec kNoTensorCoresThresholds[] = {
    {"no_tensor_cores_gemm_pct", 20, "GEMM share of compute without tensor-core kernels"},
};

extern const InsightRuleSpec kNoTensorCoresRule = {"no_tensor_cores", kNoTensorCoresThresholds,
                                                   RuleNoTensorCores};

}  // namespace vigil::trace
