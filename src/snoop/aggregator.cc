// SPDX-License-Identifier: Apache-2.0
#include "snoop/aggregator.h"

#include <algorithm>
#include <tuple>

#include "snoop/cuda_api_table.h"

namespace vigil::snoop {
namespace {

std::string ApiName(uint32_t api) {
  auto apis = CudaApis();
  return api < apis.size() ? std::string(apis[api].name) : "api#" + std::to_string(api);
}

int ClassOf(uint32_t api) {
  auto apis = CudaApis();
  return api < apis.size() ? static_cast<int>(apis[api].spec.klass)
                           : static_cast<int>(VS_CLASS_NONE);
}

void AddLaunches(const MapContents& c, NameResolver& names,
                 std::map<uint32_t, ProcessSummary>& out) {
  std::map<uint32_t, std::map<std::string, uint64_t>> by_name;
  for (const auto& [k, count] : c.launches) {
    ProcessSummary& p = out[k.pid];
    if (ClassOf(k.api) == VS_CLASS_GRAPH_LAUNCH) {
      p.graph_launches += count;
      continue;
    }
    p.launches_total += count;
    by_name[k.pid][names.KernelName(k.pid, k.api, k.func)] += count;
  }
  for (auto& [pid, names_counts] : by_name) {
    auto& v = out[pid].launches_by_kernel;
    for (auto& [name, count] : names_counts) v.push_back({name, count});
    std::stable_sort(v.begin(), v.end(),
                     [](const auto& a, const auto& b) { return a.count > b.count; });
  }
}

void AddSyncs(const MapContents& c, NameResolver& names, const AggregateOptions& o,
              std::map<uint32_t, ProcessSummary>& out) {
  std::map<std::pair<uint32_t, std::string>, ApiCalls> by_api;
  std::map<std::pair<uint32_t, std::string>, std::vector<uint64_t>> hist;
  for (const auto& [k, s] : c.syncs) {
    ProcessSummary& p = out[k.pid];
    p.syncs_count += s.count;
    p.syncs_seconds += static_cast<double>(s.ns) / 1e9;
    std::string api = ApiName(k.api);
    ApiCalls& a = by_api[{k.pid, api}];
    a.api = api;
    a.count += s.count;
    a.seconds += static_cast<double>(s.ns) / 1e9;
    auto& h = hist[{k.pid, api}];
    h.resize(VS_HIST_BUCKETS);
    for (int b = 0; b < VS_HIST_BUCKETS; ++b) h[b] += s.hist[b];
  }
  for (auto& [key, a] : by_api) {
    const auto& h = hist[key];
    for (int b = 0; b < VS_HIST_BUCKETS; ++b) {
      if (h[b]) a.histogram.push_back({uint64_t{1} << b, h[b]});
    }
    out[key.first].syncs_by_api.push_back(std::move(a));
  }
  for (auto& [pid, p] : out) {
    std::sort(p.syncs_by_api.begin(), p.syncs_by_api.end(),
              [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
  }
  // Stacks: one row per (api, stack), top by time.
  std::map<std::tuple<uint32_t, std::string, int64_t>, SyncStack> stacks;
  for (const auto& [k, cn] : c.sync_stacks) {
    std::string api = ApiName(k.api);
    SyncStack& s = stacks[{k.pid, api, k.stack_id}];
    s.api = api;
    s.count += cn.count;
    s.seconds += static_cast<double>(cn.ns) / 1e9;
  }
  std::map<uint32_t, std::vector<std::pair<int64_t, SyncStack>>> per_pid;
  for (auto& [key, s] : stacks) per_pid[std::get<0>(key)].emplace_back(std::get<2>(key), s);
  for (auto& [pid, v] : per_pid) {
    std::sort(v.begin(), v.end(),
              [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
    if (v.size() > o.max_stacks) v.resize(o.max_stacks);
    for (auto& [id, s] : v) {
      s.stack = names.Stack(pid, id);
      out[pid].syncs_by_stack.push_back(std::move(s));
    }
  }
}

MemoryView& ViewOf(ProcessSummary& p, uint32_t domain) {
  if (domain == VS_DOMAIN_FRAMEWORK) {
    p.has_framework_memory = true;
    return p.framework_memory;
  }
  return p.memory;
}

// The view's row for `device`, kept ascending.
DeviceMemory& DeviceOf(MemoryView& v, uint32_t device) {
  auto it = std::lower_bound(v.by_device.begin(), v.by_device.end(), static_cast<int>(device),
                             [](const DeviceMemory& d, int want) { return d.device < want; });
  if (it == v.by_device.end() || it->device != static_cast<int>(device)) {
    it = v.by_device.insert(it, DeviceMemory{});
    it->device = static_cast<int>(device);
  }
  return *it;
}

uint64_t NonNegative(int64_t v) { return static_cast<uint64_t>(std::max<int64_t>(v, 0)); }

void AddMemory(const MapContents& c, NameResolver& names, const AggregateOptions& o,
               std::map<uint32_t, ProcessSummary>& out) {
  // One entry per (pid, domain, device); a view's totals are the sums over its devices.
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint64_t>> hists;
  for (const auto& [k, m] : c.memory) {
    ProcessSummary& p = out[k.pid];
    if (k.domain == VS_DOMAIN_HOST) {
      p.memory.host_outstanding_bytes += NonNegative(m.current);
      p.memory.host_peak_bytes += NonNegative(m.peak);
      p.memory.mapped_bytes += NonNegative(m.mapped);
      continue;
    }
    MemoryView& v = ViewOf(p, k.domain);
    v.allocations += m.allocations;
    v.frees += m.frees;
    v.outstanding_bytes += NonNegative(m.current);
    v.peak_bytes += NonNegative(m.peak);
    v.mapped_bytes += NonNegative(m.mapped);
    if (m.allocations > 0 || m.frees > 0 || m.current != 0 || m.peak != 0) {
      DeviceMemory& d = DeviceOf(v, k.device);
      d.allocations += m.allocations;
      d.frees += m.frees;
      d.outstanding_bytes += NonNegative(m.current);
      d.peak_bytes += NonNegative(m.peak);
    }
    std::vector<uint64_t>& h = hists[{k.pid, k.domain}];
    h.resize(VS_HIST_BUCKETS);
    for (int b = 0; b < VS_HIST_BUCKETS; ++b) h[b] += m.hist[b];
  }
  for (const auto& [key, h] : hists) {
    MemoryView& v = ViewOf(out[key.first], key.second);
    for (int b = 0; b < VS_HIST_BUCKETS; ++b) {
      if (h[b]) v.size_histogram.push_back({uint64_t{1} << b, h[b]});
    }
  }
  // Leak candidates: outstanding allocations older than the leak age, by (domain, api, stack).
  struct Group {
    uint64_t bytes = 0;
    uint64_t count = 0;
  };
  std::map<std::tuple<uint32_t, uint32_t, std::string, int64_t>, Group> groups;
  for (const auto& [k, a] : c.outstanding) {
    if (k.domain == VS_DOMAIN_HOST) continue;
    if (o.now_ns < a.start_ns || o.now_ns - a.start_ns < o.leak_age_ns) continue;
    Group& g = groups[{k.pid, k.domain, ApiName(a.api), a.stack_id}];
    g.bytes += a.size;
    g.count += 1;
  }
  std::map<std::pair<uint32_t, uint32_t>, std::vector<std::pair<int64_t, LeakGroup>>> per_view;
  for (const auto& [key, g] : groups) {
    const auto& [pid, domain, api, stack_id] = key;
    per_view[{pid, domain}].emplace_back(stack_id, LeakGroup{g.bytes, g.count, api, {}});
  }
  for (auto& [key, v] : per_view) {
    std::sort(v.begin(), v.end(),
              [](const auto& a, const auto& b) { return a.second.bytes > b.second.bytes; });
    if (v.size() > o.max_stacks) v.resize(o.max_stacks);
    MemoryView& view = ViewOf(out[key.first], key.second);
    for (auto& [id, leak] : v) {
      leak.stack = names.Stack(key.first, id);
      view.leaks.push_back(std::move(leak));
    }
  }
}

void AddCopies(const MapContents& c, std::map<uint32_t, ProcessSummary>& out) {
  for (const auto& [k, s] : c.copies) {
    std::string kind(CopyKindName(k.kind));
    if (k.host_mem == VS_HOST_PINNED) kind += "_pinned";
    if (k.host_mem == VS_HOST_PAGEABLE) kind += "_pageable";
    out[k.pid].copies.push_back({kind, s.count, s.bytes});
  }
  for (auto& [pid, p] : out) {
    std::sort(p.copies.begin(), p.copies.end(),
              [](const auto& a, const auto& b) { return a.kind < b.kind; });
  }
}

}  // namespace

std::map<uint32_t, ProcessSummary> Aggregate(const MapContents& contents, NameResolver& names,
                                             const AggregateOptions& options) {
  std::map<uint32_t, ProcessSummary> out;
  AddLaunches(contents, names, out);
  AddSyncs(contents, names, options, out);
  AddMemory(contents, names, options, out);
  AddCopies(contents, out);
  for (auto& [pid, p] : out) p.pid = static_cast<int>(pid);
  return out;
}

}  // namespace vigil::snoop
