// SPDX-License-Identifier: Apache-2.0
// NvmlBackend's per-device reads beyond the basics: NVLink and field values, MIG instances, the
// running-process list (stride probed) and GPM profiling metrics. Split from nvml_backend.cc to
// keep each file short; same class, same sequence.
#include <algorithm>
#include <cstring>
#include <utility>

#include "gpu/nvml_backend.h"
#include "gpu/profiling_control.h"

namespace vigil {
namespace {

constexpr unsigned kUuidBuffer = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned kInitialProcessSlots = 64;

double FieldAsDouble(const nvml::FieldValue& v) {
  switch (v.valueType) {
    case nvml::kValueTypeDouble:
      return v.value.dVal;
    case nvml::kValueTypeUnsignedInt:
      return v.value.uiVal;
    case nvml::kValueTypeUnsignedLong:
      return static_cast<double>(v.value.ulVal);
    case nvml::kValueTypeUnsignedLongLong:
      return static_cast<double>(v.value.ullVal);
    case nvml::kValueTypeSignedLongLong:
      return static_cast<double>(v.value.sllVal);
    case nvml::kValueTypeSignedInt:
      return v.value.siVal;
    default:
      return static_cast<double>(v.value.ullVal);
  }
}

}  // namespace

void NvmlBackend::ReadNvLinkAndFields(Device& dev, GpuReading* r) {
  std::vector<nvml::FieldValue> fields;
  nvml::FieldValue mem_temp{};
  mem_temp.fieldId = nvml::kFiMemoryTemp;
  fields.push_back(mem_temp);
  if (api_.device_get_nvlink_state) {
    for (unsigned link = 0; link < nvml::kNvLinkMaxLinks; ++link) {
      unsigned active = 0;
      const nvml::Return rc = api_.device_get_nvlink_state(dev.handle, link, &active);
      if (rc == nvml::kErrorGpuIsLost) {
        Check(dev, r, rc, "nvmlDeviceGetNvLinkState");
        return;
      }
      if (rc != nvml::kSuccess) break;  // NOT_SUPPORTED / INVALID_ARGUMENT: no more links.
      r->nvlinks.push_back({link, active == nvml::kFeatureEnabled, std::nullopt, std::nullopt});
      for (unsigned id : {nvml::kFiNvLinkThroughputDataTx, nvml::kFiNvLinkThroughputDataRx}) {
        nvml::FieldValue f{};
        f.fieldId = id;
        f.scopeId = link;
        fields.push_back(f);
      }
    }
  }
  if (api_.device_get_field_values == nullptr) return;
  if (!Check(
          dev, r,
          api_.device_get_field_values(dev.handle, static_cast<int>(fields.size()), fields.data()),
          "nvmlDeviceGetFieldValues")) {
    return;
  }
  for (const nvml::FieldValue& f : fields) {
    if (f.nvmlReturn != nvml::kSuccess) continue;
    if (f.fieldId == nvml::kFiMemoryTemp) {
      r->memory_temperature_celsius = FieldAsDouble(f);
      continue;
    }
    for (NvLinkReading& link : r->nvlinks) {
      if (link.link != f.scopeId) continue;
      const double bytes = FieldAsDouble(f) * 1024.0;  // Counters are in KiB.
      if (f.fieldId == nvml::kFiNvLinkThroughputDataTx) link.tx_bytes_total = bytes;
      if (f.fieldId == nvml::kFiNvLinkThroughputDataRx) link.rx_bytes_total = bytes;
    }
  }
}

void NvmlBackend::ReadMig(Device& dev, GpuReading* r) {
  if (api_.device_get_mig_mode == nullptr) return;
  unsigned current = 0, pending = 0;
  if (!Check(dev, r, api_.device_get_mig_mode(dev.handle, &current, &pending),
             "nvmlDeviceGetMigMode")) {
    return;
  }
  r->mig_enabled = current == nvml::kFeatureEnabled;
  if (!*r->mig_enabled || !api_.device_get_max_mig_device_count ||
      !api_.device_get_mig_device_handle_by_index) {
    return;
  }
  unsigned max_count = 0;
  if (api_.device_get_max_mig_device_count(dev.handle, &max_count) != nvml::kSuccess) return;
  for (unsigned i = 0; i < max_count; ++i) {
    nvml::Device mig = nullptr;
    if (api_.device_get_mig_device_handle_by_index(dev.handle, i, &mig) != nvml::kSuccess) {
      continue;  // NOT_FOUND: slot not populated.
    }
    MigInstance inst;
    char buf[kUuidBuffer] = {};
    if (api_.device_get_uuid && api_.device_get_uuid(mig, buf, kUuidBuffer) == nvml::kSuccess) {
      inst.uuid = buf;
    }
    if (api_.device_get_gpu_instance_id)
      api_.device_get_gpu_instance_id(mig, &inst.gpu_instance_id);
    if (api_.device_get_compute_instance_id) {
      api_.device_get_compute_instance_id(mig, &inst.compute_instance_id);
    }
    r->mig_instances.push_back(std::move(inst));
  }
}

void NvmlBackend::ReadProcesses(Device& dev, GpuReading* r) {
  if (api_.device_get_compute_running_processes == nullptr) return;
  unsigned slots = kInitialProcessSlots;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<uint8_t> buffer(
        static_cast<size_t>(slots) * kMaxProcessInfoSize + kMaxProcessInfoSize,
        kProcessBufferSentinel);
    unsigned count = slots;
    const nvml::Return rc =
        api_.device_get_compute_running_processes(dev.handle, &count, buffer.data());
    if (rc == nvml::kErrorInsufficientSize) {
      slots = count + 16;
      continue;
    }
    if (!Check(dev, r, rc, "nvmlDeviceGetComputeRunningProcesses")) return;
    const auto stride = ProbeProcessStride(
        buffer, count, dev.process_stride != 0 ? dev.process_stride : api_.process_info_size);
    if (!stride) {
      r->status = "process list: entry size not recognised";
      return;
    }
    dev.process_stride = *stride;
    r->processes = DecodeProcesses(buffer, count, *stride);
    r->processes_known = true;
    return;
  }
}

