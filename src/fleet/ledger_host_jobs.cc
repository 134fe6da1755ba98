// SPDX-License-Identifier: Apache-2.0
#include "fleet/ledger_host_jobs.h"

#include "base/strings.h"

namespace vigil {

StatusOr<bool> JobSeenOnHost(Db& db, std::string_view host, std::string_view job_id) {
  // jobs_by_id, then the primary keys of job_gpus, gpus and hosts: a few rows per job identity.
  VIGIL_ASSIGN_OR_RETURN(
      Stmt st, db.Prepare("SELECT 1 FROM jobs j JOIN job_gpus jg ON jg.job_key = j.job_key"
                          " JOIN gpus g ON g.gpu_id = jg.gpu_id JOIN hosts h ON h.host_id = "
                          "g.host_id WHERE j.job_id = ?1 AND h.name = ?2 LIMIT 1"));
  st.Bind(1, job_id).Bind(2, host);
  return st.Step();
}

Status CheckJobOnHost(LedgerStore& store, const std::string& host, const std::string& job_id) {
  VIGIL_ASSIGN_OR_RETURN(bool seen,
                         store.Read<bool>([&](Db& db) { return JobSeenOnHost(db, host, job_id); }));
  if (seen) return OkStatus();
  return PermissionDeniedError(
      "job " + SanitizeForLog(job_id, 128) + " was never reported by host " +
      SanitizeForLog(host, 64) +
      ": a host's token writes only about the jobs that host runs (an "
      "operator token, \"@operator TOKEN\" in --token-file, may name any)");
}

}  // namespace vigil
