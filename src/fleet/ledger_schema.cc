// SPDX-License-Identifier: Apache-2.0
#include "fleet/ledger_schema.h"

#include <string>

namespace vigil {
namespace {

// Migration N takes a database from user_version N-1 to N. Append, never edit.
constexpr const char* kMigrations[] = {
    // 1: the first ledger.
    R"sql(
CREATE TABLE hosts (
  host_id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,
  first_seen_ns INTEGER NOT NULL, last_seen_ns INTEGER NOT NULL, last_sample_ns INTEGER NOT NULL,
  gpus INTEGER NOT NULL DEFAULT 0, driver TEXT NOT NULL DEFAULT '',
  daemon_version TEXT NOT NULL DEFAULT '', health TEXT NOT NULL DEFAULT 'unknown',
  last_seq INTEGER NOT NULL DEFAULT 0, batches INTEGER NOT NULL DEFAULT 0,
  samples INTEGER NOT NULL DEFAULT 0);
CREATE TABLE gpus (
  gpu_id INTEGER PRIMARY KEY, host_id INTEGER NOT NULL, uuid TEXT NOT NULL,
  gpu_model TEXT NOT NULL DEFAULT '', last_seen_ns INTEGER NOT NULL DEFAULT 0,
  UNIQUE (host_id, uuid));
CREATE TABLE jobs (
  job_key INTEGER PRIMARY KEY, job_id TEXT NOT NULL, user TEXT NOT NULL, team TEXT NOT NULL,
  model TEXT NOT NULL, framework TEXT NOT NULL, rule TEXT NOT NULL,
  first_seen_ns INTEGER NOT NULL, last_seen_ns INTEGER NOT NULL,
  UNIQUE (job_id, user, team, model, framework, rule));
CREATE INDEX jobs_by_id ON jobs (job_id);
CREATE TABLE job_gpus (
  job_key INTEGER NOT NULL, gpu_id INTEGER NOT NULL, PRIMARY KEY (job_key, gpu_id)) WITHOUT ROWID;
CREATE TABLE batches (
  host TEXT NOT NULL, batch_id TEXT NOT NULL, seq INTEGER NOT NULL, received_ns INTEGER NOT NULL,
  samples INTEGER NOT NULL, PRIMARY KEY (host, batch_id)) WITHOUT ROWID;
CREATE INDEX batches_by_time ON batches (received_ns);
CREATE TABLE series (
  series_id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE,
  first_ns INTEGER NOT NULL, first_v REAL NOT NULL, last_ns INTEGER NOT NULL, last_v REAL NOT NULL,
  interval_ns INTEGER NOT NULL);
CREATE TABLE ledger_minute (
  minute_s INTEGER NOT NULL, gpu_id INTEGER NOT NULL, job_key INTEGER NOT NULL,
  wall_s REAL NOT NULL DEFAULT 0, alloc_s REAL NOT NULL DEFAULT 0, busy_s REAL NOT NULL DEFAULT 0,
  held_idle_s REAL NOT NULL DEFAULT 0, energy_j REAL NOT NULL DEFAULT 0,
  sm_sum REAL NOT NULL DEFAULT 0, sm_n INTEGER NOT NULL DEFAULT 0,
  flops_sum REAL NOT NULL DEFAULT 0, flops_n INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (minute_s, gpu_id, job_key)) WITHOUT ROWID;
CREATE TABLE job_hour (
  hour_s INTEGER NOT NULL, job_key INTEGER NOT NULL,
  alloc_s REAL NOT NULL DEFAULT 0, busy_s REAL NOT NULL DEFAULT 0,
  held_idle_s REAL NOT NULL DEFAULT 0, energy_j REAL NOT NULL DEFAULT 0,
  PRIMARY KEY (hour_s, job_key)) WITHOUT ROWID;
CREATE TABLE host_hour (
  hour_s INTEGER NOT NULL, host_id INTEGER NOT NULL, gpu_model TEXT NOT NULL,
  wall_s REAL NOT NULL DEFAULT 0, alloc_s REAL NOT NULL DEFAULT 0, busy_s REAL NOT NULL DEFAULT 0,
  held_idle_s REAL NOT NULL DEFAULT 0, energy_j REAL NOT NULL DEFAULT 0,
  sm_sum REAL NOT NULL DEFAULT 0, sm_n INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (hour_s, host_id, gpu_model)) WITHOUT ROWID;
)sql",
    // 2: libvigil_client's job gauges (vigil_job_mfu_ratio, vigil_job_model_flops,
    //    vigil_job_step_seconds) per job id and minute, as sums and counts of the reported values.
    R"sql(
CREATE TABLE job_minute_metrics (
  job_id TEXT NOT NULL, minute_s INTEGER NOT NULL,
  mfu_sum REAL NOT NULL DEFAULT 0, mfu_n INTEGER NOT NULL DEFAULT 0,
  flops_sum REAL NOT NULL DEFAULT 0, flops_n INTEGER NOT NULL DEFAULT 0,
  step_s_sum REAL NOT NULL DEFAULT 0, step_n INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (job_id, minute_s)) WITHOUT ROWID;
CREATE INDEX job_minute_metrics_by_time ON job_minute_metrics (minute_s);
)sql",
    // 3: analyses of traces (vigil analyze reports, fleet/analysis_store.h) and their insights.
    R"sql(
CREATE TABLE analyses (
  analysis_id INTEGER PRIMARY KEY, job_id TEXT NOT NULL, host TEXT NOT NULL DEFAULT '',
  received_ns INTEGER NOT NULL, trace_start_ns INTEGER NOT NULL DEFAULT 0,
  trace_end_ns INTEGER NOT NULL DEFAULT 0, source TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '',
  trace_path TEXT NOT NULL DEFAULT '', ranks INTEGER NOT NULL DEFAULT 0,
  steps INTEGER NOT NULL DEFAULT 0, span_s REAL NOT NULL DEFAULT 0,
  compute_s REAL NOT NULL DEFAULT 0, comm_s REAL NOT NULL DEFAULT 0,
  memory_s REAL NOT NULL DEFAULT 0, idle_s REAL NOT NULL DEFAULT 0,
  other_s REAL NOT NULL DEFAULT 0, insights INTEGER NOT NULL DEFAULT 0,
  max_gain_pct REAL NOT NULL DEFAULT 0, report_bytes INTEGER NOT NULL, report_gz BLOB NOT NULL);
CREATE INDEX analyses_by_time ON analyses (received_ns);
CREATE INDEX analyses_by_job ON analyses (job_id, received_ns);
CREATE TABLE analysis_insights (
  analysis_id INTEGER NOT NULL, seq INTEGER NOT NULL, insight TEXT NOT NULL,
  severity TEXT NOT NULL, title TEXT NOT NULL DEFAULT '',
  estimated_gain_pct REAL NOT NULL DEFAULT 0, PRIMARY KEY (analysis_id, seq)) WITHOUT ROWID;
CREATE INDEX analysis_insights_by_insight ON analysis_insights (insight);
)sql",
    // 4: fleet profiling (profiling_service.h): each daemon's control RPC address, the
    //    profiling requests with their per-host states and files, and the automatic trigger's
    //    decisions (profiling_triggers.h).
    R"sql(
