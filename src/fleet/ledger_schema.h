// SPDX-License-Identifier: Apache-2.0
// The ledger's SQLite schema and its migrations (PRAGMA user_version). Keys are time-first so
// windowed queries and retention are range scans. Tables (docs/fleet.md describes each column):
//   ledger_minute (minute_s, gpu_id, job_key)  per GPU, per job, per minute; job_key 0 is the GPU's
//                                               own row (wall seconds, device energy, SM, FLOP/s)
//   job_hour      (hour_s, job_key)            hourly rollup per job
//   host_hour     (hour_s, host_id, gpu_model) hourly rollup per host and GPU model
//   hosts, gpus, jobs, job_gpus                inventory
//   batches (host, batch_id)                   idempotency of ingest
//   series                                     differencing state of every counter series
//   job_minute_metrics (job_id, minute_s)      libvigil_client's MFU, model FLOPs, step time,
//                                               device-seconds per input byte
//   gpu_minute_gauges (gpu_id, minute_s)       per GPU utilisation, memory, power, temperature
//   analyses, analysis_insights                stored vigil analyze reports (analysis_store.h)
//   profiling_requests, profiling_decisions    fleet profiling (profiling_service.h)
//   cpu_profiles                               continuous CPU profiles (cpu_profile_store.h)
//   retention_cuts (table_name)                how far retention deleted ledger_minute
// Owner: fleet. Not thread-safe: called once by LedgerStore::Open before any other use.
#pragma once

#include "base/status.h"
#include "fleet/sqlite_db.h"

namespace vigil {

inline constexpr int kLedgerSchemaVersion = 8;

// Sets WAL mode and the pragmas, then applies every migration above the file's user_version.
// A file written by a newer schema is FailedPrecondition.
Status MigrateLedger(Db& db);

}  // namespace vigil
