// SPDX-License-Identifier: Apache-2.0
// no_tensor_cores: matrix multiplies/convolutions run on the FP32 (SIMT) pipes instead of tensor
// cores. Fires when GEMM kernels without tensor-core names take more than
// `no_tensor_cores_gemm_pct` of computation time.
#include "trace/insights/rule_helpers.h"

namespace vigil::trace {

void RuleNoTensorCores(const Report& report, const InsightThresholds& th,
                       std::vector<Insight>* out) {
  for (const RankReport& r : report.ranks) {
    const Efficiency& e = r.efficiency;
    if (e.compute_time <= 0) continue;
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
    in.estimated_gain_pct = pct * 0.75 * (100.0 - r.temporal.Pct(r.temporal.idle)) / 100.0;
    in.recommendation =
        "Use bf16/fp16 autocast (torch.autocast) or enable TF32 "
        "(torch.backends.cuda.matmul.allow_tf32 = True, "
        "torch.set_float32_matmul_precision('high')), "
        "and keep matrix dimensions multiples of 8.";
    out->push_back(std::move(in));
  }
}

constexpr ThresholdSpec kNoTensorCoresThresholds[] = {
    {"no_tensor_cores_gemm_pct", 20, "GEMM share of compute without tensor-core kernels"},
};

extern const InsightRuleSpec kNoTensorCoresRule = {"no_tensor_cores", kNoTensorCoresThresholds,
                                                   RuleNoTensorCores};

}  // namespace vigil::trace
