// SPDX-License-Identifier: Apache-2.0
#include "collectors/bpf/bpf_cuda_collector.h"

#include "collectors/job_labels.h"
#include "snoop/snoop_session.h"

namespace vigil {
namespace {

constexpr const MetricDesc* kMetrics[] = {&kCudaLaunches, &kCudaSyncSeconds, &kCudaDeviceMemory,
                                          &kCudaCopyBytes};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<BpfCudaCollector>(context);
}

}  // namespace

const CollectorInfo BpfCudaCollector::kInfo = {
    .name = "bpf_cuda",
    .help =
        "CUDA launches, sync time, device memory and copies of every CUDA process (eBPF "
        "uprobes; root).",
    .enabled_by_default = false,
    .metrics = kMetrics,
    .create = &Create,
};

BpfCudaCollector::BpfCudaCollector(const CollectorContext& context)
    : context_(context),
      totals_([this](int pid, const std::string& comm) { return LabelsOf(pid, comm); }) {}

BpfCudaCollector::~BpfCudaCollector() = default;

Labels BpfCudaCollector::LabelsOf(int pid, const std::string& comm) {
  Labels labels = {{"comm", comm}};
  if (context_.resolver) {
    if (StatusOr<JobInfo> job = context_.resolver->Resolve(pid); job.ok()) {
      AppendJobLabels(*job, &labels);
    }
  }
  SortLabels(&labels);
  return labels;
}

Status BpfCudaCollector::Collect(MetricWriter& out) {
  if (!session_) {
    VIGIL_RETURN_IF_ERROR(snoop::CheckSnoopPrivileges());
    snoop::SnoopOptions options;
    options.follow_new_processes = true;
    options.python_frames = false;  // Only counters are exported: no stacks, no Python walk.
    options.proc_root = context_.paths.proc_root;
    StatusOr<std::unique_ptr<snoop::SnoopSession>> started = snoop::SnoopSession::Start(options);
    if (!started.ok()) {
      return started.status();
    }
    session_ = std::move(*started);
  }
  // Attaches to processes that appeared since the last tick and reads the maps.
  VIGIL_RETURN_IF_ERROR(session_->Poll(std::chrono::milliseconds(0)));
  const snoop::SessionSummary summary = session_->Snapshot();
  totals_.Update(summary);
  totals_.Write(out);
  if (totals_.groups() == 0 && session_->TracedPids().empty()) {
    return NotFoundError("no process maps libcudart or libcuda");
  }
  return OkStatus();
}

}  // namespace vigil
