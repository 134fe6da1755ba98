// SPDX-License-Identifier: Apache-2.0
#include "collectors/sys_numa_collector.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "collectors/collector_context.h"
#include "collectors/proc_parse.h"

namespace vigil {
namespace {

constexpr MetricDesc kNodeMemory{
    "vigil_host_numa_node_memory_bytes",
    "A NUMA node's meminfo field (field is the kernel's name, Active(anon) as Active_anon).",
    MetricKind::kGauge, "bytes"};
constexpr MetricDesc kNodeHugepages{
    "vigil_host_numa_node_hugepages",
    "A NUMA node's huge page counts (field HugePages_Total, HugePages_Free, HugePages_Surp).",
    MetricKind::kGauge, ""};
constexpr MetricDesc kNodeAllocations{
    "vigil_host_numa_node_allocations_total",
    "Pages allocated on a NUMA node by outcome (numastat; field is the kernel's name).",
    MetricKind::kCounter, ""};

constexpr const MetricDesc* kMetrics[] = {&kNodeMemory, &kNodeHugepages, &kNodeAllocations};

constexpr size_t kMaxNodes = 1024;

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<SysNumaCollector>(context.paths);
}

// "Active(anon)" -> "Active_anon" (node_exporter's spelling).
std::string FieldName(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '(') {
      out.push_back('_');
    } else if (c != ')') {
      out.push_back(c);
    }
  }
  return SanitizeForLog(out, 64);
}

}  // namespace

const CollectorInfo SysNumaCollector::kInfo = {
    .name = "sys_numa",
    .help = "Every per-NUMA-node meminfo field and numastat counter from /sys.",
    .enabled_by_default = false,
    .metrics = kMetrics,
    .create = &Create,
};

SysNumaCollector::SysNumaCollector(HostPaths paths) : paths_(std::move(paths)) {}

Status SysNumaCollector::ParseMeminfo(std::string_view text, const std::string& node,
                                      MetricWriter& out) {
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view node_word, number, name, value, unit;
    if (!NextField(&line, &node_word)) {
      continue;
    }
    if (node_word != "Node" || !NextField(&line, &number) || !NextField(&line, &name) ||
        !name.ends_with(':') || !NextField(&line, &value)) {
      return DataLossError("node meminfo: line is not 'Node N Field: value [kB]'");
    }
    name.remove_suffix(1);
    VIGIL_ASSIGN_OR_RETURN(uint64_t v, ParseCounterField(value, "node meminfo"));
    const bool kib = NextField(&line, &unit) && unit == "kB";
    out.Add(kib ? kNodeMemory : kNodeHugepages, static_cast<double>(v) * (kib ? 1024 : 1),
            {{"field", FieldName(name)}, {"numa_node", node}});
  }
  return OkStatus();
}

Status SysNumaCollector::ParseNumastat(std::string_view text, const std::string& node,
                                       MetricWriter& out) {
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view name, value;
    if (!NextField(&line, &name)) {
      continue;
    }
    if (!NextField(&line, &value)) {
      return DataLossError("numastat: no value for " + SanitizeForLog(name, 40));
    }
    VIGIL_ASSIGN_OR_RETURN(uint64_t v, ParseCounterField(value, "numastat"));
    out.Add(kNodeAllocations, static_cast<double>(v),
            {{"field", SanitizeForLog(name, 64)}, {"numa_node", node}});
  }
  return OkStatus();
}

Status SysNumaCollector::Collect(MetricWriter& out) {
  const std::string dir = paths_.Sys("devices/system/node");
  StatusOr<std::vector<std::string>> entries = ListDir(dir);
  if (!entries.ok()) {
    return entries.status().WithContext("no NUMA node directory");
  }
  std::vector<std::string> nodes;
  for (const std::string& e : *entries) {
    if (e.size() > 4 && e.starts_with("node") && ParseUint64(e.substr(4)) &&
        nodes.size() < kMaxNodes) {
      nodes.push_back(e.substr(4));
    }
  }
  if (nodes.empty()) {
    return NotFoundError(dir + ": no node* directories (no NUMA support)");
  }
  std::sort(nodes.begin(), nodes.end());
  Status result;
  for (const std::string& node : nodes) {
    const std::string base = JoinPath(dir, "node" + node);
    for (const char* file : {"meminfo", "numastat"}) {
      const std::string path = JoinPath(base, file);
      Status s = files_.ReadInto(path, &buf_);
      if (s.ok()) {
        s = std::string_view(file) == "meminfo" ? ParseMeminfo(buf_, node, out)
                                                : ParseNumastat(buf_, node, out);
        s = s.ok() ? s : s.WithContext(path);
      } else if (s.code() == StatusCode::kNotFound) {
        continue;  // Older kernels or memoryless nodes lack a file: that node's part is missing.
      }
      if (!s.ok() && result.ok()) {
        result = s;  // Keep the other nodes; report the first failure.
      }
    }
  }
  return result;
}

}  // namespace vigil