// Per-process SM share: the newest sample of each process since the previous read. NVML leaves
// out processes with no activity in the period (all of them: NOT_FOUND), so a listed process
// without a sample had 0%.
void NvmlBackend::ReadProcessUtilization(Device& dev, GpuReading* r) {
  if (api_.device_get_process_utilization == nullptr || r->processes.empty()) return;
  std::vector<nvml::ProcessUtilizationSample> samples(r->processes.size() + 16);
  for (int attempt = 0; attempt < 3; ++attempt) {
    unsigned count = static_cast<unsigned>(samples.size());
    const nvml::Return rc = api_.device_get_process_utilization(dev.handle, samples.data(), &count,
                                                                dev.process_sample_us);
    if (rc == nvml::kErrorInsufficientSize) {
      samples.resize(static_cast<size_t>(count) + 16);
      continue;
    }
    if (rc == nvml::kErrorNotFound)
      count = 0;  // No process was active since the last read.
    else if (!Check(dev, r, rc, "nvmlDeviceGetProcessUtilization"))
      return;
    count = std::min(count, static_cast<unsigned>(samples.size()));
    for (GpuProcess& p : r->processes) {
      unsigned long long newest = 0;
      p.sm_ratio = 0.0;
      for (unsigned i = 0; i < count; ++i) {
        const nvml::ProcessUtilizationSample& s = samples[i];
        if (static_cast<int>(s.pid) == p.pid && s.time_stamp >= newest) {
          newest = s.time_stamp;
          p.sm_ratio = std::min(s.sm_util, 100u) / 100.0;
        }
      }
    }
    for (unsigned i = 0; i < count; ++i) {
      dev.process_sample_us = std::max(dev.process_sample_us, samples[i].time_stamp);
    }
    return;
  }
}

