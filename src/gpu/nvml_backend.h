// SPDX-License-Identifier: Apache-2.0
// The NVML backend: per GPU identity, utilisation, memory, power and energy, temperatures, clocks
// and clock-event reasons, PCIe and per-link NVLink traffic, ECC and row-remap counts, MIG
// instances, running processes (stride probed), Xid events (an event set waited on by a thread
// this object owns) and, on Hopper and newer, GPM profiling metrics. Missing symbols leave their
// fields empty; NVML_ERROR_GPU_IS_LOST marks the device down and it is re-acquired by index on the
// next tick. Owner: gpu. Read() runs on the collector's sequence; the Xid thread only touches the
// mutex-guarded counters.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpu/gpu_backend.h"
#include "gpu/nvml_api.h"

namespace vigil {

class NvmlBackend : public GpuBackend {
 public:
  // Initialises NVML from a loaded library (see LoadNvml) and starts the Xid thread.
  static StatusOr<std::unique_ptr<NvmlBackend>> Create(std::unique_ptr<NvmlLibrary> library);
  ~NvmlBackend() override;

  std::string_view name() const override { return "nvml"; }
  Status Read(std::vector<GpuReading>* out) override;
  std::string Describe() const override;

 private:
  struct Device {
    nvml::Device handle = nullptr;
    bool lost = false;
    std::string uuid, name, pci_bus_id;
    bool gpm_checked = false, gpm_supported = false, gpm_primed = false;
    nvml::GpmSample gpm_samples[2] = {nullptr, nullptr};
    int gpm_current = 0;
    size_t process_stride = 0;                 // Last probed stride (0 = not yet).
    unsigned long long process_sample_us = 0;  // Newest process utilisation sample seen.
  };
  struct XidState {
    double count = 0;
    std::optional<int> last;
  };

  explicit NvmlBackend(std::unique_ptr<NvmlLibrary> library);
  Status Init();
  void ReadDevice(int index, Device& dev, GpuReading* r);
  void ReadIdentity(Device& dev);
  void ReadMemory(Device& dev, GpuReading* r);
  void ReadNvLinkAndFields(Device& dev, GpuReading* r);
  void ReadMig(Device& dev, GpuReading* r);
  void ReadProcesses(Device& dev, GpuReading* r);
  void ReadProcessUtilization(Device& dev, GpuReading* r);
  void ReadGpm(Device& dev, GpuReading* r);
  void XidLoop(std::stop_token stop);
  // Records `rc`; returns true on success. GPU_IS_LOST marks the device lost.
  bool Check(Device& dev, GpuReading* r, nvml::Return rc, const char* call);

  std::unique_ptr<NvmlLibrary> library_;
  const NvmlApi& api_;
  std::string driver_version_;
  std::vector<Device> devices_;
  bool memory_v2_works_ = true;
  mutable std::mutex xid_mu_;
  std::vector<nvml::Device> xid_handles_;  // Set before the Xid thread starts; index = GPU index.
  std::map<int, XidState> xid_;            // Guarded by xid_mu_.
  std::string xid_status_;                 // Guarded by xid_mu_.
  std::jthread xid_thread_;
};

}  // namespace vigil
