// SPDX-License-Identifier: Apache-2.0
// memory_near_capacity: the caching allocator holds nearly all device memory (risk of OOM,
// allocator retries and fragmentation). Fires when a device's peak exceeds
// `memory_near_capacity_pct` of deviceProperties.totalGlobalMem. Inference engines reserve most of
// the memory for their KV cache on purpose, so the advice differs from training's.
#include "trace/insights/rule_helpers.h"

namespace vigil::trace {

void RuleMemoryNearCapacity(const Report& report, const InsightThresholds& th,
                            std::vector<Insight>* out) {
  for (const RankReport& r : report.ranks) {
    for (const DeviceMemory& d : r.memory) {
      if (d.peak_pct < th.Get("memory_near_capacity_pct")) continue;
      Insight in;
      in.id = "memory_near_capacity";
      in.severity = d.peak_pct >= 97 ? Severity::kCritical : Severity::kWarning;
      in.title = "GPU " + std::to_string(d.device_id) + " of rank " + std::to_string(r.rank) +
                 " peaks at " + std::to_string(static_cast<int>(d.peak_pct)) + "% of its memory";
      in.detail = "Peak allocated " + std::to_string(d.peak_allocated >> 20) + " MiB, reserved " +
                  std::to_string(d.peak_reserved >> 20) + " MiB of " +
                  std::to_string(d.capacity >> 20) + " MiB.";
      Evidence e;
      e.what = "memory peak";
      e.name = "device " + std::to_string(d.device_id);
      e.rank = r.rank;
      e.ts_ns = d.peak_ts;
      e.value = static_cast<double>(d.peak_allocated);
      in.evidence.push_back(e);
      in.estimated_gain_pct = 0;
      if (r.workload.kind == WorkloadKind::kInference) {
        in.recommendation =
            "Inference engines pre-allocate the KV cache (vLLM gpu_memory_utilization, SGLang "
            "mem_fraction_static); lower that fraction or the batch/sequence limits if other "
            "allocations fail, or set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against "
            "fragmentation.";
      } else {
        in.recommendation =
            "Use activation checkpointing, a smaller micro-batch, FSDP/ZeRO sharding, or "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation.";
      }
      out->push_back(std::move(in));
    }
  }
}

constexpr ThresholdSpec kMemoryNearCapacityThresholds[] = {
    {"memory_near_capacity_pct", 90, "peak memory of device capacity"},
};

extern const InsightRuleSpec kMemoryNearCapacityRule = {
    "memory_near_capacity", kMemoryNearCapacityThresholds, RuleMemoryNearCapacity};

}  // namespace vigil::trace
