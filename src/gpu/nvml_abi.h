// SPDX-License-Identifier: Apache-2.0
// The slice of NVML's C ABI that Vigil uses, declared here so the build needs no CUDA SDK: types,
// enum values, struct layouts and function-pointer types, as published in NVIDIA's nvml.h
// (CUDA 11.x-12.x headers). Owner: gpu. Plain declarations; no state.
//
// Layout facts relied on (x86-64 / aarch64 LP64):
// - nvmlProcessInfo_v1_t {uint pid; ull usedGpuMemory} = 16 bytes (plain and _v2 functions of
//   drivers < R470); nvmlProcessInfo_v2_t adds {uint gpuInstanceId; uint computeInstanceId} = 24
//   bytes; R535-era headers grew nvmlProcessInfo_t by ull usedGpuCcProtectedMemory = 32 bytes and
//   some drivers' _v3 write that stride, later ones write 24 again. We probe the stride at run
//   time (process_list.h) instead of trusting the symbol's suffix.
// - nvmlMemory_v2_t {uint version; ull total, reserved, free, used} = 40 bytes, version field =
//   NVML_STRUCT_VERSION(Memory, 2) = sizeof | 2 << 24.
// - nvmlEventData_t {device; ull eventType; ull eventData; uint gpuInstanceId; uint
//   computeInstanceId} = 32 bytes for nvmlEventSetWait_v2 (older headers stop at eventData).
// - nvmlFieldValue_t {uint fieldId, scopeId; ll timestamp, latencyUsec; valueType; nvmlReturn;
//   8-byte union} = 40 bytes.
// - nvmlGpmMetric_t {uint metricId; nvmlReturn; double value; 3 char*} = 40 bytes;
//   nvmlGpmMetricsGet_t {uint version, numMetrics; sample1, sample2; metrics[NVML_GPM_METRIC_MAX]}
//   where the MAX grew across releases (98, 210, 333): the library reads numMetrics entries, so we
//   allocate the largest.
#pragma once

#include <cstdint>

