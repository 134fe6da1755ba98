// SPDX-License-Identifier: Apache-2.0
// The fleet ledger: a SQLite file (WAL mode, ./var/fleet.db by default) holding per GPU, per job,
// per minute accounting, hourly rollups and the host/GPU/job inventory (schema in
// ledger_schema.cc). Ingest() applies one pushed batch atomically: either all of its
// contributions, its differencing state and its (host, batch_id) idempotency row commit, or none
// do. Group commit: batches that arrive while a commit is running queue up, and the next commit
// takes them all (at most max_group_batches) in one transaction with a SAVEPOINT per batch; a
// batch that fails rolls back to its savepoint only, and every caller returns after the commit
// that holds its batch (WAL, synchronous=NORMAL: durable across a crash of the process). Queries
// read through a small pool of other connections, so they never wait on the writer and run side
// by side (a dashboard page asks five at once).
// Owner: fleet. Thread-safe: the queue has one mutex, the writer another, the reader pool a third.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "fleet/ingest_batch.h"
#include "fleet/ledger_ingest.h"
#include "fleet/ledger_limits.h"
#include "fleet/sqlite_db.h"

namespace vigil {

struct LedgerOptions {
  std::string path = "./var/fleet.db";  // ":memory:" works for tests of one connection only.
  int64_t retention_ns = 90LL * 86400 * 1000000000;          // Minute rows.
  int64_t rollup_retention_ns = 400LL * 86400 * 1000000000;  // Hourly rollups.
  int64_t batch_window_ns = 7LL * 86400 * 1000000000;        // Idempotency rows and series state.
  int64_t max_gap_ns = LedgerIngestor::kDefaultMaxGapNs;
  int max_group_batches = 64;  // Batches committed by one transaction at most.
  int readers = 4;             // Read connections (queries running at once).
  LedgerLimits limits;         // What one host may make the ledger hold.
};

struct IngestResult {
  bool duplicate = false;  // (host, batch_id) was ingested before; nothing changed.
  // Set when the batch is over a per-host limit: nothing of it was stored.
  std::optional<LimitRefusal> refused;
  IngestStats stats;
};

struct IngestRequest {
  const IngestBatch* batch = nullptr;
  int64_t received_ns = 0;
};

class LedgerStore : private LedgerIds {
 public:
  // Creates the parent directory and the file when missing and migrates the schema.
  static StatusOr<std::unique_ptr<LedgerStore>> Open(LedgerOptions options);
  ~LedgerStore() override;

  // Queues the batch for the next group commit and returns once that commit is done (the batch
  // is then durable) or failed. Blocks; call from many threads at once to share commits.
  StatusOr<IngestResult> Ingest(const IngestBatch& batch, int64_t received_ns);
  // One transaction for all: result i belongs to requests[i]. A batch that fails rolls back to
  // its own savepoint; when the transaction itself is lost or the commit fails, all fail.
  std::vector<StatusOr<IngestResult>> IngestGroup(const std::vector<IngestRequest>& requests);
  // Transactions committed by ingest and the batches they held (for benchmarks and tests).
  uint64_t group_commits() const { return group_commits_.load(); }
  uint64_t grouped_batches() const { return grouped_batches_.load(); }
  // Callers inside Ingest() now (queued or being committed).
  size_t pending() const { return pending_.load(); }
  // Batches refused over a per-host limit, and job gauges dropped because their host never
  // reported the job (each also logged).
  uint64_t limit_refusals() const { return limit_refusals_.load(); }
  uint64_t foreign_job_samples() const { return foreign_job_samples_.load(); }
  // Deletes what is older than the retention windows, measured back from now_ns; counter state
  // (table and memory) of series silent for the idempotency window.
  Status ApplyRetention(int64_t now_ns);
  // Counter series whose differencing state is held in memory.
  size_t series_in_memory() {
    std::lock_guard<std::mutex> lock(write_mu_);
    return ingestor_.series_count();
  }
  // Runs `fn` on an idle read connection (waits for one when all are busy).
  template <typename T>
  StatusOr<T> Read(const std::function<StatusOr<T>(Db&)>& fn) {
    struct Lease {
      LedgerStore* store;
      Db* db;
      ~Lease() { store->ReleaseReader(db); }  // Also when fn throws (a third-party exception).
    } lease{this, AcquireReader()};
    return fn(*lease.db);
  }
  // Runs `fn` on the write connection in a transaction of its own (serialised with ingest):
  // COMMIT when it succeeds, ROLLBACK when it or the commit fails. For tables ingest never
  // touches (analysis_store.h); `fn` must not call back into the store.
  template <typename T>
  StatusOr<T> Write(const std::function<StatusOr<T>(Db&)>& fn) {
    std::lock_guard<std::mutex> lock(write_mu_);
    VIGIL_RETURN_IF_ERROR(writer_->Exec("BEGIN IMMEDIATE"));
    StatusOr<T> result = fn(*writer_);
    Status status = result.ok() ? writer_->Exec("COMMIT") : result.status();
    if (!status.ok()) {
      writer_->Exec("ROLLBACK").IgnoreError();
      return status;
    }
    return result;
  }
  const LedgerOptions& options() const { return options_; }

 private:
  struct GpuInfo {
    int64_t id = 0;
    std::string model;
  };

  LedgerStore(LedgerOptions options, std::unique_ptr<Db> writer,
              std::vector<std::unique_ptr<Db>> readers);
  Db* AcquireReader();
  void ReleaseReader(Db* db);
  Status Prepare();
  Status LoadSeries();
  struct Pending;
  StatusOr<IngestResult> IngestOne(const IngestRequest& request);
  StatusOr<IngestResult> IngestLocked(const IngestBatch& batch, int64_t received_ns);
  // The refusal of a batch over a per-host limit (ledger_admission.cc), counted and logged.
  std::optional<LimitRefusal> Admit(const IngestBatch& batch);
  // Counts and logs the job gauges a committed batch had of jobs its host never reported.
  void CountForeign(const std::string& host, uint64_t samples);
  void ClearIdCaches();
  // After a lost transaction: the in-memory series state is reloaded from what committed.
  void ReloadState();
  Status FlushCells(const LedgerCells& cells);
  Status FlushSeries();
  Status UpdateInventory(const IngestBatch& batch, int64_t received_ns);
  StatusOr<int64_t> HostId(const std::string& name, int64_t now_ns);

  int64_t GpuId(std::string_view uuid, std::string_view gpu_model, int64_t time_ns) override;
  int64_t JobKey(const JobIdent& job, int64_t gpu_id, int64_t time_ns) override;
  bool JobOnHost(std::string_view job_id) override;

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
  const std::string* batch_host_ = nullptr;
  int64_t batch_host_id_ = 0;
  Status batch_error_;
  std::map<int64_t, std::pair<int64_t, int64_t>> batch_jobs_;  // job_key -> first, last ns.
  std::map<int64_t, int64_t> batch_gpus_;                      // gpu_id -> last ns.

  // Group commit queue: a caller that finds no commit running becomes the one committing.
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<Pending*> queue_;
  bool committing_ = false;
  std::atomic<uint64_t> group_commits_{0};
  std::atomic<uint64_t> grouped_batches_{0};
  std::atomic<size_t> pending_{0};
  std::atomic<uint64_t> limit_refusals_{0};
  std::atomic<uint64_t> foreign_job_samples_{0};

  std::mutex read_mu_;
  std::condition_variable read_cv_;
  std::vector<std::unique_ptr<Db>> readers_;
  std::vector<Db*> idle_readers_;
};

}  // namespace vigil
