// SPDX-License-Identifier: Apache-2.0
#include "trace/insights/projected_gain.h"

#include <algorithm>
#include <string_view>

namespace vigil::trace {
namespace {

std::string_view NameOf(WhatIfChange c) {
  switch (c) {
    case WhatIfChange::kGpuIdleRemoved:
      return "gpu_idle_removed";
    case WhatIfChange::kCommOverlapped:
      return "comm_overlapped";
    case WhatIfChange::kPageableCopiesPinned:
      return "pageable_copies_pinned";
    case WhatIfChange::kLastArriverAtMedian:
      return "last_arriver_at_median";
    case WhatIfChange::kGemmOnTensorCores:
      return "gemm_on_tensor_cores";
  }
  return "";
}

double Clamped(const WhatIfResult* r) {
  if (r == nullptr || !r->valid) return 0;
  return std::clamp(r->GainPct(), 0.0, 100.0);
}

}  // namespace

double ProjectedGainPct(const RankReport& rank, WhatIfChange change) {
  return Clamped(rank.what_if.Find(NameOf(change)));
}

double ProjectedGainPct(const Report& report, WhatIfChange change) {
  for (const WhatIfResult& r : report.multi_path.what_if) {
    if (r.name == NameOf(change)) return Clamped(&r);
  }
  return 0;
}

}  // namespace vigil::trace
