// SPDX-License-Identifier: Apache-2.0
// LedgerStore's checks of what a batch may write, made in its transaction before or while it is
// applied: the per-host limits (ledger_limits.h) and, for libvigil_client's job gauges, whether
// the pushing host reported the job (ledger_host_jobs.h). The rest of the store is in
// ledger_store.cc.
#include "base/logging.h"
#include "base/strings.h"
#include "fleet/ledger_host_jobs.h"
#include "fleet/ledger_store.h"

namespace vigil {

std::optional<LimitRefusal> LedgerStore::Admit(const IngestBatch& batch) {
  const LedgerLimits& limits = options_.limits;
  std::optional<LimitRefusal> refusal = CheckLabelLimits(batch, limits);
  if (!refusal && limits.max_series_per_host > 0) {
    refusal = CheckSeriesLimit(batch.host, ingestor_.series_of_host(batch.host),
                               ingestor_.NewSeries(batch), limits);
  }
  if (refusal) {
    limit_refusals_.fetch_add(1);
    VIGIL_LOG_EVERY_N_SEC(WARN, 10, "ingest refused: host={} limit={} refusals={} why={}",
                          SanitizeForLog(batch.host, 64), refusal->limit, limit_refusals_.load(),
                          refusal->message);
  }
  return refusal;
}

void LedgerStore::CountForeign(const std::string& host, uint64_t samples) {
  foreign_job_samples_.fetch_add(samples);
  VIGIL_LOG_EVERY_N_SEC(WARN, 10,
                        "ingest: dropped job gauges of jobs the host never reported: host={} "
                        "samples={} total={}",
                        SanitizeForLog(host, 64), samples, foreign_job_samples_.load());
}

bool LedgerStore::JobOnHost(std::string_view job_id) {
  StatusOr<bool> seen = JobSeenOnHost(*writer_, *batch_host_, job_id);
  if (!seen.ok()) {
    if (batch_error_.ok()) batch_error_ = seen.status();
    return false;
  }
  return *seen;
}

}  // namespace vigil
