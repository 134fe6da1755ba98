// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_meminfo_collector.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "base/logging.h"
#include "base/strings.h"
#include "collectors/collector_context.h"
#include "collectors/proc_parse.h"

namespace vigil {
namespace {

constexpr MetricDesc kMemTotal{"vigil_host_memory_total_bytes", "Usable physical memory.",
                               MetricKind::kGauge, "bytes"};
constexpr MetricDesc kMemFree{"vigil_host_memory_free_bytes", "Memory not used at all.",
                              MetricKind::kGauge, "bytes"};
constexpr MetricDesc kMemAvailable{
    "vigil_host_memory_available_bytes",
    "Memory available for new work without swapping (estimated on kernels before 3.14).",
    MetricKind::kGauge, "bytes"};
constexpr MetricDesc kMemUsed{"vigil_host_memory_used_bytes",
                              "Total minus free, buffers, page cache and reclaimable slab.",
                              MetricKind::kGauge, "bytes"};
constexpr MetricDesc kBuffers{"vigil_host_memory_buffers_bytes", "Memory in block device buffers.",
                              MetricKind::kGauge, "bytes"};
constexpr MetricDesc kCached{"vigil_host_memory_cached_bytes", "Memory in the page cache.",
                             MetricKind::kGauge, "bytes"};
constexpr MetricDesc kDirty{"vigil_host_memory_dirty_bytes",
                            "Memory waiting to be written back to disk.", MetricKind::kGauge,
                            "bytes"};
constexpr MetricDesc kWriteback{"vigil_host_memory_writeback_bytes",
                                "Memory being written back to disk.", MetricKind::kGauge, "bytes"};
constexpr MetricDesc kShmem{"vigil_host_memory_shmem_bytes", "Shared memory and tmpfs pages.",
                            MetricKind::kGauge, "bytes"};
constexpr MetricDesc kSwapTotal{"vigil_host_swap_total_bytes", "Swap space configured.",
                                MetricKind::kGauge, "bytes"};
constexpr MetricDesc kSwapFree{"vigil_host_swap_free_bytes", "Swap space unused.",
                               MetricKind::kGauge, "bytes"};
constexpr MetricDesc kHugePages{"vigil_host_hugepages", "Huge pages in the default-size pool.",
                                MetricKind::kGauge, ""};
constexpr MetricDesc kHugePagesFree{"vigil_host_hugepages_free",
                                    "Huge pages in the default-size pool not allocated.",
                                    MetricKind::kGauge, ""};
constexpr MetricDesc kHugePageSize{"vigil_host_hugepage_size_bytes", "Size of a default huge page.",
                                   MetricKind::kGauge, "bytes"};
constexpr MetricDesc kNumaTotal{"vigil_host_numa_memory_total_bytes",
                                "Physical memory of a NUMA node.", MetricKind::kGauge, "bytes"};
constexpr MetricDesc kNumaFree{"vigil_host_numa_memory_free_bytes", "Free memory of a NUMA node.",
                               MetricKind::kGauge, "bytes"};
constexpr MetricDesc kNumaUsed{"vigil_host_numa_memory_used_bytes",
                               "Used memory of a NUMA node (total minus free).", MetricKind::kGauge,
                               "bytes"};

constexpr MetricDesc kOtherField{
    "vigil_host_meminfo_bytes",
    "Every other /proc/meminfo field given in kB (field is the kernel's name, Active(anon) as "
    "Active_anon).",
    MetricKind::kGauge, "bytes"};
constexpr MetricDesc kHugePagesReserved{"vigil_host_hugepages_reserved",
                                        "Huge pages promised to mappings but not yet faulted in.",
                                        MetricKind::kGauge, ""};
constexpr MetricDesc kHugePagesSurplus{"vigil_host_hugepages_surplus",
                                       "Huge pages allocated beyond the pool's configured size.",
                                       MetricKind::kGauge, ""};

constexpr const MetricDesc* kMetrics[] = {&kMemTotal,
                                          &kMemFree,
                                          &kMemAvailable,
                                          &kMemUsed,
                                          &kBuffers,
                                          &kCached,
                                          &kDirty,
                                          &kWriteback,
                                          &kShmem,
                                          &kSwapTotal,
                                          &kSwapFree,
                                          &kHugePages,
                                          &kHugePagesFree,
                                          &kHugePageSize,
                                          &kNumaTotal,
                                          &kNumaFree,
                                          &kNumaUsed,
                                          &kOtherField,
                                          &kHugePagesReserved,
                                          &kHugePagesSurplus};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcMeminfoCollector>(context.paths);
}

using Meminfo = ProcMeminfoCollector::Meminfo;

std::optional<uint64_t>* FieldFor(Meminfo* m, std::string_view key) {
  struct Entry {
    std::string_view key;
    std::optional<uint64_t> Meminfo::*field;
  };
  static constexpr Entry kFields[] = {
      {"MemTotal", &Meminfo::mem_total},
      {"MemFree", &Meminfo::mem_free},
      {"MemAvailable", &Meminfo::mem_available},
      {"MemUsed", &Meminfo::mem_used},
      {"Buffers", &Meminfo::buffers},
      {"Cached", &Meminfo::cached},
      {"SReclaimable", &Meminfo::sreclaimable},
      {"SwapTotal", &Meminfo::swap_total},
      {"SwapFree", &Meminfo::swap_free},
      {"Dirty", &Meminfo::dirty},
      {"Writeback", &Meminfo::writeback},
      {"Shmem", &Meminfo::shmem},
      {"HugePages_Total", &Meminfo::hugepages_total},
      {"HugePages_Free", &Meminfo::hugepages_free},
      {"Hugepagesize", &Meminfo::hugepage_size},
  };
  for (const Entry& e : kFields) {
    if (e.key == key) {
      return &(m->*e.field);
    }
  }
  return nullptr;
}

// Parses "Key: value [kB]" lines; `skip_fields` leading fields ("Node", "0") are ignored.
StatusOr<Meminfo> ParseLines(std::string_view text, int skip_fields, std::string_view what) {
  Meminfo m;
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view key;
    for (int i = 0; i < skip_fields; ++i) {
      NextField(&line, &key);
    }
    if (!NextField(&line, &key)) {
      continue;
    }
    if (!key.ends_with(':')) {
      return DataLossError(std::string(what) + ": line without ':' near '" +
                           SanitizeForLog(key, 40) + "'");
    }
    key.remove_suffix(1);
    std::optional<uint64_t>* field = FieldFor(&m, key);
    if (field == nullptr) {
      continue;
    }
    std::string_view value;
    std::string_view unit;
    if (!NextField(&line, &value)) {
      return DataLossError(std::string(what) + ": no value for " + std::string(key));
    }
    VIGIL_ASSIGN_OR_RETURN(uint64_t v, ParseCounterField(value, what));
    if (NextField(&line, &unit)) {
      if (unit != "kB") {
        return DataLossError(std::string(what) + ": unknown unit '" + SanitizeForLog(unit, 40) +
                             "'");
      }
      v *= 1024;
    }
    *field = v;
  }
  if (!m.mem_total || !m.mem_free) {
    return DataLossError(std::string(what) + ": MemTotal or MemFree missing");
  }
  return m;
}

