// SPDX-License-Identifier: Apache-2.0
// unfused_optimizer: the optimizer step launches one small kernel per parameter and operation
// instead of multi-tensor (foreach) or fused kernels. Fires when the GPU work launched from
// "Optimizer.step#..." ranges averages more than `unfused_optimizer_kernels` kernels per step and
// under half of them are multi_tensor_apply/fused kernels.
#include <algorithm>

#include "trace/insights/rule_helpers.h"

namespace vigil::trace {

void RuleUnfusedOptimizer(const Report& report, const InsightThresholds& th,
                          std::vector<Insight>* out) {
  for (const RankReport& r : report.ranks) {
    const RankTrace& t = *r.trace;
    const EventTable& e = t.events;
    const Links& l = t.links;
    uint64_t kernels = 0, fused = 0;
    int64_t kernel_ns = 0;
    std::vector<uint32_t> steps;  // optimizer step ranges seen
    for (uint32_t g : l.gpu) {
      if (e.kind[g] != EventKind::kKernel || l.launcher[g] == kNoIndex) continue;
      for (uint32_t up = l.parent[l.launcher[g]]; up != kNoIndex; up = l.parent[up]) {
        std::string_view n = t.strings.Get(e.name[up]);
        if (n.rfind("Optimizer.step#", 0) != 0) continue;
        ++kernels;
        kernel_ns += e.dur[g];
        std::string_view k = t.strings.Get(e.name[g]);
        if (k.find("multi_tensor_apply") != std::string_view::npos ||
            k.find("fused") != std::string_view::npos ||
            k.find("Fused") != std::string_view::npos) {
          ++fused;
        }
        if (std::find(steps.begin(), steps.end(), up) == steps.end()) steps.push_back(up);
        break;
      }
    }
    if (steps.empty()) continue;
    uint64_t per_step = kernels / steps.size();
    if (per_step < static_cast<uint64_t>(th.Get("unfused_optimizer_kernels")) ||
        2 * fused >= kernels)
      continue;
    Insight in;
    in.id = "unfused_optimizer";
    in.severity = Severity::kWarning;
    in.title = "The optimizer of rank " + std::to_string(r.rank) + " launches " +
               std::to_string(per_step) + " kernels per step";
    in.detail = std::to_string(kernels - fused) + " of " + std::to_string(kernels) +
                " optimizer kernels are per-tensor (not foreach/fused), " + FormatMs(kernel_ns) +
                " of GPU time.";
    for (size_t k = 0; k < std::min<size_t>(3, steps.size()); ++k) {
      in.evidence.push_back(
          RowEvidence(r, "optimizer step", steps[k], static_cast<double>(per_step)));
    }
    in.estimated_gain_pct =
        Pct(static_cast<double>(kernel_ns) * 0.5, static_cast<double>(SpanNs(r)));
    in.recommendation =
        "Use the fused or foreach optimizer implementation (torch.optim.AdamW(..., fused=True) or "
        "foreach=True), or apex/DeepSpeed fused optimizers.";
    out->push_back(std::move(in));
  }
}

constexpr ThresholdSpec kUnfusedOptimizerThresholds[] = {
    {"unfused_optimizer_kernels", 200, "optimizer kernels per step to call it unfused"},
};

extern const InsightRuleSpec kUnfusedOptimizerRule = {
    "unfused_optimizer", kUnfusedOptimizerThresholds, RuleUnfusedOptimizer};

}  // namespace vigil::trace
