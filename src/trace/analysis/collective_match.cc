// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/collective_match.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace vigil::trace {
namespace {

struct CommKernel {
  uint32_t row = kNoIndex;
  bool recorded = false;
  std::string collective;
  std::string process_group;
  int64_t seq = -1;
};

// The recorded collective arguments on the launch call or the ops around it (record_param_comms,
// nccl:all_reduce, c10d::allreduce_ ...), nearest first.
const OpArgs* RecordedArgs(const RankTrace& t, uint32_t gpu_row) {
  const Links& l = t.links;
  uint32_t p = l.launcher.empty() ? kNoIndex : l.launcher[gpu_row];
  for (int depth = 0; p != kNoIndex && depth < 32; ++depth) {
    uint32_t o = t.events.oargs[p];
    if (o != kNoIndex && t.op_args[o].collective != 0) return &t.op_args[o];
    p = l.parent.empty() ? kNoIndex : l.parent[p];
  }
  return nullptr;
}

std::vector<CommKernel> CommKernels(const RankTrace& t, const KernelClassifier& classifier) {
  const EventTable& e = t.events;
  std::vector<CommKernel> out;
  RowClassifier classify(classifier, t);
  for (uint32_t i : t.links.gpu) {  // sorted by start
    if (e.kind[i] != EventKind::kKernel) continue;
    if (classify(i) != KernelClass::kComm) continue;
    CommKernel k;
    k.row = i;
    if (const OpArgs* a = RecordedArgs(t, i)) {
      k.recorded = true;
      k.collective = std::string(t.strings.Get(a->collective));
      k.process_group = std::string(t.strings.Get(a->process_group));
      k.seq = a->seq;
    }
    out.push_back(std::move(k));
  }
  return out;
}

constexpr int64_t kEndTolerance = 100'000;  // ns: a collective ends together on every rank
constexpr size_t kCandidates = 12;          // offsets tried from the first kernels of each side

// Monotone pairs (i, j) with |a_end[i] - (b_end[j] + offset)| <= tolerance; a and b are sorted
// by end.
std::vector<std::pair<size_t, size_t>> PairByEnd(const std::vector<int64_t>& a,
                                                 const std::vector<int64_t>& b, int64_t offset) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    int64_t d = a[i] - (b[j] + offset);
    if (d <= kEndTolerance && d >= -kEndTolerance) {
      out.emplace_back(i, j);
      ++i;
      ++j;
    } else if (d < 0) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

// Pairs two ranks' kernels of one collective kind by their ends, which coincide on every rank up
// to a clock offset: the offset pairing the most kernels wins (ties: the one closest to what the
// n-th-with-n-th pairing suggests). This is the n-th-with-n-th pairing when both traces hold the
// same collectives, and still right when one trace starts a collective later or misses some.
std::vector<std::pair<size_t, size_t>> PairSequences(const std::vector<int64_t>& a,
                                                     const std::vector<int64_t>& b) {
  if (a.empty() || b.empty()) return {};
  std::vector<int64_t> nth;
  for (size_t k = 0; k < std::min(a.size(), b.size()); ++k) nth.push_back(a[k] - b[k]);
  std::nth_element(nth.begin(), nth.begin() + static_cast<ptrdiff_t>(nth.size() / 2), nth.end());
  int64_t prior = nth[nth.size() / 2];
  std::vector<int64_t> candidates{prior};
  for (size_t i = 0; i < std::min(a.size(), kCandidates); ++i) {
    for (size_t j = 0; j < std::min(b.size(), kCandidates); ++j) candidates.push_back(a[i] - b[j]);
  }
  size_t best_n = 0;
  int64_t best = prior;
  for (int64_t o : candidates) {
    size_t n = PairByEnd(a, b, o).size();
    int64_t dist = o > prior ? o - prior : prior - o;
    int64_t best_dist = best > prior ? best - prior : prior - best;
    if (n > best_n || (n == best_n && dist < best_dist)) {
      best_n = n;
      best = o;
    }
  }
  return PairByEnd(a, b, best);
}

void Align(const std::vector<const RankTrace*>& ranks, CollectiveMatches* m) {
  size_t n = ranks.size();
  m->offset_ns.assign(n, 0);
  m->aligned.assign(n, 0);
  m->align_collective.assign(n, kNoIndex);
  if (n == 0) return;
  m->aligned[0] = 1;
  for (bool progress = true; progress;) {
    progress = false;
    for (uint32_t r = 1; r < n; ++r) {
      if (m->aligned[r]) continue;
      // r's earliest-ending collective shared with an aligned rank.
      int64_t best_end = INT64_MAX;
      for (uint32_t c = 0; c < m->collectives.size(); ++c) {
        const auto& mem = m->collectives[c].members;
        const CollectiveMember* mine = nullptr;
        const CollectiveMember* ref = nullptr;
        for (const CollectiveMember& x : mem) {
          if (x.rank_index == r) mine = &x;
          if (m->aligned[x.rank_index] && ref == nullptr) ref = &x;
        }
        if (mine == nullptr || ref == nullptr) continue;
        int64_t end = ranks[r]->events.end(mine->row);
        if (end >= best_end) continue;
        best_end = end;
        int64_t ref_end =
            ranks[ref->rank_index]->events.end(ref->row) + m->offset_ns[ref->rank_index];
        m->offset_ns[r] = ref_end - end;
        m->align_collective[r] = c;
      }
      if (best_end != INT64_MAX) {
        m->aligned[r] = 1;
        progress = true;
      }
    }
  }
}

}  // namespace

