// SPDX-License-Identifier: Apache-2.0
#include "collectors/gpu_collector.h"

#include <set>
#include <utility>

#include "base/time_util.h"
#include "collectors/gpu_metrics.h"
#include "gpu/flops.h"
#include "hwspec/gpu_specs.h"

namespace vigil {
namespace {

namespace m = gpu_metrics;

constexpr std::pair<uint64_t, const char*> kClockReasons[] = {{0x1, "gpu_idle"},
                                                              {0x2, "applications_clocks_setting"},
                                                              {0x4, "sw_power_cap"},
                                                              {0x8, "hw_slowdown"},
                                                              {0x10, "sync_boost"},
                                                              {0x20, "sw_thermal_slowdown"},
                                                              {0x40, "hw_thermal_slowdown"},
                                                              {0x80, "hw_power_brake_slowdown"},
                                                              {0x100, "display_clock_setting"}};

Labels With(Labels base, std::initializer_list<std::pair<std::string, std::string>> extra) {
  for (const auto& kv : extra) base.push_back(kv);
  return base;
}

// A pod's GPU series carry its namespace, pod and container beside job_id (only when known, so
// hosts without Kubernetes keep their label sets).
void AddK8sLabels(const JobLabels& job, Labels* labels) {
  if (!job.k8s_namespace.empty()) labels->emplace_back("k8s_namespace", job.k8s_namespace);
  if (!job.k8s_pod.empty()) labels->emplace_back("k8s_pod", job.k8s_pod);
  if (!job.k8s_container.empty()) labels->emplace_back("k8s_container", job.k8s_container);
}

void AddIf(MetricWriter& out, const MetricDesc& desc, const std::optional<double>& v,
           const Labels& labels) {
  if (v) out.Add(desc, *v, labels);
}

}  // namespace

GpuCollector::GpuCollector(GpuCollectorConfig config) : config_(std::move(config)) {
  if (!config_.monotonic_ns) config_.monotonic_ns = [] { return MonotonicNanos(); };
  if (!config_.unix_ns) config_.unix_ns = [] { return UnixNanos(); };
}

Status GpuCollector::EnsureBackend() {
  if (backend_) return OkStatus();
  const int64_t now = config_.monotonic_ns();
  if (next_init_ns_ != 0 && now < next_init_ns_) return init_status_;
  next_init_ns_ = now + config_.retry_init_ns;
  auto backend =
      config_.make_backend
          ? config_.make_backend()
          : StatusOr<std::unique_ptr<GpuBackend>>(NotFoundError("no GPU backend configured"));
  if (!backend.ok()) {
    init_status_ = backend.status();
    return init_status_;
  }
  backend_ = std::move(backend).value();
  init_status_ = OkStatus();
  return OkStatus();
}

std::string GpuCollector::Describe() const {
  if (backend_) return backend_->Describe();
  return init_status_.ok() ? "not started" : init_status_.ToString();
}

JobLabels GpuCollector::ResolveJob(const GpuReading& r, size_t i) {
  if (i < r.simulated_jobs.size()) return r.simulated_jobs[i];
  JobLabels labels;
  if (!config_.resolve && !config_.resolve_on_device) {
    labels.rule = "unresolved";
    return labels;
  }
  const int pid = r.processes[i].pid;
  StatusOr<JobInfo> info = config_.resolve_on_device
                               ? config_.resolve_on_device(pid, {r.uuid, std::to_string(r.index)})
                               : config_.resolve(pid);
  if (!info.ok()) {
    labels.rule = "unresolved";
    return labels;
  }
  labels.job_id = info->job_id;
  labels.user = info->user;
  labels.team = info->team;
  labels.model = info->model;
  labels.framework = info->framework;
  labels.rule = info->rule.empty() ? "none" : info->rule;
  labels.k8s_namespace = info->k8s_namespace;
  labels.k8s_pod = info->k8s_pod;
  labels.k8s_container = info->k8s_container;
  return labels;
}

Status GpuCollector::Collect(MetricWriter& out) {
  VIGIL_RETURN_IF_ERROR(EnsureBackend());
  if (Status s = backend_->Read(&readings_); !s.ok()) {
    backend_.reset();  // Re-created on a later tick.
    init_status_ = s;
    return s;
  }
  const bool simulated = backend_->simulated();
  const int64_t mono = config_.monotonic_ns();
  const int64_t unix_now = config_.unix_ns();
  out.Add(m::kBackendInfo, 1,
          {{"backend", std::string(backend_->name())},
           {"simulated", simulated ? "true" : "false"},
           {"flops_estimate", backend_->measures_pipes() ? "pipe_activity" : "unavailable"}});

  std::vector<GpuAccountingInput> accounting;
  std::string down;
  for (const GpuReading& r : readings_) {
    const GpuSpec* spec = FindGpuSpec(r.name);
    Labels base = {{"gpu_uuid", r.uuid},
                   {"gpu_index", std::to_string(r.index)},
                   {"gpu_model", spec ? std::string(spec->model) : r.name}};
    if (simulated) base.emplace_back("simulated", "true");
    gpu_labels_[r.uuid] = base;
    out.Add(m::kInfo, 1,
            With(base, {{"name", r.name},
                        {"pci_bus_id", r.pci_bus_id},
                        {"backend", std::string(backend_->name())}}));
    out.Add(m::kUp, r.up ? 1 : 0, base);
    GpuAccountingInput acc;
    acc.uuid = r.uuid;
    if (!r.up) {
      down += (down.empty() ? "" : "; ") + std::string("gpu ") + std::to_string(r.index) + " (" +
              r.uuid + "): " + r.status;
      accounting.push_back(std::move(acc));
      continue;
    }
    EmitDevice(r, base, out);
    EmitEfficiency(r, base, out);

    acc.processes_known = r.processes_known;
    acc.activity = r.activity.sm_active ? r.activity.sm_active : r.utilization_ratio;
    acc.energy_counter_j = r.energy_joules;
    acc.power_w = r.power_watts;
    std::set<JobLabels> jobs;
    for (size_t i = 0; i < r.processes.size(); ++i) {
      const GpuProcess& p = r.processes[i];
      JobLabels job = ResolveJob(r, i);
      if (config_.watch_list && !simulated) config_.watch_list->Watch(p.pid, "gpu", unix_now);
      Labels process = With(base, {{"pid", std::to_string(p.pid)}, {"job_id", job.job_id}});
      AddK8sLabels(job, &process);
      out.Add(m::kProcessMemory, static_cast<double>(p.used_memory_bytes), process);
      if (p.sm_ratio) out.Add(m::kProcessSm, *p.sm_ratio, process);
      jobs.insert(std::move(job));
    }
    acc.jobs.assign(jobs.begin(), jobs.end());
    accounting.push_back(std::move(acc));
  }

  accountant_.Update(mono, accounting);
  for (const auto& [uuid, joules] : accountant_.gpu_energy_j()) {
    out.Add(m::kEnergy, joules, gpu_labels_[uuid]);
  }
  for (const auto& [key, usage] : accountant_.jobs()) {
    const auto& [uuid, job] = key;
    Labels labels = {{"gpu_uuid", uuid}, {"job_id", job.job_id}, {"user", job.user},
                     {"team", job.team}, {"model", job.model},   {"framework", job.framework},
                     {"rule", job.rule}};
    AddK8sLabels(job, &labels);
    if (simulated) labels.emplace_back("simulated", "true");
    out.Add(m::kAllocated, usage.allocated_s(), labels);
    out.Add(m::kBusy, usage.busy_s, labels);
    out.Add(m::kHeldIdle, usage.held_idle_s, labels);
    out.Add(m::kJobEnergy, usage.energy_j, labels);
  }
  if (!down.empty()) return UnavailableError(down);
  return OkStatus();
}

void GpuCollector::EmitDevice(const GpuReading& r, const Labels& base, MetricWriter& out) {
  AddIf(out, m::kUtil, r.utilization_ratio, base);
  AddIf(out, m::kMemUtil, r.memory_utilization_ratio, base);
  AddIf(out, m::kMemUsed, r.memory_used_bytes, base);
  AddIf(out, m::kMemFree, r.memory_free_bytes, base);
  AddIf(out, m::kMemTotal, r.memory_total_bytes, base);
  AddIf(out, m::kMemReserved, r.memory_reserved_bytes, base);
  AddIf(out, m::kPower, r.power_watts, base);
  AddIf(out, m::kTemp, r.temperature_celsius, With(base, {{"sensor", "gpu"}}));
  AddIf(out, m::kTemp, r.memory_temperature_celsius, With(base, {{"sensor", "memory"}}));
  AddIf(out, m::kSmClock, r.sm_clock_hz, base);
  AddIf(out, m::kMemClock, r.memory_clock_hz, base);
  if (r.clock_event_reasons) {
    for (const auto& [bit, reason] : kClockReasons) {
      out.Add(m::kClockReason, (*r.clock_event_reasons & bit) ? 1 : 0,
              With(base, {{"reason", reason}}));
    }
  }
  AddIf(out, m::kPcieTx, r.pcie_tx_bytes_per_second, base);
  AddIf(out, m::kPcieRx, r.pcie_rx_bytes_per_second, base);
  AddIf(out, m::kNvLinkTxRate, r.nvlink_tx_bytes_per_second, base);
  AddIf(out, m::kNvLinkRxRate, r.nvlink_rx_bytes_per_second, base);
  for (const NvLinkReading& link : r.nvlinks) {
    Labels l = With(base, {{"link", std::to_string(link.link)}});
    out.Add(m::kNvLinkUp, link.active ? 1 : 0, l);
    AddIf(out, m::kNvLinkTx, link.tx_bytes_total, l);
    AddIf(out, m::kNvLinkRx, link.rx_bytes_total, l);
  }
  AddIf(out, m::kEcc, r.ecc_corrected_total, With(base, {{"type", "corrected"}}));
  AddIf(out, m::kEcc, r.ecc_uncorrected_total, With(base, {{"type", "uncorrected"}}));
  AddIf(out, m::kRemapped, r.remapped_rows_correctable, With(base, {{"kind", "correctable"}}));
  AddIf(out, m::kRemapped, r.remapped_rows_uncorrectable, With(base, {{"kind", "uncorrectable"}}));
  if (r.row_remap_pending) out.Add(m::kRemapPending, *r.row_remap_pending ? 1 : 0, base);
  if (r.row_remap_failure) out.Add(m::kRemapFailure, *r.row_remap_failure ? 1 : 0, base);
  out.Add(m::kXid, r.xid_errors_total, base);
  if (r.last_xid) out.Add(m::kLastXid, *r.last_xid, base);
  if (r.mig_enabled) out.Add(m::kMigEnabled, *r.mig_enabled ? 1 : 0, base);
  for (const MigInstance& mig : r.mig_instances) {
    out.Add(m::kMigInstance, 1,
            With(base, {{"mig_uuid", mig.uuid},
                        {"gpu_instance_id", std::to_string(mig.gpu_instance_id)},
                        {"compute_instance_id", std::to_string(mig.compute_instance_id)}}));
  }
}

void GpuCollector::EmitEfficiency(const GpuReading& r, const Labels& base, MetricWriter& out) {
  const GpuActivity& a = r.activity;
  AddIf(out, m::kSmActive, a.sm_active, base);
  AddIf(out, m::kSmOccupancy, a.sm_occupancy, base);
  AddIf(out, m::kDramActive, a.dram_active, base);
  const std::pair<const std::optional<double>*, const char*> pipes[] = {
      {&a.tensor_active, "tensor"},    {&a.hmma_active, "fp16_tensor"},
      {&a.dfma_active, "fp64_tensor"}, {&a.imma_active, "int_tensor"},
      {&a.fp64_active, "fp64"},        {&a.fp32_active, "fp32"},
      {&a.fp16_active, "fp16"}};
  for (const auto& [value, pipe] : pipes)
    AddIf(out, m::kPipeActive, *value, With(base, {{"pipe", pipe}}));
  const GpuSpec* spec = FindGpuSpec(r.name);
  if (spec == nullptr) return;
  out.Add(m::kHbmPeak, spec->memory_bandwidth_bytes_per_s, base);
  if (a.dram_active)
    out.Add(m::kHbmBandwidth, *a.dram_active * spec->memory_bandwidth_bytes_per_s, base);
  if (!backend_->measures_pipes()) return;
  if (auto est = EstimateFlops(*spec, a, r.sm_clock_hz)) {
    out.Add(m::kFlops, est->flops, base);
    out.Add(m::kFlopsPeak, est->dense_peak_flops, base);
    out.Add(m::kFlopsRatio, est->dense_peak_ratio, base);
  }
}

}  // namespace vigil