void NvmlBackend::ReadGpm(Device& dev, GpuReading* r) {
  if (!api_.gpm_query_device_support || !api_.gpm_sample_alloc || !api_.gpm_sample_get ||
      !api_.gpm_metrics_get) {
    return;
  }
  if (!dev.gpm_checked) {
    dev.gpm_checked = true;
    nvml::GpmSupport support{};
    support.version = nvml::kGpmSupportVersion;
    dev.gpm_supported = api_.gpm_query_device_support(dev.handle, &support) == nvml::kSuccess &&
                        support.isSupportedDevice != 0 &&
                        api_.gpm_sample_alloc(&dev.gpm_samples[0]) == nvml::kSuccess &&
                        api_.gpm_sample_alloc(&dev.gpm_samples[1]) == nvml::kSuccess;
  }
  if (!dev.gpm_supported) return;
  if (GpuProfilingPaused()) {
    dev.gpm_primed = false;
    return;
  }
  nvml::GpmSample cur = dev.gpm_samples[dev.gpm_current];
  if (!Check(dev, r, api_.gpm_sample_get(dev.handle, cur), "nvmlGpmSampleGet")) {
    dev.gpm_primed = false;
    return;
  }
  nvml::GpmSample prev = dev.gpm_samples[1 - dev.gpm_current];
  dev.gpm_current = 1 - dev.gpm_current;
  const bool primed = std::exchange(dev.gpm_primed, true);
  if (!primed) return;
  static constexpr unsigned kIds[] = {nvml::kGpmSmUtil,
                                      nvml::kGpmSmOccupancy,
                                      nvml::kGpmAnyTensorUtil,
                                      nvml::kGpmDfmaTensorUtil,
                                      nvml::kGpmHmmaTensorUtil,
                                      nvml::kGpmImmaTensorUtil,
                                      nvml::kGpmDramBwUtil,
                                      nvml::kGpmFp64Util,
                                      nvml::kGpmFp32Util,
                                      nvml::kGpmFp16Util,
                                      nvml::kGpmPcieTxPerSec,
                                      nvml::kGpmPcieRxPerSec,
                                      nvml::kGpmNvLinkTotalRxPerSec,
                                      nvml::kGpmNvLinkTotalTxPerSec};
  auto get = std::make_unique<nvml::GpmMetricsGet>();
  std::memset(get.get(), 0, sizeof *get);
  get->version = nvml::kGpmMetricsGetVersion;
  get->numMetrics = std::size(kIds);
  get->sample1 = prev;
  get->sample2 = cur;
  for (size_t i = 0; i < std::size(kIds); ++i) get->metrics[i].metricId = kIds[i];
  if (!Check(dev, r, api_.gpm_metrics_get(get.get()), "nvmlGpmMetricsGet")) return;
  GpuActivity& a = r->activity;
  for (size_t i = 0; i < std::size(kIds); ++i) {
    const nvml::GpmMetric& m = get->metrics[i];
    if (m.nvmlReturn != nvml::kSuccess) continue;
    const double pct = m.value / 100.0;
    const double mib = m.value * 1024.0 * 1024.0;
    switch (m.metricId) {
      case nvml::kGpmSmUtil:
        a.sm_active = pct;
        break;
      case nvml::kGpmSmOccupancy:
        a.sm_occupancy = pct;
        break;
      case nvml::kGpmAnyTensorUtil:
        a.tensor_active = pct;
        break;
      case nvml::kGpmDfmaTensorUtil:
        a.dfma_active = pct;
        break;
      case nvml::kGpmHmmaTensorUtil:
        a.hmma_active = pct;
        break;
      case nvml::kGpmImmaTensorUtil:
        a.imma_active = pct;
        break;
      case nvml::kGpmDramBwUtil:
        a.dram_active = pct;
        break;
      case nvml::kGpmFp64Util:
        a.fp64_active = pct;
        break;
      case nvml::kGpmFp32Util:
        a.fp32_active = pct;
        break;
      case nvml::kGpmFp16Util:
        a.fp16_active = pct;
        break;
      case nvml::kGpmPcieTxPerSec:
        r->pcie_tx_bytes_per_second = mib;
        break;
      case nvml::kGpmPcieRxPerSec:
        r->pcie_rx_bytes_per_second = mib;
        break;
      case nvml::kGpmNvLinkTotalRxPerSec:
        r->nvlink_rx_bytes_per_second = mib;
        break;
      case nvml::kGpmNvLinkTotalTxPerSec:
        r->nvlink_tx_bytes_per_second = mib;
        break;
      default:
        break;
    }
  }
}

}  // namespace vigil