std::string MatchedCollective::Label() const {
  return fmt::format("{} #{} ({})", collective, index, process_group);
}

std::string KernelCollectiveKind(std::string_view name) {
  if (name.substr(0, 5) == "void ") name.remove_prefix(5);
  size_t paren = name.find('(');
  if (paren != std::string_view::npos) name = name.substr(0, paren);
  size_t k = name.find("Kernel_");
  if (name.substr(0, 4) == "nccl" || name.substr(0, 4) == "rccl") {
    if (k != std::string_view::npos) {
      std::string_view rest = name.substr(k + 7);
      return std::string(rest.substr(0, rest.find('_')));
    }
  }
  return std::string(name);
}

CollectiveMatches MatchCollectives(const std::vector<const RankTrace*>& ranks,
                                   const KernelClassifier& classifier) {
  CollectiveMatches out;
  std::vector<std::vector<CommKernel>> per_rank;
  bool all_recorded = true, all_seq = true;
  std::vector<std::set<int64_t>> streams(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    per_rank.push_back(CommKernels(*ranks[r], classifier));
    out.comm_kernels += per_rank.back().size();
    for (const CommKernel& k : per_rank.back()) {
      all_recorded = all_recorded && k.recorded;
      all_seq = all_seq && k.seq >= 0;
      streams[r].insert(ranks[r]->events.stream[k.row]);
    }
  }
  out.recorded_args = all_recorded && out.comm_kernels > 0;
  // Stream ids when every rank uses the same ones, else each stream's position among the rank's
  // communication streams.
  bool same_streams = true;
  for (const auto& s : streams) same_streams = same_streams && s == streams.front();
  // Each rank's kernels per (group, kind), in start order.
  using Key = std::pair<std::string, std::string>;
  std::map<Key, std::vector<std::vector<uint32_t>>> seqs;  // key -> per rank -> rows
  for (uint32_t r = 0; r < per_rank.size(); ++r) {
    for (const CommKernel& k : per_rank[r]) {
      std::string group, kind;
      if (out.recorded_args) {
        group = "pg " + (k.process_group.empty() ? std::string("?") : k.process_group);
        kind = k.collective;
      } else {
        int64_t s = ranks[r]->events.stream[k.row];
        group = same_streams ? fmt::format("stream {}", s)
                             : fmt::format("stream #{}",
                                           std::distance(streams[r].begin(), streams[r].find(s)));
        kind = KernelCollectiveKind(ranks[r]->strings.Get(ranks[r]->events.name[k.row]));
      }
      auto& per = seqs[{group, kind}];
      per.resize(ranks.size());
      per[r].push_back(k.row);
    }
  }
  bool by_seq = out.recorded_args && all_seq;
  for (auto& entry : seqs) {
    auto& per = entry.second;  // A reference, not a binding: lambdas below capture it (clang 14).
    // Recorded sequence numbers identify the collective; otherwise pair each rank with the
    // first rank that ran this kind, by end times.
    std::map<int64_t, std::vector<CollectiveMember>> groups;
    uint32_t ref = 0;
    while (ref < per.size() && per[ref].empty()) ++ref;
    auto ends_by_end = [&](uint32_t r, std::vector<size_t>* order) {
      const EventTable& e = ranks[r]->events;
      order->resize(per[r].size());
      for (size_t i = 0; i < order->size(); ++i) (*order)[i] = i;
      std::stable_sort(order->begin(), order->end(),
                       [&](size_t x, size_t y) { return e.end(per[r][x]) < e.end(per[r][y]); });
      std::vector<int64_t> ends;
      for (size_t i : *order) ends.push_back(e.end(per[r][i]));
      return ends;
    };
    std::vector<size_t> ref_order;
    std::vector<int64_t> ref_ends;
    if (!by_seq && ref < per.size()) ref_ends = ends_by_end(ref, &ref_order);
    for (uint32_t r = ref; r < per.size(); ++r) {
      if (per[r].empty()) continue;
      if (by_seq) {
        for (uint32_t row : per[r]) {
          const OpArgs* a = RecordedArgs(*ranks[r], row);
          auto& mem = groups[a->seq];
          if (mem.empty() || mem.back().rank_index != r) mem.push_back({r, row});
        }
      } else if (r == ref) {
        for (size_t i = 0; i < per[r].size(); ++i)
          groups[static_cast<int64_t>(i)].push_back({r, per[r][i]});
      } else {
        std::vector<size_t> order;
        std::vector<int64_t> ends = ends_by_end(r, &order);
        for (auto [i, j] : PairSequences(ref_ends, ends)) {
          groups[static_cast<int64_t>(ref_order[i])].push_back({r, per[r][order[j]]});
        }
      }
    }
    for (auto& [index, mem] : groups) {
      if (mem.size() < 2) continue;
      MatchedCollective c;
      c.process_group = entry.first.first;
      c.collective = entry.first.second;
      c.index = index;
      c.members = std::move(mem);
      out.collectives.push_back(std::move(c));
    }
  }
  uint64_t matched = 0;
  for (const MatchedCollective& c : out.collectives) matched += c.members.size();
  out.unmatched = out.comm_kernels - matched;
  auto first_ts = [&](const MatchedCollective& c) {
    const CollectiveMember& f = c.members.front();
    return std::pair<uint32_t, int64_t>{f.rank_index, ranks[f.rank_index]->events.ts[f.row]};
  };
  std::stable_sort(out.collectives.begin(), out.collectives.end(),
                   [&](const MatchedCollective& a, const MatchedCollective& b) {
                     return first_ts(a) < first_ts(b);
                   });
  Align(ranks, &out);
  return out;
}

std::vector<RankArrivals> LastArrivals(const std::vector<const RankTrace*>& ranks,
                                       const CollectiveMatches& matches) {
  std::vector<RankArrivals> out(ranks.size());
  for (const MatchedCollective& c : matches.collectives) {
    int64_t last = INT64_MIN, second = INT64_MIN;
    uint32_t last_rank = kNoIndex;
    size_t n = 0;
    for (const CollectiveMember& m : c.members) {
      if (m.rank_index >= ranks.size() || !matches.aligned[m.rank_index]) continue;
      ++n;
      const int64_t a = ranks[m.rank_index]->events.ts[m.row] + matches.offset_ns[m.rank_index];
      if (a > last) {
        second = last;
        last = a;
        last_rank = m.rank_index;
      } else if (a > second) {
        second = a;
      }
    }
    if (n < 2) continue;
    for (const CollectiveMember& m : c.members) {
      if (m.rank_index < ranks.size() && matches.aligned[m.rank_index]) {
        ++out[m.rank_index].collectives;
      }
    }
    if (last > second) {
      ++out[last_rank].last;
      out[last_rank].late_ns += last - second;
    }
  }
  return out;
}

}  // namespace vigil::trace
