// SPDX-License-Identifier: Apache-2.0
// Matches the collectives of several ranks: the same collective kind on the same process group
// is one operation on every rank that ran it. The identity comes from the arguments Kineto
// records on the op that launched the kernel ("Collective name", "Process Group Name"; with
// "Seq" on every one, the sequence number pairs them exactly); traces without them fall back to
// the communication kernels (NCCL/RCCL/HCCL) per stream and kernel kind ("AllReduce", ...).
// Without sequence numbers the n-th kernel of a kind is paired with the n-th on the first rank
// that ran that kind, corrected by end times: a collective ends at the same moment on every rank
// up to the clocks' offset, so the offset that pairs the most kernels within 100 us wins (ties:
// the one nearest the plain n-th pairing). That keeps traces that start a collective apart, or
// miss some kernels (sampled traces), from pairing every later collective wrongly.
// Then each rank's clock offset: ranks' clocks are not synchronised, so a rank is aligned at the
// end of its first collective shared with an already aligned rank, starting from the first rank.
// Owner: trace. Pure function of linked RankTraces.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trace/analysis/kernel_classifier.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

struct CollectiveMember {
  uint32_t rank_index = 0;  // position in the ranks passed in
  uint32_t row = kNoIndex;  // the communication kernel
};

struct MatchedCollective {
  std::string collective;     // "allreduce" (recorded) or the kernel's kind ("AllReduce")
  std::string process_group;  // recorded name, or "stream <id>" for the fallback
  int64_t index = 0;  // n-th of its kind on the first rank that ran it (or the recorded Seq)
  std::vector<CollectiveMember> members;  // one per rank that ran it, by rank index
  std::string Label() const;              // "allreduce #3 (pg 0)"
};

struct CollectiveMatches {
  std::vector<MatchedCollective> collectives;  // run by >= 2 ranks, by first member's start
  std::vector<int64_t> offset_ns;  // per rank index: add to its times to align with rank index 0
  std::vector<uint8_t> aligned;    // per rank index: offset known (0 otherwise)
  std::vector<uint32_t> align_collective;  // per rank index: the collective aligned on, or kNoIndex
  bool recorded_args = false;              // identities from Kineto's collective arguments
  uint64_t comm_kernels = 0;               // communication kernels seen, all ranks
  uint64_t unmatched = 0;                  // of them, on one rank only
};

CollectiveMatches MatchCollectives(const std::vector<const RankTrace*>& ranks,
                                   const KernelClassifier& classifier);

// Per rank index, its arrivals (kernel starts, aligned clocks) at the collectives it shares with
// other aligned ranks: how many, at how many it arrived last, and the sum over those of its
// arrival - the second-last arrival (the time every other member waited for it alone).
struct RankArrivals {
  uint64_t collectives = 0;
  uint64_t last = 0;
  int64_t late_ns = 0;
};
std::vector<RankArrivals> LastArrivals(const std::vector<const RankTrace*>& ranks,
                                       const CollectiveMatches& matches);

// "ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)" -> "AllReduce"; other names up to '('.
std::string KernelCollectiveKind(std::string_view kernel_name);

}  // namespace vigil::trace
