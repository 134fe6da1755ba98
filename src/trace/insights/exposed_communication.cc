// SPDX-License-Identifier: Apache-2.0
// exposed_communication: collective time not hidden behind computation. Fires when exposed
// communication exceeds `exposed_comm_pct` of the GPU span. The advice follows the workload:
// DDP/FSDP overlap for data-parallel training, tensor-parallel remedies for inference or TP.
#include <algorithm>

#include "trace/insights/rule_helpers.h"

namespace vigil::trace {

void RuleExposedCommunication(const Report& report, const InsightThresholds& th,
                              std::vector<Insight>* out) {
  for (const RankReport& r : report.ranks) {
    if (!r.temporal.valid || r.temporal.comm <= 0) continue;
    double pct = r.temporal.Pct(r.temporal.exposed_comm);
    if (pct < th.Get("exposed_comm_pct")) continue;
    Insight in;
    in.id = "exposed_communication";
    in.severity = pct >= 3 * th.Get("exposed_comm_pct") ? Severity::kCritical : Severity::kWarning;
    in.title = "Communication of rank " + std::to_string(r.rank) + " is exposed " +
               std::to_string(static_cast<int>(pct)) + "% of the time";
    in.detail = "Collectives take " + FormatMs(r.temporal.comm * r.unit_ns) + ", of which " +
                FormatMs(r.temporal.exposed_comm * r.unit_ns) +
                " with no computation running; overlap " +
                std::to_string(static_cast<int>(r.overlap.pct)) + "%.";
    for (const KernelStat& k : r.kernels.kernels) {
      if (k.cls != KernelClass::kComm) continue;
      for (size_t i = 0; i < r.view.size(); ++i) {
        if (r.view.name_of(i) == k.name) {
          in.evidence.push_back(RowEvidence(r, "collective kernel", r.view.row[i],
                                            static_cast<double>(k.sum * r.unit_ns)));
          break;
        }
      }
      if (in.evidence.size() >= 3) break;
    }
    in.estimated_gain_pct = ProjectedGainPct(r, WhatIfChange::kCommOverlapped);
    const Workload& w = r.workload;
    if (w.parallelism == Parallelism::kTensorParallel || w.kind == WorkloadKind::kInference) {
      in.recommendation =
          "Tensor-parallel collectives sit between the layers of every forward pass: use a "
          "fused/custom all-reduce (vLLM custom all-reduce, NCCL symmetric memory), overlap it "
          "with computation (async tensor parallel, sequence parallelism), or use fewer "
          "tensor-parallel ranks per replica; check for stragglers making others wait.";
    } else if (w.kind == WorkloadKind::kTraining) {
      in.recommendation =
          "Overlap communication with computation: DDP bucket tuning (bucket_cap_mb), FSDP "
          "forward/backward prefetch, async tensor parallel; check for stragglers making others "
          "wait.";
    } else {
      in.recommendation =
          "Overlap communication with computation (run collectives on their own stream while "
          "independent work proceeds, larger fused buckets); check for stragglers making others "
          "wait.";
    }
    out->push_back(std::move(in));
  }
}

constexpr ThresholdSpec kExposedCommunicationThresholds[] = {
    {"exposed_comm_pct", 10, "communication not overlapped by computation, of the span"},
};

extern const InsightRuleSpec kExposedCommunicationRule = {
    "exposed_communication", kExposedCommunicationThresholds, RuleExposedCommunication};

}  // namespace vigil::trace
