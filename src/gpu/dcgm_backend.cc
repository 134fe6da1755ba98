// SPDX-License-Identifier: Apache-2.0
#include "gpu/dcgm_backend.h"

#include <cstring>

#include "gpu/profiling_control.h"

namespace vigil {
namespace {

// From dcgm_structs.h / dcgm_fields.h.
using DcgmReturn = int;
constexpr DcgmReturn kDcgmOk = 0;
constexpr uintptr_t kGroupAllGpus = 0x7fffffff;  // DCGM_GROUP_ALL_GPUS
constexpr int kOperationModeAuto = 1;            // DCGM_OPERATION_MODE_AUTO
constexpr int kMaxDevices = 32;                  // DCGM_MAX_NUM_DEVICES
constexpr unsigned short kFtDouble = 'd';
constexpr unsigned short kFtInt64 = 'i';
constexpr unsigned short kFtString = 's';
constexpr double kFp64Blank = 140737488355328.0;       // DCGM_FP64_BLANK
constexpr int64_t kInt64Blank = 0x7ffffffffffffff0LL;  // DCGM_INT64_BLANK
constexpr unsigned short kFieldUuid = 54;              // DCGM_FI_DEV_GPU_UUID

struct FieldValueV1 {  // dcgmFieldValue_v1
  unsigned int version;
  unsigned short fieldId;
  unsigned short fieldType;
  int status;
  int64_t ts;
  union {
    int64_t i64;
    double dbl;
    char str[256];
    char blob[4096];
  } value;
};
static_assert(sizeof(FieldValueV1) == 4120);
constexpr unsigned kFieldValueVersion1 = sizeof(FieldValueV1) | (1u << 24);

struct ConnectV2ParamsV2 {  // dcgmConnectV2Params_v2
  unsigned int version;
  unsigned int persistAfterDisconnect;
  unsigned int timeoutMs;
  unsigned int addressIsUnixSocket;
};
constexpr unsigned kConnectV2ParamsVersion2 = sizeof(ConnectV2ParamsV2) | (2u << 24);

// DCGM_FI_PROF_* ids watched, in order.
constexpr unsigned short kProfFields[] = {1002, 1003, 1004, 1005, 1006, 1007, 1008,
                                          1009, 1010, 1011, 1012, 1013, 1014, 1015};

}  // namespace

struct DcgmBackend::Api {
  DcgmReturn (*init)() = nullptr;
  DcgmReturn (*shutdown)() = nullptr;
  DcgmReturn (*connect_v2)(const char*, ConnectV2ParamsV2*, uintptr_t*) = nullptr;
  DcgmReturn (*disconnect)(uintptr_t) = nullptr;
  DcgmReturn (*start_embedded)(int, uintptr_t*) = nullptr;
  DcgmReturn (*stop_embedded)(uintptr_t) = nullptr;
  DcgmReturn (*get_all_supported_devices)(uintptr_t, unsigned int*, int*) = nullptr;
  DcgmReturn (*field_group_create)(uintptr_t, int, unsigned short*, const char*,
                                   uintptr_t*) = nullptr;
  DcgmReturn (*field_group_destroy)(uintptr_t, uintptr_t) = nullptr;
  DcgmReturn (*watch_fields)(uintptr_t, uintptr_t, uintptr_t, long long, double, int) = nullptr;
  DcgmReturn (*get_latest_values_for_fields)(uintptr_t, int, unsigned short*, unsigned int,
                                             FieldValueV1*) = nullptr;
  DcgmReturn (*prof_pause)(uintptr_t) = nullptr;
  DcgmReturn (*prof_resume)(uintptr_t) = nullptr;
};

StatusOr<std::unique_ptr<DcgmBackend>> DcgmBackend::Create(std::unique_ptr<GpuBackend> nvml,
                                                           const DcgmOptions& options) {
  std::unique_ptr<DcgmBackend> b(new DcgmBackend());
  b->nvml_ = std::move(nvml);
  VIGIL_ASSIGN_OR_RETURN(
      b->library_, DlLibrary::Open(options.so_path.empty() ? "libdcgm.so.4" : options.so_path));
  b->api_ = std::make_unique<Api>();
  Api& a = *b->api_;
  const DlLibrary& l = b->library_;
  auto bind = [&l](auto* slot, const char* name) {
    *slot = reinterpret_cast<std::remove_pointer_t<decltype(slot)>>(l.Symbol(name));
    return *slot != nullptr;
  };
  bool ok = bind(&a.init, "dcgmInit") && bind(&a.shutdown, "dcgmShutdown") &&
            bind(&a.field_group_create, "dcgmFieldGroupCreate") &&
            bind(&a.watch_fields, "dcgmWatchFields") &&
            bind(&a.get_latest_values_for_fields, "dcgmGetLatestValuesForFields") &&
            bind(&a.get_all_supported_devices, "dcgmGetAllSupportedDevices");
  bind(&a.connect_v2, "dcgmConnect_v2");
  bind(&a.disconnect, "dcgmDisconnect");
  bind(&a.start_embedded, "dcgmStartEmbedded");
  bind(&a.stop_embedded, "dcgmStopEmbedded");
  bind(&a.field_group_destroy, "dcgmFieldGroupDestroy");
  bind(&a.prof_pause, "dcgmProfPause");
  bind(&a.prof_resume, "dcgmProfResume");
  if (!ok) return FailedPreconditionError(l.name() + ": lacks required DCGM symbols");
  if (DcgmReturn rc = a.init(); rc != kDcgmOk) {
    return UnavailableError("dcgmInit: " + std::to_string(rc));
  }
  DcgmReturn rc = -1;
  if (a.connect_v2 != nullptr) {
    ConnectV2ParamsV2 params{kConnectV2ParamsVersion2, 0, 1000, 0};
    rc = a.connect_v2(options.address.c_str(), &params, &b->handle_);
  }
  if (rc != kDcgmOk) {
    if (!options.embedded || a.start_embedded == nullptr) {
      a.shutdown();
      return UnavailableError("dcgmConnect_v2 " + options.address + ": " + std::to_string(rc) +
                              " (no nv-hostengine; embedding not requested)");
    }
    if (DcgmReturn erc = a.start_embedded(kOperationModeAuto, &b->handle_); erc != kDcgmOk) {
      a.shutdown();
      return UnavailableError("dcgmStartEmbedded: " + std::to_string(erc));
    }
    b->embedded_ = true;
  }
  unsigned short fields[std::size(kProfFields) + 1];
  fields[0] = kFieldUuid;
  std::memcpy(fields + 1, kProfFields, sizeof kProfFields);
  rc = a.field_group_create(b->handle_, static_cast<int>(std::size(fields)), fields,
                            "vigil_profiling", &b->field_group_);
  if (rc == kDcgmOk) {
    rc = a.watch_fields(b->handle_, kGroupAllGpus, b->field_group_, 1'000'000, 5.0, 2);
  }
  if (rc != kDcgmOk) b->status_ = "profiling fields not watched: " + std::to_string(rc);
  unsigned int ids[kMaxDevices];
  int count = kMaxDevices;
  if (a.get_all_supported_devices(b->handle_, ids, &count) == kDcgmOk) {
    for (int i = 0; i < count && i < kMaxDevices; ++i) {
      unsigned short f = kFieldUuid;
      FieldValueV1 v{};
      v.version = kFieldValueVersion1;
      if (a.get_latest_values_for_fields(b->handle_, static_cast<int>(ids[i]), &f, 1, &v) ==
              kDcgmOk &&
          v.status == kDcgmOk && v.fieldType == kFtString) {
        v.value.str[sizeof v.value.str - 1] = '\0';
        b->gpu_ids_[v.value.str] = ids[i];
      }
    }
  }
  return b;
}

DcgmBackend::~DcgmBackend() {
  if (!api_) return;
  if (paused_ && api_->prof_resume) api_->prof_resume(handle_);
  if (field_group_ != 0 && api_->field_group_destroy) {
    api_->field_group_destroy(handle_, field_group_);
  }
  if (embedded_ && api_->stop_embedded) api_->stop_embedded(handle_);
  if (!embedded_ && api_->disconnect) api_->disconnect(handle_);
  api_->shutdown();
}

Status DcgmBackend::Read(std::vector<GpuReading>* out) {
  VIGIL_RETURN_IF_ERROR(nvml_->Read(out));
  const bool want_pause = GpuProfilingPaused();
  if (want_pause != paused_) {
    auto fn = want_pause ? api_->prof_pause : api_->prof_resume;
    if (fn != nullptr && fn(handle_) == kDcgmOk) paused_ = want_pause;
  }
  if (paused_ || field_group_ == 0) return OkStatus();
  for (GpuReading& r : *out) {
    if (r.up) Overlay(&r);
  }
  return OkStatus();
}

void DcgmBackend::Overlay(GpuReading* r) {
  auto it = gpu_ids_.find(r->uuid);
  const int gpu_id = it != gpu_ids_.end() ? static_cast<int>(it->second) : r->index;
  unsigned short fields[std::size(kProfFields)];
  std::memcpy(fields, kProfFields, sizeof fields);
  FieldValueV1 values[std::size(kProfFields)];
  std::memset(values, 0, sizeof values);
  for (FieldValueV1& v : values) v.version = kFieldValueVersion1;
  if (api_->get_latest_values_for_fields(handle_, gpu_id, fields, std::size(fields), values) !=
      kDcgmOk) {
    return;
  }
  // Profiling activity now comes from DCGM, not from NVML's GPM (never mix the two).
  r->activity = GpuActivity{};
  for (const FieldValueV1& v : values) {
    if (v.status != kDcgmOk) continue;
    double d;
    if (v.fieldType == kFtDouble && v.value.dbl < kFp64Blank) {
      d = v.value.dbl;
    } else if (v.fieldType == kFtInt64 && v.value.i64 < kInt64Blank) {
      d = static_cast<double>(v.value.i64);
    } else {
      continue;
    }
    GpuActivity& a = r->activity;
    switch (v.fieldId) {
      case 1002:
        a.sm_active = d;
        break;
      case 1003:
        a.sm_occupancy = d;
        break;
      case 1004:
        a.tensor_active = d;
        break;
      case 1005:
        a.dram_active = d;
        break;
      case 1006:
        a.fp64_active = d;
        break;
      case 1007:
        a.fp32_active = d;
        break;
      case 1008:
        a.fp16_active = d;
        break;
      case 1009:
        r->pcie_tx_bytes_per_second = d;
        break;
      case 1010:
        r->pcie_rx_bytes_per_second = d;
        break;
      case 1011:
        r->nvlink_tx_bytes_per_second = d;
        break;
      case 1012:
        r->nvlink_rx_bytes_per_second = d;
        break;
      case 1013:
        a.imma_active = d;
        break;
      case 1014:
        a.hmma_active = d;
        break;
      case 1015:
        a.dfma_active = d;
        break;
      default:
        break;
    }
  }
}

std::string DcgmBackend::Describe() const {
  std::string out = std::string("dcgm ") + library_.name() +
                    (embedded_ ? " (embedded engine)" : " (nv-hostengine)") + " over " +
                    nvml_->Describe();
  if (paused_) out += "; DCGM profiling paused";
  if (!status_.empty()) out += "; " + status_;
  return out;
}

}  // namespace vigil