namespace vigil::nvml {

using Return = int;  // nvmlReturn_t
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorUninitialized = 1;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorTimeout = 10;
inline constexpr Return kErrorLibraryNotFound = 12;
inline constexpr Return kErrorFunctionNotFound = 13;
inline constexpr Return kErrorGpuIsLost = 15;
inline constexpr Return kErrorResetRequired = 16;
inline constexpr Return kErrorNoData = 21;
inline constexpr Return kErrorArgumentVersionMismatch = 25;
inline constexpr Return kErrorUnknown = 999;

struct DeviceSt;
using Device = DeviceSt*;  // nvmlDevice_t
struct EventSetSt;
using EventSet = EventSetSt*;  // nvmlEventSet_t
struct GpmSampleSt;
using GpmSample = GpmSampleSt*;  // nvmlGpmSample_t

inline constexpr unsigned kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
inline constexpr unsigned kClockGraphics = 0;   // nvmlClockType_t
inline constexpr unsigned kClockSm = 1;
inline constexpr unsigned kClockMem = 2;
inline constexpr unsigned kPcieUtilTxBytes = 0;  // nvmlPcieUtilCounter_t, KB/s
inline constexpr unsigned kPcieUtilRxBytes = 1;
inline constexpr unsigned kMemoryErrorCorrected = 0;  // nvmlMemoryErrorType_t
inline constexpr unsigned kMemoryErrorUncorrected = 1;
inline constexpr unsigned kVolatileEcc = 0;  // nvmlEccCounterType_t
inline constexpr unsigned kAggregateEcc = 1;
inline constexpr unsigned kFeatureEnabled = 1;   // nvmlEnableState_t / NVML_DEVICE_MIG_ENABLE
inline constexpr unsigned kNvLinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS
inline constexpr unsigned long long kEventTypeXidCriticalError = 0x8;

// Field ids (nvmlDeviceGetFieldValues).
inline constexpr unsigned kFiMemoryTemp = 82;               // NVML_FI_DEV_MEMORY_TEMP, C
inline constexpr unsigned kFiNvLinkThroughputDataTx = 138;  // KiB, scopeId = link
inline constexpr unsigned kFiNvLinkThroughputDataRx = 139;
inline constexpr int kValueTypeDouble = 0;  // nvmlValueType_t
inline constexpr int kValueTypeUnsignedInt = 1;
inline constexpr int kValueTypeUnsignedLong = 2;
inline constexpr int kValueTypeUnsignedLongLong = 3;
inline constexpr int kValueTypeSignedLongLong = 4;
inline constexpr int kValueTypeSignedInt = 5;

// Clock event (throttle) reason bits (nvmlClocksEventReason* / nvmlClocksThrottleReason*).
inline constexpr unsigned long long kClocksEventGpuIdle = 0x1;
inline constexpr unsigned long long kClocksEventApplicationsClocksSetting = 0x2;
inline constexpr unsigned long long kClocksEventSwPowerCap = 0x4;
inline constexpr unsigned long long kClocksEventHwSlowdown = 0x8;
inline constexpr unsigned long long kClocksEventSyncBoost = 0x10;
inline constexpr unsigned long long kClocksEventSwThermalSlowdown = 0x20;
inline constexpr unsigned long long kClocksEventHwThermalSlowdown = 0x40;
inline constexpr unsigned long long kClocksEventHwPowerBrakeSlowdown = 0x80;
inline constexpr unsigned long long kClocksEventDisplayClockSetting = 0x100;

// GPM metric ids (nvmlGpmMetricId_t).
inline constexpr unsigned kGpmSmUtil = 2;
inline constexpr unsigned kGpmSmOccupancy = 3;
inline constexpr unsigned kGpmAnyTensorUtil = 5;
inline constexpr unsigned kGpmDfmaTensorUtil = 6;
inline constexpr unsigned kGpmHmmaTensorUtil = 7;
inline constexpr unsigned kGpmImmaTensorUtil = 9;
inline constexpr unsigned kGpmDramBwUtil = 10;
inline constexpr unsigned kGpmFp64Util = 11;
inline constexpr unsigned kGpmFp32Util = 12;
inline constexpr unsigned kGpmFp16Util = 13;
inline constexpr unsigned kGpmPcieTxPerSec = 20;  // MiB/s
inline constexpr unsigned kGpmPcieRxPerSec = 21;
inline constexpr unsigned kGpmNvLinkTotalRxPerSec = 60;  // MiB/s
inline constexpr unsigned kGpmNvLinkTotalTxPerSec = 61;
inline constexpr unsigned kGpmMetricMax = 333;
inline constexpr unsigned kGpmMetricsGetVersion = 1;
inline constexpr unsigned kGpmSupportVersion = 1;

struct Utilization {  // nvmlUtilization_t
  unsigned int gpu;
  unsigned int memory;
};
struct ProcessUtilizationSample {  // nvmlProcessUtilizationSample_t
  unsigned pid;
  unsigned long long time_stamp;                   // CPU time of the sample, microseconds.
  unsigned sm_util, mem_util, enc_util, dec_util;  // Percent of the sample period.
};
static_assert(sizeof(ProcessUtilizationSample) == 32);
struct Memory {  // nvmlMemory_t
  unsigned long long total, free, used;
};
struct MemoryV2 {  // nvmlMemory_v2_t
  unsigned int version;
  unsigned long long total, reserved, free, used;
};
inline constexpr unsigned kMemoryV2Version = sizeof(MemoryV2) | (2u << 24);
static_assert(sizeof(MemoryV2) == 40);

struct PciInfo {  // nvmlPciInfo_t (_v2/_v3 functions)
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
static_assert(sizeof(PciInfo) == 68);

struct EventData {  // nvmlEventData_t (v2 layout)
  Device device;
  unsigned long long eventType;
  unsigned long long eventData;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
static_assert(sizeof(EventData) == 32);

struct FieldValue {  // nvmlFieldValue_t
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;
  Return nvmlReturn;
  union {
    double dVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    long long sllVal;
    int siVal;
  } value;
};
static_assert(sizeof(FieldValue) == 40);

struct GpmSupport {  // nvmlGpmSupport_t
  unsigned int version;
  unsigned int isSupportedDevice;
};
struct GpmMetric {  // nvmlGpmMetric_t
  unsigned int metricId;
  Return nvmlReturn;
  double value;
  char* shortName;
  char* longName;
  char* unit;
};
static_assert(sizeof(GpmMetric) == 40);
struct GpmMetricsGet {  // nvmlGpmMetricsGet_t
  unsigned int version;
  unsigned int numMetrics;
  GpmSample sample1;
  GpmSample sample2;
  GpmMetric metrics[kGpmMetricMax];
};

}  // namespace vigil::nvml
