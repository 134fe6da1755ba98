// SPDX-License-Identifier: Apache-2.0
// Memcpy/memset analysis: per direction (HtoD, DtoH, DtoD, PtoP, memset) the count, bytes, time
// and achieved bandwidth, and the copies from or to pageable host memory (which force a staging
// copy and block the CPU), largest first. Pure function of a linked RankTrace.
// Owner: trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/model/trace_model.h"

namespace vigil::trace {

struct MemcpyKindStats {
  std::string kind;  // "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "Memset", "Other"
  uint64_t count = 0;
  int64_t bytes = 0;
  int64_t dur_ns = 0;
  uint64_t pageable_count = 0;
  int64_t pageable_bytes = 0;
  double GBps() const { return dur_ns > 0 ? static_cast<double>(bytes) / dur_ns : 0; }
};

struct MemcpyAnalysis {
  std::vector<MemcpyKindStats> kinds;
  std::vector<uint32_t> pageable_rows;  // up to 20 pageable copies, largest first
  int64_t total_ns = 0;
  int64_t pageable_ns = 0;
  int64_t pageable_bytes = 0;
};

// "Memcpy HtoD (Pageable -> Device)" -> "HtoD"; pageable when either side is "Pageable".
std::string MemcpyDirection(std::string_view name, bool* pageable);

MemcpyAnalysis AnalyzeMemcpy(const RankTrace& trace);

}  // namespace vigil::trace
