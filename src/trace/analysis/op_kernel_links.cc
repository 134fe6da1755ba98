// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/op_kernel_links.h"

#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>

#include "trace/analysis/op_inputs.h"

namespace vigil::trace {
namespace {

// Answers "does the model know this cpu_op, and with what work" once per operator row, and once
// per distinct (name, recorded inputs) for the model itself: shapes repeat every step.
class OpModelCache {
 public:
  OpModelCache(const RankTrace& t, const OpModelFn& model) : t_(t), model_(model) {}

  // Index into `ops` for this cpu_op row, creating it; kNoIndex when not modelled.
  uint32_t OpIndex(uint32_t row, std::vector<LinkedOp>* ops) {
    auto [it, inserted] = by_row_.emplace(row, kNoIndex);
    if (!inserted) return it->second;
    const std::optional<OpWork>* work = Work(row);
    if (work != nullptr && work->has_value()) {
      it->second = static_cast<uint32_t>(ops->size());
      ops->push_back(LinkedOp{row, &t_, **work, 0, 0});
    }
    return it->second;
  }

  // The nearest enclosing cpu_op of `row` (walking out through the CPU call tree) that the
  // model knows: its row, kNoIndex when none.
  uint32_t NearestModelledRow(uint32_t row) {
    for (uint32_t p = row; p != kNoIndex;
         p = t_.links.parent.empty() ? kNoIndex : t_.links.parent[p]) {
      const std::optional<OpWork>* work = Work(p);
      if (work != nullptr && work->has_value()) return p;
    }
    return kNoIndex;
  }

  const std::optional<OpWork>* WorkOf(uint32_t row) { return Work(row); }

 private:
  const std::optional<OpWork>* Work(uint32_t row) {
    const EventTable& e = t_.events;
    if (e.kind[row] != EventKind::kCpuOp) return nullptr;
    const uint32_t shapes = e.shapes[row];
    if (shapes == kNoIndex) return nullptr;
    const uint64_t key = uint64_t{e.name[row]} << 32 | shapes;
    auto [it, inserted] = by_shape_.emplace(key, std::nullopt);
    if (inserted) {
      std::optional<OpInputs> in = RecordedInputs(t_, row);
      if (in.has_value()) it->second = model_(t_.strings.Get(e.name[row]), *in);
    }
    return &it->second;
  }

  const RankTrace& t_;
  const OpModelFn& model_;
  std::unordered_map<uint32_t, uint32_t> by_row_;
  std::unordered_map<uint64_t, std::optional<OpWork>> by_shape_;
};

}  // namespace

// Graph-replayed kernels: each replay of a captured operator is one operator instance.
void LinkReplayedKernels(const GpuView& v, const OpModelFn& model, const GraphCaptureLinks& links,
                         OpKernelLinks* out) {
  if (links.captures == nullptr || links.of_view_row.empty()) return;
  std::vector<std::unique_ptr<OpModelCache>> caches(links.captures->files.size());
  // (capture file, launch row) -> modelled op row; (graph launch, file, op row) -> ops index.
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> op_row_of_launch;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> instance;
  for (size_t i = 0; i < v.size(); ++i) {
    const CaptureLink& l = links.of_view_row[i];
    if (l.file == kNoIndex || out->op_of[i] != kNoIndex) continue;
    const RankTrace& capture = links.captures->files[l.file]->trace;
    if (capture.events.shapes.indexed_rows() == 0) continue;
    auto& cache = caches[l.file];
    if (!cache) cache = std::make_unique<OpModelCache>(capture, model);
    auto [r, fresh] = op_row_of_launch.try_emplace({l.file, l.launch_row}, kNoIndex);
    if (fresh) r->second = cache->NearestModelledRow(l.launch_row);
    const uint32_t op_row = r->second;
    if (op_row == kNoIndex) continue;
    auto [it, inserted] = instance.try_emplace({l.graph_launch, l.file, op_row}, kNoIndex);
    if (inserted) {
      it->second = static_cast<uint32_t>(out->ops.size());
      out->ops.push_back(LinkedOp{op_row, &capture, **cache->WorkOf(op_row), 0, 0});
    }
    out->op_of[i] = it->second;
    out->ops[it->second].kernel_time += v.dur[i];
    ++out->ops[it->second].kernels;
  }
}

OpKernelLinks LinkKernelsToOps(const RankTrace& t, const GpuView& v, const OpModelFn& model,
                               const GraphCaptureLinks* captures) {
  const EventTable& e = t.events;
  OpKernelLinks out;
  out.op_of.assign(v.size(), kNoIndex);
  if (!model) return out;
  if (e.shapes.indexed_rows() == 0) {
    if (captures != nullptr) LinkReplayedKernels(v, model, *captures, &out);
    return out;
  }
  OpModelCache cache(t, model);
  std::unordered_map<int64_t, uint32_t> op_by_external;  // built on first need
  bool external_built = false;
  auto nearest_modelled = [&](uint32_t row) {
    for (uint32_t p = row; p != kNoIndex;
         p = t.links.parent.empty() ? kNoIndex : t.links.parent[p]) {
      const uint32_t op = cache.OpIndex(p, &out.ops);
      if (op != kNoIndex) return op;
    }
    return kNoIndex;
  };
  std::unordered_map<uint32_t, uint32_t> by_launcher;
  for (size_t i = 0; i < v.size(); ++i) {
    const uint32_t row = v.row[i];
    if (e.kind[row] != EventKind::kKernel) continue;
    // A replayed graph kernel belongs to its capture-time operator, not to whatever encloses the
    // graph launch.
    if (captures != nullptr && !captures->of_view_row.empty() &&
        captures->of_view_row[i].file != kNoIndex) {
      continue;
    }
    uint32_t op = kNoIndex;
    const uint32_t launcher = t.links.launcher.empty() ? kNoIndex : t.links.launcher[row];
    if (launcher != kNoIndex) {
      auto [it, inserted] = by_launcher.emplace(launcher, kNoIndex);
      if (inserted) it->second = nearest_modelled(launcher);
      op = it->second;
    }
    if (op == kNoIndex && e.external_id[row] >= 0) {
      if (!external_built) {
        // The innermost cpu_op of each External id (the one the launch happened in).
        for (uint32_t r = 0; r < e.size(); ++r) {
          if (e.kind[r] == EventKind::kCpuOp && e.external_id[r] >= 0) {
            auto [it, inserted] = op_by_external.emplace(e.external_id[r], r);
            if (!inserted && e.ts[r] >= e.ts[it->second] && e.end(r) <= e.end(it->second)) {
              it->second = r;
            }
          }
        }
        external_built = true;
      }
      auto it = op_by_external.find(e.external_id[row]);
      if (it != op_by_external.end()) op = nearest_modelled(it->second);
    }
    if (op == kNoIndex) continue;
    out.op_of[i] = op;
    out.ops[op].kernel_time += v.dur[i];
    ++out.ops[op].kernels;
  }
  if (captures != nullptr) LinkReplayedKernels(v, model, *captures, &out);
  return out;
}

}  // namespace vigil::trace
