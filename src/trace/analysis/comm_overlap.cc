// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/comm_overlap.h"

#include "trace/analysis/intervals.h"

namespace vigil::trace {

CommOverlap ComputeCommOverlap(const GpuView& v) {
  SpanUnion comm, comp;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v.cls[i] == KernelClass::kComm) comm.Add(v.ts[i], v.end(i));
    if (v.cls[i] == KernelClass::kCompute) comp.Add(v.ts[i], v.end(i));
  }
  CommOverlap r;
  if (comm.empty()) return r;
  std::vector<Span> mcomm = std::move(comm).Take();
  std::vector<Span> mcomp = std::move(comp).Take();
  r.comm_time = TotalLength(mcomm);
  r.has_comm = r.comm_time > 0;
  r.overlapped = SweepMasks({&mcomm, &mcomp})[3];
  r.pct = r.comm_time > 0
              ? 100.0 * static_cast<double>(r.overlapped) / static_cast<double>(r.comm_time)
              : 0;
  return r;
}

}  // namespace vigil::trace