// Writes the fields not exported under a name of their own (node_exporter exports them all).
Status AddOtherFields(std::string_view text, MetricWriter& out) {
  Status result;
  Meminfo unused;
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view key, value, unit;
    if (!NextField(&line, &key) || !key.ends_with(':') || !NextField(&line, &value)) {
      continue;
    }
    key.remove_suffix(1);
    // SReclaimable is read only to compute used memory: it has no family of its own.
    if (FieldFor(&unused, key) != nullptr && key != "SReclaimable") {
      continue;
    }
    StatusOr<uint64_t> v = ParseCounterField(value, "meminfo");
    if (!v.ok()) {
      result = v.status();
      continue;
    }
    if (NextField(&line, &unit) && unit == "kB") {
      std::string field;
      for (char c : key) {
        if (c == '(') {
          field.push_back('_');
        } else if (c != ')') {
          field.push_back(c);
        }
      }
      out.Add(kOtherField, static_cast<double>(*v) * 1024, {{"field", SanitizeForLog(field, 64)}});
    } else if (key == "HugePages_Rsvd") {
      out.Add(kHugePagesReserved, static_cast<double>(*v));
    } else if (key == "HugePages_Surp") {
      out.Add(kHugePagesSurplus, static_cast<double>(*v));
    }
  }
  return result;
}

}  // namespace

