// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_sys_collector.h"

#include <utility>

#include "base/strings.h"
#include "collectors/collector_context.h"
#include "collectors/proc_parse.h"

namespace vigil {
namespace {

constexpr MetricDesc kFdAllocated{"vigil_host_file_descriptors_allocated",
                                  "File handles the kernel has allocated (fs/file-nr).",
                                  MetricKind::kGauge, ""};
constexpr MetricDesc kFdLimit{"vigil_host_file_descriptors_limit",
                              "Most file handles the kernel will allocate (fs/file-max).",
                              MetricKind::kGauge, ""};
// In bits, as the kernel counts them (a unit Prometheus does not list, hence no suffix).
constexpr MetricDesc kEntropy{"vigil_host_entropy_available",
                              "Entropy in the kernel's random pool, in bits.", MetricKind::kGauge,
                              ""};
constexpr MetricDesc kPoolSize{"vigil_host_entropy_pool_size",
                               "Size of the kernel's random pool, in bits.", MetricKind::kGauge,
                               ""};

constexpr const MetricDesc* kMetrics[] = {&kFdAllocated, &kFdLimit, &kEntropy, &kPoolSize};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcSysCollector>(context.paths);
}

}  // namespace

const CollectorInfo ProcSysCollector::kInfo = {
    .name = "proc_sys",
    .help = "File handles in use and their limit, and random pool entropy, from /proc/sys.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

ProcSysCollector::ProcSysCollector(HostPaths paths) : paths_(std::move(paths)) {}

Status ProcSysCollector::Collect(MetricWriter& out) {
  // "allocated  free  max"; free is always 0 since Linux 2.6.
  std::string path = paths_.Proc("sys/fs/file-nr");
  VIGIL_RETURN_IF_ERROR(files_.ReadInto(path, &buf_));
  std::string_view rest = Trim(buf_);
  std::string_view allocated;
  std::string_view unused;
  std::string_view max;
  if (!NextField(&rest, &allocated) || !NextField(&rest, &unused) || !NextField(&rest, &max)) {
    return DataLossError(path + ": want 3 fields");
  }
  StatusOr<uint64_t> a = ParseCounterField(allocated, "file-nr");
  StatusOr<uint64_t> m = ParseCounterField(max, "file-nr");
  if (!a.ok() || !m.ok()) {
    return (a.ok() ? m.status() : a.status()).WithContext(path);
  }
  out.Add(kFdAllocated, static_cast<double>(*a));
  out.Add(kFdLimit, static_cast<double>(*m));
  const std::pair<const MetricDesc*, const char*> random[] = {
      {&kEntropy, "sys/kernel/random/entropy_avail"}, {&kPoolSize, "sys/kernel/random/poolsize"}};
  for (const auto& [desc, rel] : random) {
    path = paths_.Proc(rel);
    Status read = files_.ReadInto(path, &buf_);
    if (!read.ok()) {
      return IsAbsent(read) ? DataLossError(read.message()) : read;  // Samples already written.
    }
    StatusOr<uint64_t> v = ParseCounterField(Trim(buf_), "random");
    if (!v.ok()) {
      return v.status().WithContext(path);
    }
    out.Add(*desc, static_cast<double>(*v));
  }
  return OkStatus();
}

}  // namespace vigil
