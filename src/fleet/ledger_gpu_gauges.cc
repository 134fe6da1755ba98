// SPDX-License-Identifier: Apache-2.0
// The gauges of the per-GPU and per-host pages in the ledger (ledger_ingest.h): utilisation,
// memory used and total, power and temperature as the daemons push them, summed with their
// counts per GPU and minute (a minute's mean is sum / n) and written to gpu_minute_gauges in the
// batch's transaction. SM activity and the FLOP/s estimate stay in ledger_minute, energy is the
// integrated counter there.
#include <cmath>
#include <string_view>

#include "base/time_util.h"
#include "fleet/ledger_ingest.h"

namespace vigil {
namespace {

struct GpuGaugeField {
  std::string_view name;
  double GpuGaugeCell::*sum;
  int64_t GpuGaugeCell::*n;
};

constexpr GpuGaugeField kGpuGauges[] = {
    {"vigil_gpu_utilization_ratio", &GpuGaugeCell::util_sum, &GpuGaugeCell::util_n},
    {"vigil_gpu_memory_used_bytes", &GpuGaugeCell::mem_used_sum, &GpuGaugeCell::mem_used_n},
    {"vigil_gpu_memory_total_bytes", &GpuGaugeCell::mem_total_sum, &GpuGaugeCell::mem_total_n},
    {"vigil_gpu_power_watts", &GpuGaugeCell::power_sum, &GpuGaugeCell::power_n},
    {"vigil_gpu_temperature_celsius", &GpuGaugeCell::temp_sum, &GpuGaugeCell::temp_n},
};

}  // namespace

bool LedgerIngestor::GpuGauge(const IngestSample& s, int64_t gpu_id) {
  for (const GpuGaugeField& g : kGpuGauges) {
    if (s.name != g.name) continue;
    // A temperature may be below zero; nothing else may, and nothing may be NaN or infinite.
    if (!std::isfinite(s.value) || (s.value < 0 && g.sum != &GpuGaugeCell::temp_sum)) {
      return false;
    }
    GpuGaugeCell& cell = gpu_gauges_[{gpu_id, FloorDiv(s.time_ns, kNanosPerMinute) * 60}];
    cell.*g.sum += s.value;
    ++(cell.*g.n);
    return true;
  }
  return false;
}

Status FlushGpuGauges(Db& db, const GpuGaugeCells& cells) {
  if (cells.empty()) {
    return OkStatus();
  }
  VIGIL_ASSIGN_OR_RETURN(
      Stmt stmt,
      db.Prepare("INSERT INTO gpu_minute_gauges (gpu_id, minute_s, util_sum, util_n,"
                 " mem_used_sum, mem_used_n, mem_total_sum, mem_total_n, power_sum, power_n,"
                 " temp_sum, temp_n) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
                 " ON CONFLICT (gpu_id, minute_s) DO UPDATE SET"
                 " util_sum=util_sum+excluded.util_sum, util_n=util_n+excluded.util_n,"
                 " mem_used_sum=mem_used_sum+excluded.mem_used_sum,"
                 " mem_used_n=mem_used_n+excluded.mem_used_n,"
                 " mem_total_sum=mem_total_sum+excluded.mem_total_sum,"
                 " mem_total_n=mem_total_n+excluded.mem_total_n,"
                 " power_sum=power_sum+excluded.power_sum, power_n=power_n+excluded.power_n,"
                 " temp_sum=temp_sum+excluded.temp_sum, temp_n=temp_n+excluded.temp_n"));
  for (const auto& [key, c] : cells) {
    VIGIL_RETURN_IF_ERROR(stmt.Bind(1, key.first)
                              .Bind(2, key.second)
                              .Bind(3, c.util_sum)
                              .Bind(4, c.util_n)
                              .Bind(5, c.mem_used_sum)
                              .Bind(6, c.mem_used_n)
                              .Bind(7, c.mem_total_sum)
                              .Bind(8, c.mem_total_n)
                              .Bind(9, c.power_sum)
                              .Bind(10, c.power_n)
                              .Bind(11, c.temp_sum)
                              .Bind(12, c.temp_n)
                              .Run());
  }
  return OkStatus();
}

}  // namespace vigil
