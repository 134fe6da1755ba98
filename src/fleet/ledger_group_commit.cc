// SPDX-License-Identifier: Apache-2.0
// LedgerStore's group commit (the ingest queue, one transaction with a savepoint per batch) and
// its pool of read connections; the rest of the store is in ledger_store.cc.
#include <algorithm>
#include <optional>
#include <utility>

#include "base/logging.h"
#include "fleet/ledger_store.h"

namespace vigil {

Db* LedgerStore::AcquireReader() {
  std::unique_lock<std::mutex> lock(read_mu_);
  read_cv_.wait(lock, [this] { return !idle_readers_.empty(); });
  Db* db = idle_readers_.back();
  idle_readers_.pop_back();
  return db;
}

void LedgerStore::ReleaseReader(Db* db) {
  {
    std::lock_guard<std::mutex> lock(read_mu_);
    idle_readers_.push_back(db);
  }
  read_cv_.notify_one();
}

struct LedgerStore::Pending {
  IngestRequest request;
  std::optional<StatusOr<IngestResult>> result;
};

StatusOr<IngestResult> LedgerStore::Ingest(const IngestBatch& batch, int64_t received_ns) {
  Pending mine{{&batch, received_ns}, std::nullopt};
  pending_.fetch_add(1);
  std::unique_lock<std::mutex> lock(queue_mu_);
  queue_.push_back(&mine);
  while (!mine.result.has_value()) {
    if (committing_) {
      queue_cv_.wait(lock);
      continue;
    }
    // No commit running: this caller commits what is queued (its own batch among them, unless
    // more than a group's worth is ahead of it; then it loops and commits again).
    committing_ = true;
    std::vector<Pending*> group;
    const size_t max = static_cast<size_t>(std::max(1, options_.max_group_batches));
    while (!queue_.empty() && group.size() < max) {
      group.push_back(queue_.front());
      queue_.pop_front();
    }
    lock.unlock();
    std::vector<IngestRequest> requests;
    requests.reserve(group.size());
    for (const Pending* p : group) requests.push_back(p->request);
    std::vector<StatusOr<IngestResult>> results = IngestGroup(requests);
    lock.lock();
    for (size_t i = 0; i < group.size(); ++i) group[i]->result = std::move(results[i]);
    committing_ = false;
    queue_cv_.notify_all();
  }
  pending_.fetch_sub(1);
  return std::move(*mine.result);
}

std::vector<StatusOr<IngestResult>> LedgerStore::IngestGroup(
    const std::vector<IngestRequest>& requests) {
  std::lock_guard<std::mutex> lock(write_mu_);
  std::vector<StatusOr<IngestResult>> results;
  results.reserve(requests.size());
  Status status = writer_->Exec("BEGIN IMMEDIATE");
  for (size_t i = 0; status.ok() && i < requests.size(); ++i) {
    results.push_back(IngestOne(requests[i]));
    if (!writer_->InTransaction()) {
      // SQLite rolled the whole transaction back (disk full, I/O error): the batches before
      // this one are gone too.
      status = results.back().ok() ? InternalError("transaction rolled back by sqlite")
                                   : results.back().status();
    }
  }
  if (status.ok()) {
    status = writer_->Exec("COMMIT");
  }
  if (status.ok()) {
    group_commits_.fetch_add(1);
    grouped_batches_.fetch_add(requests.size());
    return results;
  }
  if (writer_->InTransaction()) {
    writer_->Exec("ROLLBACK").IgnoreError();
  }
  if (!results.empty()) {
    ReloadState();  // Some batch changed the in-memory state; the file did not keep it.
  }
  results.clear();
  for (const IngestRequest& r : requests) {
    results.push_back(
        status.WithContext("ingest batch " + r.batch->host + "/" + r.batch->batch_id));
  }
  return results;
}

StatusOr<IngestResult> LedgerStore::IngestOne(const IngestRequest& request) {
  const IngestBatch& batch = *request.batch;
  Status status = writer_->Exec("SAVEPOINT batch");
  StatusOr<IngestResult> result =
      status.ok() ? IngestLocked(batch, request.received_ns) : StatusOr<IngestResult>(status);
  status = result.ok() ? writer_->Exec("RELEASE batch") : result.status();
  if (status.ok()) {
    ingestor_.Commit();
    return result;
  }
  ingestor_.Rollback();
  ClearIdCaches();
  if (writer_->InTransaction() && !writer_->Exec("ROLLBACK TO batch; RELEASE batch").ok()) {
    // The batch cannot be undone on its own: the whole group goes (IngestGroup sees it).
    writer_->Exec("ROLLBACK").IgnoreError();
  }
  return status.WithContext("ingest batch " + batch.host + "/" + batch.batch_id);
}

void LedgerStore::ClearIdCaches() {
  host_ids_.clear();
  gpus_.clear();
  gpu_models_.clear();
  job_keys_.clear();
  job_gpus_.clear();
}

void LedgerStore::ReloadState() {
  ingestor_.Clear();
  ClearIdCaches();
  if (Status s = LoadSeries(); !s.ok()) {
    VIGIL_LOG_ERROR("ledger: reloading series state failed: {}", s.ToString());
  }
}

}  // namespace vigil
