// SPDX-License-Identifier: Apache-2.0
#include "collectors/bpf/cuda_process_totals.h"

#include <set>
#include <string>

namespace vigil {

CudaProcessTotals::Counts CudaProcessTotals::CountsOf(const snoop::ProcessSummary& p) {
  Counts c;
  c.launches = static_cast<double>(p.launches_total);
  // Per device; a summary without a device breakdown holds its bytes on device 0.
  if (p.memory.by_device.empty()) {
    c.device_bytes[0] = p.exited ? 0 : static_cast<double>(p.memory.outstanding_bytes);
  }
  for (const snoop::DeviceMemory& d : p.memory.by_device) {
    c.device_bytes[d.device] += p.exited ? 0 : static_cast<double>(d.outstanding_bytes);
  }
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
  for (const auto& [device, bytes] : from.device_bytes) {
    into->device_bytes[device] += with_gauge ? bytes : 0;  // The series stays, at 0.
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
    for (const auto& [device, bytes] : c.device_bytes) {
      Labels l = labels;
      l.emplace_back("device", std::to_string(device));
      SortLabels(&l);
      out.Add(kCudaDeviceMemory, bytes, std::move(l));
    }
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
