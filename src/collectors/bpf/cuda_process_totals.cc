// SPDX-License-Identifier: Apache-2.0
#include "collectors/bpf/cuda_process_totals.h"

#include <set>

namespace vigil {

CudaProcessTotals::Counts CudaProcessTotals::CountsOf(const snoop::ProcessSummary& p) {
  Counts c;
  c.launches = static_cast<double>(p.launches_total);
  c.device_bytes = p.exited ? 0 : static_cast<double>(p.memory.outstanding_bytes);
  for (const snoop::ApiCalls& a : p.syncs_by_api) {
    c.sync_seconds[a.api] += a.seconds;
  }
  for (const snoop::CopyKind& k : p.copies) {
    c.copy_bytes[k.kind] += static_cast<double>(k.bytes);
  }
  return c;
}

void CudaProcessTotals::AddTo(const Counts& from, bool with_gauge, Counts* into) {
  into->launches += from.launches;
  if (with_gauge) {
    into->device_bytes += from.device_bytes;
  }
  for (const auto& [api, seconds] : from.sync_seconds) {
    into->sync_seconds[api] += seconds;
  }
  for (const auto& [kind, bytes] : from.copy_bytes) {
    into->copy_bytes[kind] += bytes;
  }
}

void CudaProcessTotals::Update(const snoop::SessionSummary& summary) {
  std::set<int> seen;
  for (const snoop::ProcessSummary& p : summary.processes) {
    seen.insert(p.pid);
    auto it = live_.find(p.pid);
    if (it == live_.end()) {
      it = live_.emplace(p.pid, Tracked{labels_(p.pid, p.command), {}}).first;
    }
    it->second.counts = CountsOf(p);
  }
  for (auto it = live_.begin(); it != live_.end();) {
    if (seen.count(it->first) == 0) {
      AddTo(it->second.counts, /*with_gauge=*/false, &retired_[it->second.labels]);
      it = live_.erase(it);
    } else {
      ++it;
    }
  }
}

void CudaProcessTotals::Write(MetricWriter& out) const {
  std::map<Labels, Counts> groups = retired_;
  for (const auto& [pid, tracked] : live_) {
    AddTo(tracked.counts, /*with_gauge=*/true, &groups[tracked.labels]);
  }
  for (const auto& [labels, c] : groups) {
    out.Add(kCudaLaunches, c.launches, labels);
    for (const auto& [api, seconds] : c.sync_seconds) {
      Labels l = labels;
      l.emplace_back("api", api);
      SortLabels(&l);
      out.Add(kCudaSyncSeconds, seconds, std::move(l));
    }
    out.Add(kCudaDeviceMemory, c.device_bytes, labels);
    for (const auto& [kind, bytes] : c.copy_bytes) {
      Labels l = labels;
      l.emplace_back("kind", kind);
      SortLabels(&l);
      out.Add(kCudaCopyBytes, bytes, std::move(l));
    }
  }
}

size_t CudaProcessTotals::groups() const {
  std::set<Labels> all;
  for (const auto& [labels, counts] : retired_) {
    all.insert(labels);
  }
  for (const auto& [pid, tracked] : live_) {
    all.insert(tracked.labels);
  }
  return all.size();
}

}  // namespace vigil