const CollectorInfo ProcMeminfoCollector::kInfo = {
    .name = "proc_meminfo",
    .help = "Memory, swap and huge pages from /proc/meminfo; per-NUMA-node memory from sysfs.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

std::optional<uint64_t> Meminfo::Used() const {
  if (mem_used) {
    return mem_used;
  }
  if (!mem_total || !mem_free || !buffers || !cached) {
    return std::nullopt;
  }
  const uint64_t unused = *mem_free + *buffers + *cached + sreclaimable.value_or(0);
  // Cached can exceed what is left when shmem is large; free(1) then falls back to total-free.
  return unused <= *mem_total ? *mem_total - unused : *mem_total - *mem_free;
}

ProcMeminfoCollector::ProcMeminfoCollector(HostPaths paths) : paths_(std::move(paths)) {}

StatusOr<Meminfo> ProcMeminfoCollector::Parse(std::string_view text) {
  VIGIL_ASSIGN_OR_RETURN(Meminfo m, ParseLines(text, 0, "meminfo"));
  if (!m.mem_available && m.buffers && m.cached) {
    m.mem_available = *m.mem_free + *m.buffers + *m.cached;
    m.available_estimated = true;
  }
  return m;
}

StatusOr<Meminfo> ProcMeminfoCollector::ParseNode(std::string_view text) {
  VIGIL_ASSIGN_OR_RETURN(Meminfo m, ParseLines(text, 2, "node meminfo"));
  if (!m.mem_used) {
    m.mem_used = *m.mem_total >= *m.mem_free ? *m.mem_total - *m.mem_free : 0;
  }
  return m;
}

Status ProcMeminfoCollector::Collect(MetricWriter& out) {
  const std::string path = paths_.Proc("meminfo");
  VIGIL_RETURN_IF_ERROR(files_.ReadInto(path, &buf_));
  StatusOr<Meminfo> parsed = Parse(buf_);
  if (!parsed.ok()) {
    return parsed.status().WithContext(path);
  }
  const Meminfo& m = *parsed;
  if (m.available_estimated && !logged_estimate_) {
    VIGIL_LOG_DEBUG(
        "meminfo has no MemAvailable (kernel before 3.14): estimating it as "
        "MemFree+Buffers+Cached path={}",
        path);
    logged_estimate_ = true;
  }
  const std::pair<const MetricDesc*, std::optional<uint64_t>> values[] = {
      {&kMemTotal, m.mem_total},
      {&kMemFree, m.mem_free},
      {&kMemAvailable, m.mem_available},
      {&kMemUsed, m.Used()},
      {&kBuffers, m.buffers},
      {&kCached, m.cached},
      {&kDirty, m.dirty},
      {&kWriteback, m.writeback},
      {&kShmem, m.shmem},
      {&kSwapTotal, m.swap_total},
      {&kSwapFree, m.swap_free},
      {&kHugePages, m.hugepages_total},
      {&kHugePagesFree, m.hugepages_free},
      {&kHugePageSize, m.hugepage_size},
  };
  for (const auto& [desc, value] : values) {
    if (value) {
      out.Add(*desc, static_cast<double>(*value));
    }
  }
  Status others = AddOtherFields(buf_, out);
  Status numa = CollectNuma(out);
  return others.ok() ? numa : others.WithContext(path);
}

Status ProcMeminfoCollector::CollectNuma(MetricWriter& out) {
  const std::string dir = paths_.Sys("devices/system/node");
  StatusOr<std::vector<std::string>> names = ListDir(dir);
  if (!names.ok()) {
    return OkStatus();  // Not a NUMA-aware kernel (or no sysfs): no per-node samples.
  }
  std::vector<std::pair<uint64_t, std::string>> nodes;
  for (const std::string& name : *names) {
    if (!name.starts_with("node")) {
      continue;
    }
    if (std::optional<uint64_t> id = ParseUint64(std::string_view(name).substr(4))) {
      nodes.emplace_back(*id, name);
    }
  }
  std::sort(nodes.begin(), nodes.end());
  Status first_error;
  for (const auto& [id, name] : nodes) {
    const std::string path = JoinPath(dir, name + "/meminfo");
    Status read = files_.ReadInto(path, &buf_);
    StatusOr<Meminfo> node = read.ok() ? ParseNode(buf_) : StatusOr<Meminfo>(read);
    if (!node.ok()) {
      if (first_error.ok()) {
        first_error = read.ok() ? node.status().WithContext(path) : read;
      }
      continue;
    }
    Labels labels = {{"numa_node", std::to_string(id)}};
    out.Add(kNumaTotal, static_cast<double>(*node->mem_total), labels);
    out.Add(kNumaFree, static_cast<double>(*node->mem_free), labels);
    out.Add(kNumaUsed, static_cast<double>(*node->mem_used), std::move(labels));
  }
  // A node whose file vanished is reported, but as a failure, never as "absent".
  if (!first_error.ok() && IsAbsent(first_error)) {
    return DataLossError(first_error.message());
  }
  return first_error;
}

}  // namespace vigil
