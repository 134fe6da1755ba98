// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_vmstat_collector.h"

#include <utility>

#include "collectors/collector_context.h"
#include "collectors/proc_parse.h"

namespace vigil {
namespace {

constexpr MetricDesc kPagedIn{"vigil_host_memory_paged_in_bytes_total",
                              "Bytes paged in from block devices (vmstat pgpgin).",
                              MetricKind::kCounter, "bytes"};
constexpr MetricDesc kPagedOut{"vigil_host_memory_paged_out_bytes_total",
                               "Bytes paged out to block devices (vmstat pgpgout).",
                               MetricKind::kCounter, "bytes"};
constexpr MetricDesc kSwapIn{"vigil_host_swap_in_bytes_total",
                             "Bytes swapped in from swap space (vmstat pswpin).",
                             MetricKind::kCounter, "bytes"};
constexpr MetricDesc kSwapOut{"vigil_host_swap_out_bytes_total",
                              "Bytes swapped out to swap space (vmstat pswpout).",
                              MetricKind::kCounter, "bytes"};
constexpr MetricDesc kPageFaults{"vigil_host_memory_page_faults_total",
                                 "Page faults, minor and major (vmstat pgfault).",
                                 MetricKind::kCounter, ""};
constexpr MetricDesc kMajorFaults{"vigil_host_memory_major_page_faults_total",
                                  "Page faults that needed a read from disk (vmstat pgmajfault).",
                                  MetricKind::kCounter, ""};
constexpr MetricDesc kOomKills{"vigil_host_oom_kills_total",
                               "Processes killed by the out-of-memory killer (vmstat oom_kill).",
                               MetricKind::kCounter, ""};

constexpr const MetricDesc* kMetrics[] = {&kPagedIn,    &kPagedOut,    &kSwapIn,  &kSwapOut,
                                          &kPageFaults, &kMajorFaults, &kOomKills};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcVmstatCollector>(context.paths);
}

}  // namespace

const CollectorInfo ProcVmstatCollector::kInfo = {
    .name = "proc_vmstat",
    .help = "Paging, swapping, page faults and OOM kills from /proc/vmstat.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

ProcVmstatCollector::ProcVmstatCollector(HostPaths paths, double page_size)
    : paths_(std::move(paths)), page_size_(page_size > 0 ? page_size : HostPageSize()) {}

StatusOr<ProcVmstatCollector::Vmstat> ProcVmstatCollector::Parse(std::string_view text) {
  Vmstat v;
  VIGIL_RETURN_IF_ERROR(ParseNamedCounters(text, kFields, v.values, &v.found, "vmstat"));
  return v;
}

Status ProcVmstatCollector::Collect(MetricWriter& out) {
  const std::string path = paths_.Proc("vmstat");
  VIGIL_RETURN_IF_ERROR(files_.ReadInto(path, &buf_));
  StatusOr<Vmstat> parsed = Parse(buf_);
  if (!parsed.ok()) {
    return parsed.status().WithContext(path);
  }
  // pgpgin/pgpgout count KiB whatever the page size (mm/vmstat.c all_vm_events: /= 2 of sectors);
  // pswpin/pswpout count pages.
  const double scale[] = {1024, 1024, page_size_, page_size_, 1, 1, 1};
  for (size_t i = 0; i < kFields.size(); ++i) {
    if (parsed->found & (uint64_t{1} << i)) {
      out.Add(*kMetrics[i], static_cast<double>(parsed->values[i]) * scale[i]);
    }
  }
  return OkStatus();
}

}  // namespace vigil
