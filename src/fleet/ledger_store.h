// SPDX-License-Identifier: Apache-2.0
// The fleet ledger: a SQLite file (WAL mode, ./var/fleet.db by default) holding per GPU, per job,
// per minute accounting, hourly rollups and the host/GPU/job inventory (schema in
// ledger_schema.cc). Ingest() applies one pushed batch in one transaction: either all of its
// contributions, its differencing state and its (host, batch_id) idempotency row commit, or none
// do. Queries read through a second connection, so they never wait on the writer.
// Owner: fleet. Thread-safe: writes are serialised by one mutex, reads by another.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

#include "base/status.h"
#include "fleet/ingest_batch.h"
#include "fleet/ledger_ingest.h"
#include "fleet/sqlite_db.h"

namespace vigil {

struct LedgerOptions {
  std::string path = "./var/fleet.db";  // ":memory:" works for tests of one connection only.
  int64_t retention_ns = 90LL * 86400 * 1000000000;          // Minute rows and series state.
  int64_t rollup_retention_ns = 400LL * 86400 * 1000000000;  // Hourly rollups.
  int64_t batch_window_ns = 7LL * 86400 * 1000000000;        // Idempotency rows kept this long.
  int64_t max_gap_ns = LedgerIngestor::kDefaultMaxGapNs;
};

struct IngestResult {
  bool duplicate = false;  // (host, batch_id) was ingested before; nothing changed.
  IngestStats stats;
};

class LedgerStore : private LedgerIds {
 public:
  // Creates the parent directory and the file when missing and migrates the schema.
  static StatusOr<std::unique_ptr<LedgerStore>> Open(LedgerOptions options);
  ~LedgerStore() override;

  StatusOr<IngestResult> Ingest(const IngestBatch& batch, int64_t received_ns);
  // Deletes what is older than the retention windows, measured back from now_ns.
  Status ApplyRetention(int64_t now_ns);
  // Runs `fn` on the read connection (serialised with other reads).
  template <typename T>
  StatusOr<T> Read(const std::function<StatusOr<T>(Db&)>& fn) {
    std::lock_guard<std::mutex> lock(read_mu_);
    return fn(*reader_);
  }
  const LedgerOptions& options() const { return options_; }

 private:
  struct GpuInfo {
    int64_t id = 0;
    std::string model;
  };

  LedgerStore(LedgerOptions options, std::unique_ptr<Db> writer, std::unique_ptr<Db> reader);
  Status Prepare();
  Status LoadSeries();
  StatusOr<IngestResult> IngestLocked(const IngestBatch& batch, int64_t received_ns);
  Status FlushCells(const LedgerCells& cells);
  Status FlushSeries();
  Status UpdateInventory(const IngestBatch& batch, int64_t received_ns);
  StatusOr<int64_t> HostId(const std::string& name, int64_t now_ns);

  int64_t GpuId(std::string_view uuid, std::string_view gpu_model, int64_t time_ns) override;
  int64_t JobKey(const JobIdent& job, int64_t gpu_id, int64_t time_ns) override;

  const LedgerOptions options_;
  std::mutex write_mu_;
  std::unique_ptr<Db> writer_;
  LedgerIngestor ingestor_;
  std::map<std::string, Stmt> stmts_;  // Prepared writer statements by name.
  // Id caches; cleared after a rolled back batch.
  std::unordered_map<std::string, int64_t> host_ids_;
  std::map<std::pair<int64_t, std::string>, GpuInfo> gpus_;
  std::unordered_map<int64_t, std::string> gpu_models_;
  std::unordered_map<std::string, int64_t> job_keys_;
  std::set<std::pair<int64_t, int64_t>> job_gpus_;
  // The batch being ingested.
  int64_t batch_host_id_ = 0;
  Status batch_error_;
  std::map<int64_t, std::pair<int64_t, int64_t>> batch_jobs_;  // job_key -> first, last ns.
  std::map<int64_t, int64_t> batch_gpus_;                      // gpu_id -> last ns.

  std::mutex read_mu_;
  std::unique_ptr<Db> reader_;
};

}  // namespace vigil
