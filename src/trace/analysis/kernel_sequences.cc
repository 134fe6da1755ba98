// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/kernel_sequences.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace vigil::trace {

std::vector<KernelSequence> FindKernelSequences(const GpuView& v, uint64_t min_count,
                                                size_t max_results) {
  std::map<int64_t, std::vector<size_t>> by_stream;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v.is_kernel[i] && v.cls[i] == KernelClass::kCompute) by_stream[v.stream_of(i)].push_back(i);
  }
  struct Acc {
    KernelSequence seq;
    size_t last_end_pos = 0;  // to count non-overlapping occurrences
    int64_t stream = -1;
  };
  std::unordered_map<uint64_t, Acc> acc;
  for (auto& [stream, idx] : by_stream) {
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v.ts[a] < v.ts[b]; });
    for (size_t len = 2; len <= 6; ++len) {
      for (size_t p = 0; p + len <= idx.size(); ++p) {
        uint64_t h = 1469598103934665603ULL ^ len;
        for (size_t k = 0; k < len; ++k) h = (h ^ v.name_of(idx[p + k])) * 1099511628211ULL;
        Acc& a = acc[h];
        if (a.seq.count == 0) {
          for (size_t k = 0; k < len; ++k) a.seq.names.push_back(v.name_of(idx[p + k]));
          a.seq.first = idx[p];
          a.stream = stream;
        } else if (a.stream == stream && p < a.last_end_pos) {
          continue;  // overlaps the previous occurrence (e.g. A A A for "A A")
        }
        ++a.seq.count;
        a.last_end_pos = p + len;
        for (size_t k = 0; k < len; ++k) {
          a.seq.total += v.dur[idx[p + k]];
          if (k > 0) a.seq.gaps += std::max<int64_t>(0, v.ts[idx[p + k]] - v.end(idx[p + k - 1]));
        }
      }
    }
  }
  std::vector<KernelSequence> out;
  for (auto& [h, a] : acc) {
    // A single repeated kernel ("A A") is not a fusion candidate.
    const uint32_t first = a.seq.names[0];  // A binding is not captured (clang 14).
    bool all_same = std::all_of(a.seq.names.begin(), a.seq.names.end(),
                                [first](uint32_t n) { return n == first; });
    if (a.seq.count >= min_count && !all_same) out.push_back(std::move(a.seq));
  }
  std::sort(out.begin(), out.end(), [](const KernelSequence& a, const KernelSequence& b) {
    if (a.total != b.total) return a.total > b.total;
    return a.names < b.names;
  });
  // Drop sequences contained in a better-ranked one with the same count.
  std::vector<KernelSequence> kept;
  for (KernelSequence& s : out) {
    bool sub = false;
    for (const KernelSequence& k : kept) {
      if (k.count == s.count && std::search(k.names.begin(), k.names.end(), s.names.begin(),
                                            s.names.end()) != k.names.end()) {
        sub = true;
        break;
      }
    }
    if (!sub) kept.push_back(std::move(s));
    if (kept.size() >= max_results) break;
  }
  return kept;
}

}  // namespace vigil::trace
