// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/temporal_breakdown.h"

#include "trace/analysis/intervals.h"

namespace vigil::trace {

TemporalBreakdown ComputeTemporalBreakdown(const GpuView& v, const std::vector<size_t>* subset) {
  TemporalBreakdown r;
  std::vector<Span> all, comp, comm, mem;
  auto visit = [&](size_t i) {
    Span s{v.ts[i], v.end(i)};
    all.push_back(s);
    switch (v.cls[i]) {
      case KernelClass::kCompute:
        comp.push_back(s);
        break;
      case KernelClass::kComm:
        comm.push_back(s);
        break;
      case KernelClass::kMemory:
        mem.push_back(s);
        break;
      case KernelClass::kOther:
        break;
    }
  };
  if (subset != nullptr) {
    for (size_t i : *subset) visit(i);
  } else {
    for (size_t i = 0; i < v.size(); ++i) visit(i);
  }
  if (all.empty()) return r;
  std::vector<Span> merged = MergeSpans(std::move(all));
  r.valid = true;
  r.kernel_time = merged.back().second - merged.front().first;
  r.idle = r.kernel_time - TotalLength(merged);
  std::vector<Span> mcomp = MergeSpans(std::move(comp));
  std::vector<Span> mcomm = MergeSpans(std::move(comm));
  std::vector<Span> mmem = MergeSpans(std::move(mem));
  r.compute = TotalLength(mcomp);
  r.non_compute = r.kernel_time - r.compute - r.idle;
  r.comm = TotalLength(mcomm);
  r.memory = TotalLength(mmem);
  // Exposed: covered by the class but not by computation (mask without bit 0).
  std::vector<int64_t> cm = SweepMasks({mcomp, mcomm});
  r.exposed_comm = cm[2];
  std::vector<int64_t> mm = SweepMasks({mcomp, mmem});
  r.exposed_memory = mm[2];
  return r;
}

std::vector<size_t> SelectLaunchedIn(const GpuView& v, int64_t from, int64_t to) {
  std::vector<size_t> out;
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t t = v.launch_ts[i] != kNoTime ? v.launch_ts[i] : v.ts[i];
    if (t >= from && t < to) out.push_back(i);
  }
  return out;
}

}  // namespace vigil::trace
