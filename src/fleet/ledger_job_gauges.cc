// SPDX-License-Identifier: Apache-2.0
// libvigil_client's job gauges in the ledger (ledger_ingest.h): MFU, model FLOPs per step, step
// time and device-seconds per input byte. The ones that count (a job id, a
// finite value >= 0, a job the pushing host reported), summed per job id and minute, and written
// to job_minute_metrics in the batch's transaction.
#include <cmath>
#include <map>
#include <string>

#include "base/time_util.h"
#include "fleet/ledger_ingest.h"

namespace vigil {
namespace {

constexpr int64_t kMinuteNs = kNanosPerMinute;

struct JobGaugeField {
  std::string_view name;
  double JobMetricCell::*sum;
  int64_t JobMetricCell::*n;
};

constexpr JobGaugeField kJobGauges[] = {
    {"vigil_job_mfu_ratio", &JobMetricCell::mfu_sum, &JobMetricCell::mfu_n},
    {"vigil_job_model_flops", &JobMetricCell::flops_sum, &JobMetricCell::flops_n},
    {"vigil_job_step_seconds", &JobMetricCell::step_s_sum, &JobMetricCell::step_n},
    {"vigil_job_device_seconds_per_input_byte", &JobMetricCell::dspib_sum, &JobMetricCell::dspib_n},
};

}  // namespace

void LedgerIngestor::JobGauge(const IngestSample& s, LedgerIds& ids,
                              std::map<std::string, bool>* on_host, IngestStats* stats) {
  const std::string_view job_id = LabelValue(s.labels, "job_id");
  if (job_id.empty() || !std::isfinite(s.value) || s.value < 0) {
    return;
  }
  for (const JobGaugeField& g : kJobGauges) {
    if (s.name == g.name) {
      auto [known, fresh] = on_host->try_emplace(std::string(job_id), false);
      if (fresh) known->second = ids.JobOnHost(job_id);
      if (!known->second) {
        ++stats->foreign;
        return;
      }
      JobMetricCell& cell =
          job_metrics_[{FloorDiv(s.time_ns, kMinuteNs) * 60, std::string(job_id)}];
      cell.*g.sum += s.value;
      ++(cell.*g.n);
      ++stats->used;
      return;
    }
  }
}

Status FlushJobMetrics(Db& db, const JobMetricCells& cells) {
  if (cells.empty()) {
    return OkStatus();
  }
  VIGIL_ASSIGN_OR_RETURN(
      Stmt stmt,
      db.Prepare("INSERT INTO job_minute_metrics (job_id, minute_s, mfu_sum, mfu_n, flops_sum,"
                 " flops_n, step_s_sum, step_n, dspib_sum, dspib_n)"
                 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
                 " ON CONFLICT (job_id, minute_s) DO UPDATE SET mfu_sum=mfu_sum+excluded.mfu_sum,"
                 " mfu_n=mfu_n+excluded.mfu_n, flops_sum=flops_sum+excluded.flops_sum,"
                 " flops_n=flops_n+excluded.flops_n, step_s_sum=step_s_sum+excluded.step_s_sum,"
                 " step_n=step_n+excluded.step_n, dspib_sum=dspib_sum+excluded.dspib_sum,"
                 " dspib_n=dspib_n+excluded.dspib_n"));
  for (const auto& [key, c] : cells) {
    VIGIL_RETURN_IF_ERROR(stmt.Bind(1, key.second)
                              .Bind(2, key.first)
                              .Bind(3, c.mfu_sum)
                              .Bind(4, c.mfu_n)
                              .Bind(5, c.flops_sum)
                              .Bind(6, c.flops_n)
                              .Bind(7, c.step_s_sum)
                              .Bind(8, c.step_n)
                              .Bind(9, c.dspib_sum)
                              .Bind(10, c.dspib_n)
                              .Run());
  }
  return OkStatus();
}

}  // namespace vigil
