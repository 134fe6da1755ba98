// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/sync_points.h"

#include <algorithm>
#include <array>
#include <utility>

namespace vigil::trace {
namespace {

// Operators that read a GPU result on the host (a value, a data-dependent size, a copy).
constexpr std::array<std::pair<std::string_view, std::string_view>, 18> kCauses = {{
    {"aten::item", ".item() (or float(t), int(t), t.tolist())"},
    {"aten::_local_scalar_dense", ".item() (or float(t), int(t), t.tolist())"},
    {"aten::is_nonzero", "bool(t) (an `if t:` or `while t:` on a GPU tensor)"},
    {"aten::nonzero", "nonzero / torch.where(cond) (output size depends on the data)"},
    {"aten::argwhere", "argwhere (output size depends on the data)"},
    {"aten::masked_select", "masked_select / t[mask] (output size depends on the data)"},
    {"aten::unique", "unique (output size depends on the data)"},
    {"aten::_unique2", "unique (output size depends on the data)"},
    {"aten::unique_consecutive", "unique_consecutive (output size depends on the data)"},
    {"aten::unique_dim", "unique (output size depends on the data)"},
    {"aten::repeat_interleave", "repeat_interleave without output_size"},
    {"aten::bincount", "bincount (output size depends on the data)"},
    {"aten::equal", "torch.equal (returns a Python bool)"},
    {"aten::allclose", "torch.allclose (returns a Python bool)"},
    {"aten::cpu", ".cpu() (a copy to host memory)"},
    {"aten::to", ".to('cpu') / .cpu() or a blocking copy"},
    {"aten::_to_copy", ".to('cpu') / .cpu() or a blocking copy"},
    {"aten::copy_", "copy_ between host and device"},
}};

}  // namespace

std::string_view SyncCauseHint(std::string_view op) {
  for (const auto& [name, hint] : kCauses) {
    if (name == op) return hint;
  }
  return {};
}

SyncAnalysis AnalyzeSyncPoints(const RankTrace& t) {
  const EventTable& e = t.events;
  const Links& l = t.links;
  SyncAnalysis out;
  std::vector<SyncPoint> points;
  std::vector<uint64_t> per_step(l.steps.size(), 0);
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.kind[i] != EventKind::kRuntime && e.kind[i] != EventKind::kDriver) continue;
    const BlockKind kind = HostBlockKind(t, i);
    if (kind == BlockKind::kNone) continue;
    SyncPoint p;
    p.row = i;
    p.kind = kind;
    // Walk up the chain of CPU ops directly around the call: the outermost operator known to
    // force a sync wins, else the outermost operator.
    uint32_t outermost = kNoIndex, known = kNoIndex;
    for (uint32_t up = l.parent.empty() ? kNoIndex : l.parent[i]; up != kNoIndex;
         up = l.parent[up]) {
      if (e.kind[up] == EventKind::kCpuOp) {
        outermost = up;
        if (!SyncCauseHint(t.strings.Get(e.name[up])).empty()) known = up;
      } else if (outermost != kNoIndex) {
        break;
      }
    }
    p.cause_row = known != kNoIndex ? known : outermost;
    ++out.count;
    out.total_ns += e.dur[i];
    SyncCount& a = out.by_api[std::string(t.strings.Get(e.name[i]))];
    ++a.count;
    a.dur_ns += e.dur[i];
    std::string cause =
        p.cause_row == kNoIndex ? "(none)" : std::string(t.strings.Get(e.name[p.cause_row]));
    SyncCount& c = out.by_cause[cause];
    ++c.count;
    c.dur_ns += e.dur[i];
    SyncCount& k = out.by_kind[std::string(BlockKindName(kind))];
    ++k.count;
    k.dur_ns += e.dur[i];
    points.push_back(p);
    for (size_t s = 0; s < l.steps.size(); ++s) {
      if (e.ts[i] >= l.steps[s].ts && e.ts[i] < l.steps[s].ts + l.steps[s].dur) ++per_step[s];
    }
  }
  for (uint64_t n : per_step) out.max_per_step = std::max(out.max_per_step, n);
  std::sort(points.begin(), points.end(), [&](const SyncPoint& a, const SyncPoint& b) {
    return e.dur[a.row] != e.dur[b.row] ? e.dur[a.row] > e.dur[b.row] : a.row < b.row;
  });
  if (points.size() > 20) points.resize(20);
  out.longest = std::move(points);
  return out;
}

}  // namespace vigil::trace