ALTER TABLE hosts ADD COLUMN rpc_address TEXT NOT NULL DEFAULT '';
CREATE TABLE profiling_requests (
  request_id TEXT PRIMARY KEY, job_id TEXT NOT NULL, reason TEXT NOT NULL,
  trigger TEXT NOT NULL, duration_ms INTEGER NOT NULL, iterations INTEGER NOT NULL,
  state TEXT NOT NULL, created_ns INTEGER NOT NULL, updated_ns INTEGER NOT NULL,
  deadline_ns INTEGER NOT NULL, hosts_json TEXT NOT NULL DEFAULT '[]',
  files_json TEXT NOT NULL DEFAULT '[]', analysis_id INTEGER, error TEXT NOT NULL DEFAULT '',
  trace_dir TEXT NOT NULL DEFAULT '') WITHOUT ROWID;
CREATE INDEX profiling_requests_by_job ON profiling_requests (job_id, created_ns);
CREATE TABLE profiling_decisions (
  decision_id INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL, job_id TEXT NOT NULL,
  decision TEXT NOT NULL, reason TEXT NOT NULL, request_id TEXT NOT NULL DEFAULT '');
CREATE INDEX profiling_decisions_by_job ON profiling_decisions (job_id, time_ns);
)sql",
    // 5: % of roofline of each analysis (the ranks' roofline objects summed): roofline time and
    //    replayed device time where the GPU has peaks, kernel time and its modelled part.
    R"sql(
ALTER TABLE analyses ADD COLUMN roofline_s REAL NOT NULL DEFAULT 0;
ALTER TABLE analyses ADD COLUMN replayed_s REAL NOT NULL DEFAULT 0;
ALTER TABLE analyses ADD COLUMN kernel_s REAL NOT NULL DEFAULT 0;
ALTER TABLE analyses ADD COLUMN modelled_s REAL NOT NULL DEFAULT 0;
)sql",
    // 6: the per-GPU page's gauges (vigil_gpu_utilization_ratio, vigil_gpu_memory_used_bytes,
    //    vigil_gpu_memory_total_bytes, vigil_gpu_power_watts, vigil_gpu_temperature_celsius) per
    //    GPU and minute, GPU first (one GPU's window is a range scan), an index of the minute
    //    rows by GPU for the same reason; and libvigil_client's
    //    vigil_job_device_seconds_per_input_byte beside the other job gauges.
    R"sql(
