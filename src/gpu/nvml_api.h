// SPDX-License-Identifier: Apache-2.0
// NVML's function table: one pointer per symbol Vigil calls, resolved with dlsym from
// libnvidia-ml.so.1 (by soname, so LD_LIBRARY_PATH works) or from --nvml-library. A symbol the
// driver lacks stays nullptr, which is how the backend knows a capability is absent; versioned
// symbols are tried newest first and the name that resolved is recorded. Tests build a table
// from captureless lambdas. Owner: gpu. The table is immutable after LoadNvml(); NVML itself is
// thread-safe.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "gpu/dl_library.h"
#include "gpu/nvml_abi.h"

namespace vigil {

struct NvmlApi {
  using Return = nvml::Return;
  using Device = nvml::Device;

  // Required: without these the library is unusable.
  Return (*init)() = nullptr;  // nvmlInit_v2 | nvmlInit
  Return (*shutdown)() = nullptr;
  Return (*device_get_count)(unsigned*) = nullptr;                    // _v2 | plain
  Return (*device_get_handle_by_index)(unsigned, Device*) = nullptr;  // _v2 | plain

  // Optional.
  const char* (*error_string)(Return) = nullptr;
  Return (*system_get_driver_version)(char*, unsigned) = nullptr;
  Return (*device_get_name)(Device, char*, unsigned) = nullptr;
  Return (*device_get_uuid)(Device, char*, unsigned) = nullptr;
  Return (*device_get_pci_info)(Device, nvml::PciInfo*) = nullptr;  // _v3 | _v2
  Return (*device_get_utilization_rates)(Device, nvml::Utilization*) = nullptr;
  Return (*device_get_memory_info_v2)(Device, nvml::MemoryV2*) = nullptr;
  Return (*device_get_memory_info)(Device, nvml::Memory*) = nullptr;
  Return (*device_get_temperature)(Device, unsigned, unsigned*) = nullptr;
  Return (*device_get_power_usage)(Device, unsigned*) = nullptr;                         // mW
  Return (*device_get_total_energy_consumption)(Device, unsigned long long*) = nullptr;  // mJ
  Return (*device_get_clock_info)(Device, unsigned, unsigned*) = nullptr;                // MHz
  // nvmlDeviceGetCurrentClocksEventReasons | nvmlDeviceGetCurrentClocksThrottleReasons.
  Return (*device_get_clocks_event_reasons)(Device, unsigned long long*) = nullptr;
  Return (*device_get_pcie_throughput)(Device, unsigned, unsigned*) = nullptr;  // KB/s
  Return (*device_get_nvlink_state)(Device, unsigned, unsigned*) = nullptr;
  Return (*device_get_field_values)(Device, int, nvml::FieldValue*) = nullptr;
  Return (*device_get_total_ecc_errors)(Device, unsigned, unsigned, unsigned long long*) = nullptr;
  Return (*device_get_remapped_rows)(Device, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  // _v3 | _v2 | plain; the entry stride is probed (process_list.h), so the buffer is untyped.
  Return (*device_get_compute_running_processes)(Device, unsigned*, void*) = nullptr;
  // Samples since the given CPU time (us), one per process with SM, memory or codec activity.
  Return (*device_get_process_utilization)(Device, nvml::ProcessUtilizationSample*, unsigned*,
                                           unsigned long long) = nullptr;
  Return (*event_set_create)(nvml::EventSet*) = nullptr;
  Return (*device_register_events)(Device, unsigned long long, nvml::EventSet) = nullptr;
  Return (*event_set_wait)(nvml::EventSet, nvml::EventData*, unsigned) = nullptr;  // _v2 | plain
  Return (*event_set_free)(nvml::EventSet) = nullptr;
  Return (*device_get_mig_mode)(Device, unsigned*, unsigned*) = nullptr;
  Return (*device_get_max_mig_device_count)(Device, unsigned*) = nullptr;
  Return (*device_get_mig_device_handle_by_index)(Device, unsigned, Device*) = nullptr;
  Return (*device_get_gpu_instance_id)(Device, unsigned*) = nullptr;
  Return (*device_get_compute_instance_id)(Device, unsigned*) = nullptr;
  Return (*gpm_query_device_support)(Device, nvml::GpmSupport*) = nullptr;
  Return (*gpm_sample_alloc)(nvml::GpmSample*) = nullptr;
  Return (*gpm_sample_free)(nvml::GpmSample) = nullptr;
  Return (*gpm_sample_get)(Device, nvml::GpmSample) = nullptr;
  Return (*gpm_metrics_get)(nvml::GpmMetricsGet*) = nullptr;

  // Which symbol each slot resolved to ("" = absent), in declaration order: for `vigil status`.
  std::vector<std::pair<std::string, std::string>> resolved;

  // Entry size of the process-info structs the resolved process-list symbol is declared with
  // (16 for the plain symbol, 24 for _v2/_v3); the real stride is still probed.
  size_t process_info_size = 24;

  // "NVML_ERROR_GPU_IS_LOST"-style text (nvmlErrorString when present, else our own names).
  std::string ErrorName(Return code) const;
};

// A loaded NVML: the library handle outlives the function table.
struct NvmlLibrary {
  DlLibrary library;
  NvmlApi api;
};

// Loads NVML from `name_or_path` ("" = "libnvidia-ml.so.1") and resolves every symbol.
// NotFound when the library is absent, FailedPrecondition when a required symbol is missing.
StatusOr<std::unique_ptr<NvmlLibrary>> LoadNvml(const std::string& name_or_path);

// Resolves the table from any symbol lookup (tests pass a map; LoadNvml passes dlsym).
Status ResolveNvmlApi(void* (*lookup)(void* ctx, const char* name), void* ctx, NvmlApi* api);

// Maps an NVML return code to a Status code (GPU_IS_LOST -> Unavailable, NOT_SUPPORTED ->
// Unimplemented, NO_PERMISSION -> PermissionDenied, FUNCTION_NOT_FOUND/NOT_FOUND -> NotFound).
Status NvmlStatus(const NvmlApi& api, nvml::Return code, const std::string& what);

}  // namespace vigil
