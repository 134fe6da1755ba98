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