CREATE TABLE gpu_minute_gauges (
  gpu_id INTEGER NOT NULL, minute_s INTEGER NOT NULL,
  util_sum REAL NOT NULL DEFAULT 0, util_n INTEGER NOT NULL DEFAULT 0,
  mem_used_sum REAL NOT NULL DEFAULT 0, mem_used_n INTEGER NOT NULL DEFAULT 0,
  mem_total_sum REAL NOT NULL DEFAULT 0, mem_total_n INTEGER NOT NULL DEFAULT 0,
  power_sum REAL NOT NULL DEFAULT 0, power_n INTEGER NOT NULL DEFAULT 0,
  temp_sum REAL NOT NULL DEFAULT 0, temp_n INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (gpu_id, minute_s)) WITHOUT ROWID;
CREATE INDEX gpu_minute_gauges_by_time ON gpu_minute_gauges (minute_s);
CREATE INDEX ledger_minute_by_gpu ON ledger_minute (gpu_id, minute_s);
ALTER TABLE job_minute_metrics ADD COLUMN dspib_sum REAL NOT NULL DEFAULT 0;
ALTER TABLE job_minute_metrics ADD COLUMN dspib_n INTEGER NOT NULL DEFAULT 0;
)sql",
    // 7: CPU profiles from vigild's continuous mode (fleet/cpu_profile_store.h): one sampling
    //    window of one job on one host per row, the folded stacks gzipped.
    R"sql(
CREATE TABLE cpu_profiles (
  profile_id INTEGER PRIMARY KEY, job_id TEXT NOT NULL, host TEXT NOT NULL,
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, received_ns INTEGER NOT NULL,
  frequency_hz INTEGER NOT NULL, samples INTEGER NOT NULL, stacks INTEGER NOT NULL,
  folded_bytes INTEGER NOT NULL, folded_gz BLOB NOT NULL);
CREATE UNIQUE INDEX cpu_profiles_by_job_host ON cpu_profiles (job_id, host, start_ns);
CREATE INDEX cpu_profiles_by_job ON cpu_profiles (job_id, start_ns);
CREATE INDEX cpu_profiles_by_time ON cpu_profiles (received_ns);
)sql",
    // 8: how far retention has deleted a table's rows (rows before cut_s are gone), so a query
    //    knows which minute rows it can still read (ledger_window.h).
    R"sql(
CREATE TABLE retention_cuts (
  table_name TEXT PRIMARY KEY, cut_s INTEGER NOT NULL) WITHOUT ROWID;
)sql",
};

}  // namespace

Status MigrateLedger(Db& db) {
  // WAL: readers (the HTTP API) never block the ingest writer; NORMAL sync is durable across a
  // process crash, which is what a killed service needs.
  VIGIL_RETURN_IF_ERROR(
      db.Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=OFF;"
              "PRAGMA temp_store=MEMORY; PRAGMA cache_size=-65536;"));
  VIGIL_ASSIGN_OR_RETURN(Stmt version_stmt, db.Prepare("PRAGMA user_version"));
  VIGIL_ASSIGN_OR_RETURN(bool has_row, version_stmt.Step());
  const int64_t version = has_row ? version_stmt.Int(0) : 0;
  constexpr int64_t kLatest = sizeof(kMigrations) / sizeof(kMigrations[0]);
  static_assert(kLatest == kLedgerSchemaVersion);
  if (version > kLatest) {
    return FailedPreconditionError("ledger " + db.path() + " has schema " +
                                   std::to_string(version) + ", newer than this build's " +
                                   std::to_string(kLatest));
  }
  for (int64_t v = version; v < kLatest; ++v) {
    VIGIL_RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE"));
    Status status = db.Exec(kMigrations[v]);
    if (status.ok()) {
      status = db.Exec("PRAGMA user_version=" + std::to_string(v + 1));
    }
    if (!status.ok()) {
      db.Exec("ROLLBACK").IgnoreError();
      return status.WithContext("migrate ledger to schema " + std::to_string(v + 1));
    }
    VIGIL_RETURN_IF_ERROR(db.Exec("COMMIT"));
  }
  return OkStatus();
}

}  // namespace vigil
