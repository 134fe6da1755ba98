// SPDX-License-Identifier: Apache-2.0
#include "gpu/nvml_backend.h"

#include <chrono>
#include <condition_variable>
#include <utility>

#include "gpu/profiling_control.h"

namespace vigil {
namespace {

constexpr unsigned kNameBuffer = 96;    // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kUuidBuffer = 96;    // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned kDriverBuffer = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
constexpr unsigned kXidWaitMs = 500;

}  // namespace

NvmlBackend::NvmlBackend(std::unique_ptr<NvmlLibrary> library)
    : library_(std::move(library)), api_(library_->api) {}

StatusOr<std::unique_ptr<NvmlBackend>> NvmlBackend::Create(std::unique_ptr<NvmlLibrary> library) {
  std::unique_ptr<NvmlBackend> backend(new NvmlBackend(std::move(library)));
  VIGIL_RETURN_IF_ERROR(backend->Init());
  return backend;
}

Status NvmlBackend::Init() {
  VIGIL_RETURN_IF_ERROR(NvmlStatus(api_, api_.init(), "nvmlInit"));
  unsigned count = 0;
  if (Status s = NvmlStatus(api_, api_.device_get_count(&count), "nvmlDeviceGetCount"); !s.ok()) {
    api_.shutdown();
    return s;
  }
  if (api_.system_get_driver_version != nullptr) {
    char buf[kDriverBuffer] = {};
    if (api_.system_get_driver_version(buf, sizeof buf) == nvml::kSuccess) driver_version_ = buf;
  }
  devices_.resize(count);
  xid_handles_.assign(count, nullptr);
  for (unsigned i = 0; i < count; ++i) {
    if (api_.device_get_handle_by_index(i, &devices_[i].handle) == nvml::kSuccess) {
      ReadIdentity(devices_[i]);
      xid_handles_[i] = devices_[i].handle;
    } else {
      devices_[i].lost = true;
    }
  }
  if (api_.event_set_create && api_.device_register_events && api_.event_set_wait &&
      api_.event_set_free) {
    xid_thread_ = std::jthread([this](std::stop_token stop) { XidLoop(stop); });
  } else {
    xid_status_ = "Xid events unavailable (no event-set symbols)";
  }
  return OkStatus();
}

NvmlBackend::~NvmlBackend() {
  if (xid_thread_.joinable()) {
    xid_thread_.request_stop();
    xid_thread_.join();
  }
  for (Device& dev : devices_) {
    for (nvml::GpmSample& s : dev.gpm_samples) {
      if (s != nullptr && api_.gpm_sample_free != nullptr) api_.gpm_sample_free(s);
    }
  }
  api_.shutdown();
}

void NvmlBackend::XidLoop(std::stop_token stop) {
  nvml::EventSet set = nullptr;
  if (api_.event_set_create(&set) != nvml::kSuccess) {
    std::lock_guard lock(xid_mu_);
    xid_status_ = "Xid events unavailable (nvmlEventSetCreate failed)";
    return;
  }
  int registered = 0;
  for (nvml::Device handle : xid_handles_) {
    if (handle != nullptr && api_.device_register_events(handle, nvml::kEventTypeXidCriticalError,
                                                         set) == nvml::kSuccess) {
      ++registered;
    }
  }
  if (registered == 0) {
    std::lock_guard lock(xid_mu_);
    xid_status_ = "Xid events unavailable (no device accepted registration)";
  }
  std::mutex idle_mu;
  std::condition_variable_any idle_cv;
  while (registered > 0 && !stop.stop_requested()) {
    nvml::EventData data{};
    const nvml::Return rc = api_.event_set_wait(set, &data, kXidWaitMs);
    if (rc == nvml::kSuccess) {
      if ((data.eventType & nvml::kEventTypeXidCriticalError) == 0) continue;
      for (size_t i = 0; i < xid_handles_.size(); ++i) {
        if (xid_handles_[i] == data.device) {
          std::lock_guard lock(xid_mu_);
          XidState& x = xid_[static_cast<int>(i)];
          x.count += 1;
          x.last = static_cast<int>(data.eventData);
        }
      }
    } else if (rc != nvml::kErrorTimeout) {
      // A lost GPU or a driver hiccup: back off instead of spinning.
      std::unique_lock lock(idle_mu);
      idle_cv.wait_for(lock, stop, std::chrono::milliseconds(kXidWaitMs), [] { return false; });
    }
  }
  api_.event_set_free(set);
}

bool NvmlBackend::Check(Device& dev, GpuReading* r, nvml::Return rc, const char* call) {
  if (rc == nvml::kSuccess) return true;
  if (rc == nvml::kErrorGpuIsLost || rc == nvml::kErrorResetRequired) {
    dev.lost = true;
    r->up = false;
    r->status = std::string(call) + ": " + api_.ErrorName(rc);
  }
  return false;
}

void NvmlBackend::ReadIdentity(Device& dev) {
  char buf[kUuidBuffer] = {};
  if (api_.device_get_uuid &&
      api_.device_get_uuid(dev.handle, buf, kUuidBuffer) == nvml::kSuccess) {
    dev.uuid = buf;
  }
  char name[kNameBuffer] = {};
  if (api_.device_get_name &&
      api_.device_get_name(dev.handle, name, kNameBuffer) == nvml::kSuccess) {
    dev.name = name;
  }
  nvml::PciInfo pci{};
  if (api_.device_get_pci_info && api_.device_get_pci_info(dev.handle, &pci) == nvml::kSuccess) {
    pci.busId[sizeof pci.busId - 1] = '\0';
    dev.pci_bus_id = pci.busId;
  }
}

Status NvmlBackend::Read(std::vector<GpuReading>* out) {
  out->clear();
  out->resize(devices_.size());
  for (size_t i = 0; i < devices_.size(); ++i) {
    ReadDevice(static_cast<int>(i), devices_[i], &(*out)[i]);
  }
  std::lock_guard lock(xid_mu_);
  for (auto& [index, x] : xid_) {
    if (index < static_cast<int>(out->size())) {
      (*out)[index].xid_errors_total = x.count;
      (*out)[index].last_xid = x.last;
    }
  }
  return OkStatus();
}

void NvmlBackend::ReadDevice(int index, Device& dev, GpuReading* r) {
  r->index = index;
  if (dev.lost || dev.handle == nullptr) {
    nvml::Device handle = nullptr;
    const nvml::Return rc = api_.device_get_handle_by_index(static_cast<unsigned>(index), &handle);
    if (rc != nvml::kSuccess) {
      r->uuid = dev.uuid;
      r->name = dev.name;
      r->pci_bus_id = dev.pci_bus_id;
      r->up = false;
      r->status = "nvmlDeviceGetHandleByIndex: " + api_.ErrorName(rc);
      return;
    }
    dev.handle = handle;
    dev.lost = false;
    dev.gpm_primed = false;
    if (dev.uuid.empty()) ReadIdentity(dev);
  }
  r->uuid = dev.uuid.empty() ? "index-" + std::to_string(index) : dev.uuid;
  r->name = dev.name;
  r->pci_bus_id = dev.pci_bus_id;

  if (api_.device_get_utilization_rates) {
    nvml::Utilization u{};
    if (!Check(dev, r, api_.device_get_utilization_rates(dev.handle, &u),
               "nvmlDeviceGetUtilizationRates")) {
      if (dev.lost) return;
    } else {
      r->utilization_ratio = u.gpu / 100.0;
      r->memory_utilization_ratio = u.memory / 100.0;
    }
  }
  ReadMemory(dev, r);
  if (dev.lost) return;
  unsigned value = 0;
  if (api_.device_get_temperature &&
      Check(dev, r, api_.device_get_temperature(dev.handle, nvml::kTemperatureGpu, &value),
            "nvmlDeviceGetTemperature")) {
    r->temperature_celsius = value;
  }
  if (api_.device_get_power_usage &&
      Check(dev, r, api_.device_get_power_usage(dev.handle, &value), "nvmlDeviceGetPowerUsage")) {
    r->power_watts = value / 1000.0;
  }
  unsigned long long energy_mj = 0;
  if (api_.device_get_total_energy_consumption &&
      Check(dev, r, api_.device_get_total_energy_consumption(dev.handle, &energy_mj),
            "nvmlDeviceGetTotalEnergyConsumption")) {
    r->energy_joules = static_cast<double>(energy_mj) / 1000.0;
  }
  if (api_.device_get_clock_info) {
    if (Check(dev, r, api_.device_get_clock_info(dev.handle, nvml::kClockSm, &value),
              "nvmlDeviceGetClockInfo")) {
      r->sm_clock_hz = value * 1e6;
    }
    if (Check(dev, r, api_.device_get_clock_info(dev.handle, nvml::kClockMem, &value),
              "nvmlDeviceGetClockInfo")) {
      r->memory_clock_hz = value * 1e6;
    }
  }
  unsigned long long reasons = 0;
  if (api_.device_get_clocks_event_reasons &&
      Check(dev, r, api_.device_get_clocks_event_reasons(dev.handle, &reasons),
            "nvmlDeviceGetCurrentClocksEventReasons")) {
    r->clock_event_reasons = reasons;
  }
  if (api_.device_get_pcie_throughput) {
    // NVML reports KB/s over a 20 ms window; KB = 1024 bytes as in nvidia-smi.
    if (Check(dev, r, api_.device_get_pcie_throughput(dev.handle, nvml::kPcieUtilTxBytes, &value),
              "nvmlDeviceGetPcieThroughput")) {
      r->pcie_tx_bytes_per_second = value * 1024.0;
    }
    if (Check(dev, r, api_.device_get_pcie_throughput(dev.handle, nvml::kPcieUtilRxBytes, &value),
              "nvmlDeviceGetPcieThroughput")) {
      r->pcie_rx_bytes_per_second = value * 1024.0;
    }
  }
  if (dev.lost) return;
  unsigned long long ecc = 0;
  if (api_.device_get_total_ecc_errors) {
    if (Check(dev, r,
              api_.device_get_total_ecc_errors(dev.handle, nvml::kMemoryErrorCorrected,
                                               nvml::kVolatileEcc, &ecc),
              "nvmlDeviceGetTotalEccErrors")) {
      r->ecc_corrected_total = static_cast<double>(ecc);
    }
    if (Check(dev, r,
              api_.device_get_total_ecc_errors(dev.handle, nvml::kMemoryErrorUncorrected,
                                               nvml::kVolatileEcc, &ecc),
              "nvmlDeviceGetTotalEccErrors")) {
      r->ecc_uncorrected_total = static_cast<double>(ecc);
    }
  }
  unsigned corr = 0, unc = 0, pending = 0, failure = 0;
  if (api_.device_get_remapped_rows &&
      Check(dev, r, api_.device_get_remapped_rows(dev.handle, &corr, &unc, &pending, &failure),
            "nvmlDeviceGetRemappedRows")) {
    r->remapped_rows_correctable = corr;
    r->remapped_rows_uncorrectable = unc;
    r->row_remap_pending = pending != 0;
    r->row_remap_failure = failure != 0;
  }
  if (dev.lost) return;
  ReadNvLinkAndFields(dev, r);
  if (dev.lost) return;
  ReadMig(dev, r);
  if (dev.lost) return;
  ReadProcesses(dev, r);
  if (dev.lost) return;
  ReadProcessUtilization(dev, r);
  if (dev.lost) return;
  ReadGpm(dev, r);
}

void NvmlBackend::ReadMemory(Device& dev, GpuReading* r) {
  if (api_.device_get_memory_info_v2 && memory_v2_works_) {
    nvml::MemoryV2 m{};
    m.version = nvml::kMemoryV2Version;
    const nvml::Return rc = api_.device_get_memory_info_v2(dev.handle, &m);
    if (rc == nvml::kSuccess) {
      r->memory_total_bytes = static_cast<double>(m.total);
      r->memory_reserved_bytes = static_cast<double>(m.reserved);
      r->memory_free_bytes = static_cast<double>(m.free);
      r->memory_used_bytes = static_cast<double>(m.used);
      return;
    }
    if (!Check(dev, r, rc, "nvmlDeviceGetMemoryInfo_v2") && dev.lost) return;
    // Version mismatch, FUNCTION_NOT_FOUND (R510 shipped a stub) or NOT_SUPPORTED: use v1.
    memory_v2_works_ = false;
  }
  if (api_.device_get_memory_info) {
    nvml::Memory m{};
    if (Check(dev, r, api_.device_get_memory_info(dev.handle, &m), "nvmlDeviceGetMemoryInfo")) {
      r->memory_total_bytes = static_cast<double>(m.total);
      r->memory_free_bytes = static_cast<double>(m.free);
      r->memory_used_bytes = static_cast<double>(m.used);
    }
  }
}

std::string NvmlBackend::Describe() const {
  std::string out = "nvml " + library_->library.name();
  if (!driver_version_.empty()) out += " driver " + driver_version_;
  out += ", " + std::to_string(devices_.size()) + " GPU(s)";
  std::string missing;
  for (const auto& [slot, sym] : api_.resolved) {
    if (sym.empty()) missing += (missing.empty() ? "" : " ") + slot;
  }
  if (!missing.empty()) out += "; missing symbols: " + missing;
  bool gpm = false;
  for (const Device& d : devices_) gpm |= d.gpm_supported;
  out += gpm ? "; GPM on" : "; GPM off (no pipe activity, no FLOP/s estimate)";
  if (GpuProfilingPaused()) out += "; profiling paused";
  std::lock_guard lock(xid_mu_);
  if (!xid_status_.empty()) out += "; " + xid_status_;
  return out;
}

}  // namespace vigil
