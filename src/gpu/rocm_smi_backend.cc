// SPDX-License-Identifier: Apache-2.0
#include "gpu/rocm_smi_backend.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>

namespace vigil {
namespace {

// From rocm_smi.h.
using RsmiStatus = int;  // rsmi_status_t
constexpr RsmiStatus kRsmiSuccess = 0;
constexpr int kMemTypeVram = 0;      // RSMI_MEM_TYPE_VRAM
constexpr uint32_t kTempEdge = 0;    // RSMI_TEMP_TYPE_EDGE
constexpr uint32_t kTempMemory = 2;  // RSMI_TEMP_TYPE_MEMORY
constexpr int kTempCurrent = 0;      // RSMI_TEMP_CURRENT
constexpr int kClkSys = 0;           // RSMI_CLK_TYPE_SYS
constexpr int kClkMem = 4;           // RSMI_CLK_TYPE_MEM
struct RsmiVersion {                 // rsmi_version_t
  uint32_t major, minor, patch;
  const char* build;
};
struct RsmiProcessInfo {  // rsmi_process_info_t
  uint32_t process_id;
  uint32_t pasid;
  uint64_t vram_usage;
  uint64_t sdma_usage;
  uint32_t cu_occupancy;
};
static_assert(sizeof(RsmiProcessInfo) == 32);

}  // namespace

struct RocmSmiBackend::Api {
  RsmiStatus (*init)(uint64_t) = nullptr;
  RsmiStatus (*shut_down)() = nullptr;
  RsmiStatus (*num_monitor_devices)(uint32_t*) = nullptr;
  RsmiStatus (*version_get)(RsmiVersion*) = nullptr;
  RsmiStatus (*dev_name_get)(uint32_t, char*, size_t) = nullptr;
  RsmiStatus (*dev_unique_id_get)(uint32_t, uint64_t*) = nullptr;
  RsmiStatus (*dev_pci_id_get)(uint32_t, uint64_t*) = nullptr;
  RsmiStatus (*dev_busy_percent_get)(uint32_t, uint32_t*) = nullptr;
  RsmiStatus (*dev_memory_busy_percent_get)(uint32_t, uint32_t*) = nullptr;
  RsmiStatus (*dev_memory_total_get)(uint32_t, int, uint64_t*) = nullptr;
  RsmiStatus (*dev_memory_usage_get)(uint32_t, int, uint64_t*) = nullptr;
  RsmiStatus (*dev_current_socket_power_get)(uint32_t, uint64_t*) = nullptr;  // uW, ROCm 6+
  RsmiStatus (*dev_power_ave_get)(uint32_t, uint32_t, uint64_t*) = nullptr;   // uW
  RsmiStatus (*dev_energy_count_get)(uint32_t, uint64_t*, float*, uint64_t*) = nullptr;
  RsmiStatus (*dev_temp_metric_get)(uint32_t, uint32_t, int, int64_t*) = nullptr;  // m°C
  RsmiStatus (*dev_gpu_clk_freq_get)(uint32_t, int, void*) = nullptr;              // Hz
  RsmiStatus (*compute_process_info_get)(RsmiProcessInfo*, uint32_t*) = nullptr;
  RsmiStatus (*compute_process_gpus_get)(uint32_t, uint32_t*, uint32_t*) = nullptr;
  std::vector<std::string> missing;
};

namespace {

template <typename Fn>
void Bind(const DlLibrary& lib, Fn* slot, const char* name, std::vector<std::string>* missing) {
  *slot = reinterpret_cast<Fn>(lib.Symbol(name));
  if (*slot == nullptr) missing->push_back(name);
}

// Current clock in Hz from an rsmi_frequencies_t of either layout.
std::optional<double> CurrentClock(const uint8_t* buf, bool v6) {
  const size_t base = v6 ? 4 : 0;  // v6: bool has_deep_sleep first (padded to 4).
  uint32_t num = 0, current = 0;
  std::memcpy(&num, buf + base, 4);
  std::memcpy(&current, buf + base + 4, 4);
  const size_t freq_off = v6 ? 16 : 8;
  const uint32_t slots = v6 ? 33 : 32;
  if (num == 0 || num > slots || current >= num) return std::nullopt;
  uint64_t hz = 0;
  std::memcpy(&hz, buf + freq_off + 8 * current, 8);
  return static_cast<double>(hz);
}

}  // namespace

StatusOr<std::unique_ptr<RocmSmiBackend>> RocmSmiBackend::Create(const std::string& library) {
  std::unique_ptr<RocmSmiBackend> b(new RocmSmiBackend());
  std::string errors;
  const std::vector<std::string> names =
      library.empty() ? std::vector<std::string>{"librocm_smi64.so.7", "librocm_smi64.so.6",
                                                 "librocm_smi64.so.5", "librocm_smi64.so"}
                      : std::vector<std::string>{library};
  for (const std::string& name : names) {
    auto lib = DlLibrary::Open(name);
    if (lib.ok()) {
      b->library_ = std::move(lib).value();
      break;
    }
    errors += (errors.empty() ? "" : "; ") + lib.status().message();
  }
  if (!b->library_.loaded()) return NotFoundError("ROCm SMI not found: " + errors);
  b->api_ = std::make_unique<Api>();
  Api& a = *b->api_;
  auto* miss = &a.missing;
  const DlLibrary& l = b->library_;
  Bind(l, &a.init, "rsmi_init", miss);
  Bind(l, &a.shut_down, "rsmi_shut_down", miss);
  Bind(l, &a.num_monitor_devices, "rsmi_num_monitor_devices", miss);
  if (!a.init || !a.shut_down || !a.num_monitor_devices) {
    return FailedPreconditionError(l.name() + ": lacks rsmi_init/rsmi_num_monitor_devices");
  }
  Bind(l, &a.version_get, "rsmi_version_get", miss);
  Bind(l, &a.dev_name_get, "rsmi_dev_name_get", miss);
  Bind(l, &a.dev_unique_id_get, "rsmi_dev_unique_id_get", miss);
  Bind(l, &a.dev_pci_id_get, "rsmi_dev_pci_id_get", miss);
  Bind(l, &a.dev_busy_percent_get, "rsmi_dev_busy_percent_get", miss);
  Bind(l, &a.dev_memory_busy_percent_get, "rsmi_dev_memory_busy_percent_get", miss);
  Bind(l, &a.dev_memory_total_get, "rsmi_dev_memory_total_get", miss);
  Bind(l, &a.dev_memory_usage_get, "rsmi_dev_memory_usage_get", miss);
  Bind(l, &a.dev_current_socket_power_get, "rsmi_dev_current_socket_power_get", miss);
  Bind(l, &a.dev_power_ave_get, "rsmi_dev_power_ave_get", miss);
  Bind(l, &a.dev_energy_count_get, "rsmi_dev_energy_count_get", miss);
  Bind(l, &a.dev_temp_metric_get, "rsmi_dev_temp_metric_get", miss);
  Bind(l, &a.dev_gpu_clk_freq_get, "rsmi_dev_gpu_clk_freq_get", miss);
  Bind(l, &a.compute_process_info_get, "rsmi_compute_process_info_get", miss);
  Bind(l, &a.compute_process_gpus_get, "rsmi_compute_process_gpus_get", miss);
  if (RsmiStatus rc = a.init(0); rc != kRsmiSuccess) {
    return UnavailableError("rsmi_init: status " + std::to_string(rc));
  }
  if (a.version_get) {
    RsmiVersion v{};
    if (a.version_get(&v) == kRsmiSuccess) b->version_major_ = v.major;
  }
  uint32_t count = 0;
  if (RsmiStatus rc = a.num_monitor_devices(&count); rc != kRsmiSuccess) {
    a.shut_down();
    return UnavailableError("rsmi_num_monitor_devices: status " + std::to_string(rc));
  }
  for (uint32_t i = 0; i < count; ++i) {
    char name[128] = {};
    if (a.dev_name_get) a.dev_name_get(i, name, sizeof name);
    uint64_t id = 0;
    char uuid[48];
    if (a.dev_unique_id_get && a.dev_unique_id_get(i, &id) == kRsmiSuccess) {
      std::snprintf(uuid, sizeof uuid, "AMD-%016llx", static_cast<unsigned long long>(id));
    } else {
      std::snprintf(uuid, sizeof uuid, "AMD-index-%u", i);
    }
    uint64_t bdf = 0;
    char pci[32] = {};
    if (a.dev_pci_id_get && a.dev_pci_id_get(i, &bdf) == kRsmiSuccess) {
      // BDFID = domain << 32 | bus << 8 | device << 3 | function.
      std::snprintf(pci, sizeof pci, "%08llX:%02llX:%02llX.%llX",
                    static_cast<unsigned long long>(bdf >> 32),
                    static_cast<unsigned long long>((bdf >> 8) & 0xff),
                    static_cast<unsigned long long>((bdf >> 3) & 0x1f),
                    static_cast<unsigned long long>(bdf & 0x7));
    }
    b->names_.push_back(name);
    b->uuids_.push_back(uuid);
    b->pci_.push_back(pci);
  }
  return b;
}

RocmSmiBackend::~RocmSmiBackend() {
  if (api_ && api_->shut_down) api_->shut_down();
}

Status RocmSmiBackend::Read(std::vector<GpuReading>* out) {
  const Api& a = *api_;
  out->assign(uuids_.size(), GpuReading{});
  std::map<uint32_t, std::vector<GpuProcess>> procs;
  bool procs_known = false;
  if (a.compute_process_info_get && a.compute_process_gpus_get) {
    uint32_t n = 0;
    if (a.compute_process_info_get(nullptr, &n) == kRsmiSuccess) {
      std::vector<RsmiProcessInfo> list(n + 8);
      uint32_t cap = static_cast<uint32_t>(list.size());
      if (a.compute_process_info_get(list.data(), &cap) == kRsmiSuccess) {
        procs_known = true;
        for (uint32_t i = 0; i < cap && i < list.size(); ++i) {
          uint32_t devs[64];
          uint32_t ndev = 64;
          if (a.compute_process_gpus_get(list[i].process_id, devs, &ndev) != kRsmiSuccess) continue;
          for (uint32_t d = 0; d < ndev && d < 64; ++d) {
            // Per-process VRAM is reported for the process as a whole; split evenly.
            procs[devs[d]].push_back({static_cast<int>(list[i].process_id),
                                      ndev ? list[i].vram_usage / ndev : 0, std::nullopt,
                                      std::nullopt, std::nullopt});
          }
        }
      }
    }
  }
  for (uint32_t i = 0; i < uuids_.size(); ++i) {
    GpuReading& r = (*out)[i];
    r.index = static_cast<int>(i);
    r.uuid = uuids_[i];
    r.name = names_[i];
    r.pci_bus_id = pci_[i];
    uint32_t pct = 0;
    if (a.dev_busy_percent_get && a.dev_busy_percent_get(i, &pct) == kRsmiSuccess) {
      r.utilization_ratio = pct / 100.0;
    }
    if (a.dev_memory_busy_percent_get && a.dev_memory_busy_percent_get(i, &pct) == kRsmiSuccess) {
      r.memory_utilization_ratio = pct / 100.0;
    }
    uint64_t total = 0, used = 0;
    if (a.dev_memory_total_get && a.dev_memory_total_get(i, kMemTypeVram, &total) == kRsmiSuccess) {
      r.memory_total_bytes = static_cast<double>(total);
      if (a.dev_memory_usage_get &&
          a.dev_memory_usage_get(i, kMemTypeVram, &used) == kRsmiSuccess) {
        r.memory_used_bytes = static_cast<double>(used);
        r.memory_free_bytes = static_cast<double>(total - std::min(total, used));
      }
    }
    uint64_t uw = 0;
    if (a.dev_current_socket_power_get && a.dev_current_socket_power_get(i, &uw) == kRsmiSuccess) {
      r.power_watts = uw / 1e6;
    } else if (a.dev_power_ave_get && a.dev_power_ave_get(i, 0, &uw) == kRsmiSuccess) {
      r.power_watts = uw / 1e6;
    }
    uint64_t counter = 0, ts = 0;
    float resolution_uj = 0;
    if (a.dev_energy_count_get &&
        a.dev_energy_count_get(i, &counter, &resolution_uj, &ts) == kRsmiSuccess) {
      r.energy_joules = static_cast<double>(counter) * resolution_uj / 1e6;
    }
    int64_t mc = 0;
    if (a.dev_temp_metric_get &&
        a.dev_temp_metric_get(i, kTempEdge, kTempCurrent, &mc) == kRsmiSuccess) {
      r.temperature_celsius = mc / 1000.0;
    }
    if (a.dev_temp_metric_get &&
        a.dev_temp_metric_get(i, kTempMemory, kTempCurrent, &mc) == kRsmiSuccess) {
      r.memory_temperature_celsius = mc / 1000.0;
    }
    if (a.dev_gpu_clk_freq_get) {
      alignas(8) uint8_t buf[512] = {};
      if (a.dev_gpu_clk_freq_get(i, kClkSys, buf) == kRsmiSuccess) {
        r.sm_clock_hz = CurrentClock(buf, version_major_ >= 6);
      }
      std::memset(buf, 0, sizeof buf);
      if (a.dev_gpu_clk_freq_get(i, kClkMem, buf) == kRsmiSuccess) {
        r.memory_clock_hz = CurrentClock(buf, version_major_ >= 6);
      }
    }
    r.processes_known = procs_known;
    if (auto it = procs.find(i); it != procs.end()) r.processes = it->second;
    r.status = "no pipe activity from ROCm SMI: no FLOP/s estimate";
  }
  return OkStatus();
}

std::string RocmSmiBackend::Describe() const {
  std::string out = "amd " + library_.name() + " (ROCm SMI major " +
                    std::to_string(version_major_) + "), " + std::to_string(uuids_.size()) +
                    " GPU(s); no pipe activity, so no FLOP/s estimate";
  if (!api_->missing.empty()) {
    out += "; missing symbols:";
    for (const std::string& m : api_->missing) out += " " + m;
  }
  return out;
}

}  // namespace vigil
