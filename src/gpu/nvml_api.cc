// SPDX-License-Identifier: Apache-2.0
#include "gpu/nvml_api.h"

#include <initializer_list>

namespace vigil {
namespace {

struct Binder {
  void* (*lookup)(void* ctx, const char* name);
  void* ctx;
  NvmlApi* api;

  // Resolves the first of `names` that exists into `*slot`; records the result under names[0].
  template <typename Fn>
  bool Bind(Fn* slot, std::initializer_list<const char*> names) {
    for (const char* name : names) {
      if (void* sym = lookup(ctx, name)) {
        *slot = reinterpret_cast<Fn>(sym);
        api->resolved.emplace_back(*names.begin(), name);
        return true;
      }
    }
    *slot = nullptr;
    api->resolved.emplace_back(*names.begin(), "");
    return false;
  }
};

void* DlLookup(void* ctx, const char* name) {
  return static_cast<const DlLibrary*>(ctx)->Symbol(name);
}

const char* OwnErrorName(nvml::Return code) {
  switch (code) {
    case nvml::kSuccess:
      return "NVML_SUCCESS";
    case nvml::kErrorUninitialized:
      return "NVML_ERROR_UNINITIALIZED";
    case nvml::kErrorInvalidArgument:
      return "NVML_ERROR_INVALID_ARGUMENT";
    case nvml::kErrorNotSupported:
      return "NVML_ERROR_NOT_SUPPORTED";
    case nvml::kErrorNoPermission:
      return "NVML_ERROR_NO_PERMISSION";
    case nvml::kErrorNotFound:
      return "NVML_ERROR_NOT_FOUND";
    case nvml::kErrorInsufficientSize:
      return "NVML_ERROR_INSUFFICIENT_SIZE";
    case nvml::kErrorDriverNotLoaded:
      return "NVML_ERROR_DRIVER_NOT_LOADED";
    case nvml::kErrorTimeout:
      return "NVML_ERROR_TIMEOUT";
    case nvml::kErrorLibraryNotFound:
      return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case nvml::kErrorFunctionNotFound:
      return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case nvml::kErrorGpuIsLost:
      return "NVML_ERROR_GPU_IS_LOST";
    case nvml::kErrorResetRequired:
      return "NVML_ERROR_RESET_REQUIRED";
    case nvml::kErrorNoData:
      return "NVML_ERROR_NO_DATA";
    case nvml::kErrorArgumentVersionMismatch:
      return "NVML_ERROR_ARGUMENT_VERSION_MISMATCH";
    default:
      return "NVML_ERROR_UNKNOWN";
  }
}

}  // namespace

std::string NvmlApi::ErrorName(Return code) const {
  std::string name = OwnErrorName(code);
  if (error_string != nullptr) {
    if (const char* text = error_string(code); text != nullptr && *text != '\0') {
      name += std::string(" (") + text + ")";
    }
  }
  return name + " [" + std::to_string(code) + "]";
}

Status ResolveNvmlApi(void* (*lookup)(void* ctx, const char* name), void* ctx, NvmlApi* api) {
  Binder b{lookup, ctx, api};
  api->resolved.clear();
  bool ok = b.Bind(&api->init, {"nvmlInit_v2", "nvmlInit"});
  ok &= b.Bind(&api->shutdown, {"nvmlShutdown"});
  ok &= b.Bind(&api->device_get_count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  ok &= b.Bind(&api->device_get_handle_by_index,
               {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  if (!ok) {
    std::string missing;
    for (const auto& [slot, sym] : api->resolved) {
      if (sym.empty()) missing += (missing.empty() ? "" : ", ") + slot;
    }
    return FailedPreconditionError("NVML library lacks required symbols: " + missing);
  }
  b.Bind(&api->error_string, {"nvmlErrorString"});
  b.Bind(&api->system_get_driver_version, {"nvmlSystemGetDriverVersion"});
  b.Bind(&api->device_get_name, {"nvmlDeviceGetName"});
  b.Bind(&api->device_get_uuid, {"nvmlDeviceGetUUID"});
  b.Bind(&api->device_get_pci_info, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"});
  b.Bind(&api->device_get_utilization_rates, {"nvmlDeviceGetUtilizationRates"});
  b.Bind(&api->device_get_memory_info_v2, {"nvmlDeviceGetMemoryInfo_v2"});
  b.Bind(&api->device_get_memory_info, {"nvmlDeviceGetMemoryInfo"});
  b.Bind(&api->device_get_temperature, {"nvmlDeviceGetTemperature"});
  b.Bind(&api->device_get_power_usage, {"nvmlDeviceGetPowerUsage"});
  b.Bind(&api->device_get_total_energy_consumption, {"nvmlDeviceGetTotalEnergyConsumption"});
  b.Bind(&api->device_get_clock_info, {"nvmlDeviceGetClockInfo"});
  b.Bind(&api->device_get_clocks_event_reasons,
         {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  b.Bind(&api->device_get_pcie_throughput, {"nvmlDeviceGetPcieThroughput"});
  b.Bind(&api->device_get_nvlink_state, {"nvmlDeviceGetNvLinkState"});
  b.Bind(&api->device_get_field_values, {"nvmlDeviceGetFieldValues"});
  b.Bind(&api->device_get_total_ecc_errors, {"nvmlDeviceGetTotalEccErrors"});
  b.Bind(&api->device_get_remapped_rows, {"nvmlDeviceGetRemappedRows"});
  b.Bind(&api->device_get_compute_running_processes,
         {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
          "nvmlDeviceGetComputeRunningProcesses"});
  api->process_info_size = 24;
  if (!api->resolved.empty() &&
      api->resolved.back().second == "nvmlDeviceGetComputeRunningProcesses") {
    api->process_info_size = 16;
  }
  b.Bind(&api->device_get_process_utilization, {"nvmlDeviceGetProcessUtilization"});
  b.Bind(&api->event_set_create, {"nvmlEventSetCreate"});
  b.Bind(&api->device_register_events, {"nvmlDeviceRegisterEvents"});
  b.Bind(&api->event_set_wait, {"nvmlEventSetWait_v2", "nvmlEventSetWait"});
  b.Bind(&api->event_set_free, {"nvmlEventSetFree"});
  b.Bind(&api->device_get_mig_mode, {"nvmlDeviceGetMigMode"});
  b.Bind(&api->device_get_max_mig_device_count, {"nvmlDeviceGetMaxMigDeviceCount"});
  b.Bind(&api->device_get_mig_device_handle_by_index, {"nvmlDeviceGetMigDeviceHandleByIndex"});
  b.Bind(&api->device_get_gpu_instance_id, {"nvmlDeviceGetGpuInstanceId"});
  b.Bind(&api->device_get_compute_instance_id, {"nvmlDeviceGetComputeInstanceId"});
  b.Bind(&api->gpm_query_device_support, {"nvmlGpmQueryDeviceSupport"});
  b.Bind(&api->gpm_sample_alloc, {"nvmlGpmSampleAlloc"});
  b.Bind(&api->gpm_sample_free, {"nvmlGpmSampleFree"});
  b.Bind(&api->gpm_sample_get, {"nvmlGpmSampleGet"});
  b.Bind(&api->gpm_metrics_get, {"nvmlGpmMetricsGet"});
  return OkStatus();
}

StatusOr<std::unique_ptr<NvmlLibrary>> LoadNvml(const std::string& name_or_path) {
  const std::string name = name_or_path.empty() ? "libnvidia-ml.so.1" : name_or_path;
  VIGIL_ASSIGN_OR_RETURN(DlLibrary lib, DlLibrary::Open(name));
  auto loaded = std::make_unique<NvmlLibrary>();
  loaded->library = std::move(lib);
  VIGIL_RETURN_IF_ERROR(
      ResolveNvmlApi(&DlLookup, &loaded->library, &loaded->api).WithContext(name));
  return loaded;
}

Status NvmlStatus(const NvmlApi& api, nvml::Return code, const std::string& what) {
  if (code == nvml::kSuccess) return OkStatus();
  std::string message = what + ": " + api.ErrorName(code);
  switch (code) {
    case nvml::kErrorGpuIsLost:
    case nvml::kErrorResetRequired:
    case nvml::kErrorDriverNotLoaded:
    case nvml::kErrorTimeout:
      return UnavailableError(std::move(message));
    case nvml::kErrorNotSupported:
      return UnimplementedError(std::move(message));
    case nvml::kErrorNoPermission:
      return PermissionDeniedError(std::move(message));
    case nvml::kErrorFunctionNotFound:
    case nvml::kErrorNotFound:
    case nvml::kErrorLibraryNotFound:
      return NotFoundError(std::move(message));
    case nvml::kErrorInvalidArgument:
    case nvml::kErrorArgumentVersionMismatch:
      return InvalidArgumentError(std::move(message));
    default:
      return InternalError(std::move(message));
  }
}

}  // namespace vigil
