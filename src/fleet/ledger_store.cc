// SPDX-License-Identifier: Apache-2.0
#include "fleet/ledger_store.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "base/file_util.h"
#include "base/logging.h"
#include "fleet/ledger_schema.h"
#include "fleet/ledger_statements.h"

namespace vigil {
namespace {

std::string JobCacheKey(const JobIdent& j) {
  std::string key;
  for (const std::string* part : {&j.job_id, &j.user, &j.team, &j.model, &j.framework, &j.rule}) {
    key.append(*part).push_back('\x1f');
  }
  return key;
}

}  // namespace

LedgerStore::LedgerStore(LedgerOptions options, std::unique_ptr<Db> writer,
                         std::vector<std::unique_ptr<Db>> readers)
    : options_(std::move(options)),
      writer_(std::move(writer)),
      ingestor_(options_.max_gap_ns),
      readers_(std::move(readers)) {
  for (const auto& db : readers_) idle_readers_.push_back(db.get());
}

LedgerStore::~LedgerStore() = default;

StatusOr<std::unique_ptr<LedgerStore>> LedgerStore::Open(LedgerOptions options) {
  if (options.path != ":memory:") {
    const std::string dir = std::filesystem::path(options.path).parent_path().string();
    if (!dir.empty()) {
      VIGIL_RETURN_IF_ERROR(MakeDirs(dir));
    }
  }
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Db> writer, Db::Open(options.path));
  VIGIL_RETURN_IF_ERROR(MigrateLedger(*writer));
  if (options.path == ":memory:") {
    return InvalidArgumentError("ledger: \":memory:\" cannot be shared by two connections");
  }
  std::vector<std::unique_ptr<Db>> readers;
  for (int i = 0; i < std::max(1, options.readers); ++i) {
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Db> reader, Db::Open(options.path));
    readers.push_back(std::move(reader));
  }
  std::unique_ptr<LedgerStore> store(
      new LedgerStore(std::move(options), std::move(writer), std::move(readers)));
  VIGIL_RETURN_IF_ERROR(store->Prepare());
  VIGIL_RETURN_IF_ERROR(store->LoadSeries());
  return store;
}

Status LedgerStore::Prepare() {
  for (const auto& [name, sql] : ledger_sql::kStatements) {
    VIGIL_ASSIGN_OR_RETURN(Stmt stmt, writer_->Prepare(sql));
    stmts_.emplace(name, std::move(stmt));
  }
  return OkStatus();
}

Status LedgerStore::LoadSeries() {
  VIGIL_ASSIGN_OR_RETURN(
      Stmt stmt,
      writer_->Prepare("SELECT key, first_ns, first_v, last_ns, last_v, interval_ns FROM series"));
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) {
      break;
    }
    ingestor_.Load(stmt.Text(0),
                   SeriesState{stmt.Int(1), stmt.Real(2), stmt.Int(3), stmt.Real(4), stmt.Int(5)});
  }
  return OkStatus();
}

StatusOr<IngestResult> LedgerStore::IngestLocked(const IngestBatch& batch, int64_t received_ns) {
  IngestResult result;
  Stmt& seen = stmts_["batch_seen"];
  seen.Bind(1, batch.host).Bind(2, batch.batch_id);
  StatusOr<bool> dup = seen.Step();
  seen.Reset();
  if (!dup.ok()) {
    return dup.status();
  }
  if (*dup) {
    result.duplicate = true;
    return result;
  }
  if ((result.refused = Admit(batch))) {
    return result;  // Nothing written: the savepoint is released empty.
  }
  batch_host_ = &batch.host;
  VIGIL_ASSIGN_OR_RETURN(batch_host_id_, HostId(batch.host, received_ns));
  batch_error_ = OkStatus();
  batch_jobs_.clear();
  batch_gpus_.clear();
  LedgerCells cells;
  ingestor_.Ingest(batch, *this, &cells, &result.stats);
  VIGIL_RETURN_IF_ERROR(batch_error_);
  VIGIL_RETURN_IF_ERROR(FlushCells(cells));
  VIGIL_RETURN_IF_ERROR(FlushJobMetrics(*writer_, ingestor_.TakeJobMetrics()));
  VIGIL_RETURN_IF_ERROR(FlushGpuGauges(*writer_, ingestor_.TakeGpuGauges()));
  VIGIL_RETURN_IF_ERROR(FlushSeries());
  for (const auto& [gpu_id, last] : batch_gpus_) {
    VIGIL_RETURN_IF_ERROR(stmts_["gpu_seen"].Bind(1, gpu_id).Bind(2, last).Run());
  }
  for (const auto& [job_key, range] : batch_jobs_) {
    VIGIL_RETURN_IF_ERROR(
        stmts_["job_seen"].Bind(1, job_key).Bind(2, range.first).Bind(3, range.second).Run());
  }
  VIGIL_RETURN_IF_ERROR(UpdateInventory(batch, received_ns));
  VIGIL_RETURN_IF_ERROR(stmts_["batch_add"]
                            .Bind(1, batch.host)
                            .Bind(2, batch.batch_id)
                            .Bind(3, batch.seq)
                            .Bind(4, received_ns)
                            .Bind(5, static_cast<int64_t>(batch.samples.size()))
                            .Run());
  if (result.stats.foreign > 0) CountForeign(batch.host, result.stats.foreign);
  return result;
}

Status LedgerStore::FlushCells(const LedgerCells& cells) {
  struct HostKey {
    int64_t hour;
    std::string model;
    auto operator<=>(const HostKey&) const = default;
  };
  std::map<std::pair<int64_t, int64_t>, LedgerCell> job_hours;
  std::map<HostKey, LedgerCell> host_hours;
  Stmt& minute = stmts_["minute"];
  for (const auto& [key, c] : cells) {
    VIGIL_RETURN_IF_ERROR(minute.Bind(1, key.minute_s)
                              .Bind(2, key.gpu_id)
                              .Bind(3, key.job_key)
                              .Bind(4, c.wall_s)
                              .Bind(5, c.alloc_s)
                              .Bind(6, c.busy_s)
                              .Bind(7, c.held_idle_s)
                              .Bind(8, c.energy_j)
                              .Bind(9, c.sm_sum)
                              .Bind(10, c.sm_n)
                              .Bind(11, c.flops_sum)
                              .Bind(12, c.flops_n)
                              .Run());
    const int64_t hour = key.minute_s - key.minute_s % 3600;
    LedgerCell& h = host_hours[{hour, gpu_models_[key.gpu_id]}];
    if (key.job_key == 0) {
      h.wall_s += c.wall_s;
      h.energy_j += c.energy_j;
      h.sm_sum += c.sm_sum;
      h.sm_n += c.sm_n;
    } else {
      h.alloc_s += c.alloc_s;
      h.busy_s += c.busy_s;
      h.held_idle_s += c.held_idle_s;
      job_hours[{hour, key.job_key}].Add(c);
    }
  }
  Stmt& job_hour = stmts_["job_hour"];
  for (const auto& [key, c] : job_hours) {
    VIGIL_RETURN_IF_ERROR(job_hour.Bind(1, key.first)
                              .Bind(2, key.second)
                              .Bind(3, c.alloc_s)
                              .Bind(4, c.busy_s)
                              .Bind(5, c.held_idle_s)
                              .Bind(6, c.energy_j)
                              .Run());
  }
  Stmt& host_hour = stmts_["host_hour"];
  for (const auto& [key, c] : host_hours) {
    VIGIL_RETURN_IF_ERROR(host_hour.Bind(1, key.hour)
                              .Bind(2, batch_host_id_)
                              .Bind(3, key.model)
                              .Bind(4, c.wall_s)
                              .Bind(5, c.alloc_s)
                              .Bind(6, c.busy_s)
                              .Bind(7, c.held_idle_s)
                              .Bind(8, c.energy_j)
                              .Bind(9, c.sm_sum)
                              .Bind(10, c.sm_n)
                              .Run());
  }
  return OkStatus();
}

Status LedgerStore::FlushSeries() {
  Stmt& stmt = stmts_["series"];
  for (const auto& [key, old] : ingestor_.touched()) {
    const SeriesState* s = ingestor_.Find(key);
    if (s == nullptr) {
      continue;
    }
    VIGIL_RETURN_IF_ERROR(stmt.Bind(1, key)
                              .Bind(2, s->first_ns)
                              .Bind(3, s->first_v)
                              .Bind(4, s->last_ns)
                              .Bind(5, s->last_v)
                              .Bind(6, s->interval_ns)
                              .Run());
  }
  return OkStatus();
}

StatusOr<int64_t> LedgerStore::HostId(const std::string& name, int64_t now_ns) {
  auto it = host_ids_.find(name);
  if (it != host_ids_.end()) {
    return it->second;
  }
  Stmt& get = stmts_["host_get"];
  get.Bind(1, name);
  StatusOr<bool> row = get.Step();
  const int64_t found = row.ok() && *row ? get.Int(0) : 0;
  get.Reset();
  if (!row.ok()) {
    return row.status();
  }
  int64_t id = found;
  if (!*row) {
    VIGIL_RETURN_IF_ERROR(stmts_["host_add"].Bind(1, name).Bind(2, now_ns).Run());
    id = writer_->LastInsertRowId();
  }
  host_ids_[name] = id;
  return id;
}

int64_t LedgerStore::GpuId(std::string_view uuid, std::string_view gpu_model, int64_t time_ns) {
  auto key = std::make_pair(batch_host_id_, std::string(uuid));
  auto it = gpus_.find(key);
  if (it != gpus_.end() && (gpu_model.empty() || gpu_model == it->second.model)) {
    int64_t& last = batch_gpus_[it->second.id];
    last = std::max(last, time_ns);
    return it->second.id;
  }
  Stmt& stmt = stmts_["gpu_upsert"];
  stmt.Bind(1, batch_host_id_).Bind(2, uuid).Bind(3, gpu_model).Bind(4, time_ns);
  StatusOr<bool> row = stmt.Step();
  if (!row.ok() || !*row) {
    stmt.Reset();
    if (batch_error_.ok()) {
      batch_error_ = row.ok() ? InternalError("gpu upsert returned no row") : row.status();
    }
    return 0;
  }
  GpuInfo info{stmt.Int(0), stmt.Text(1)};
  stmt.Reset();
  gpus_[key] = info;
  gpu_models_[info.id] = info.model;
  int64_t& seen = batch_gpus_[info.id];
  seen = std::max(seen, time_ns);
  return info.id;
}

int64_t LedgerStore::JobKey(const JobIdent& job, int64_t gpu_id, int64_t time_ns) {
  const std::string cache_key = JobCacheKey(job);
  int64_t job_key = 0;
  auto it = job_keys_.find(cache_key);
  if (it != job_keys_.end()) {
    job_key = it->second;
  } else {
    Stmt& stmt = stmts_["job_upsert"];
    stmt.Bind(1, job.job_id).Bind(2, job.user).Bind(3, job.team).Bind(4, job.model);
    stmt.Bind(5, job.framework).Bind(6, job.rule).Bind(7, time_ns);
    StatusOr<bool> row = stmt.Step();
    if (!row.ok() || !*row) {
      stmt.Reset();
      if (batch_error_.ok()) {
        batch_error_ = row.ok() ? InternalError("job upsert returned no row") : row.status();
      }
      return 0;
    }
    job_key = stmt.Int(0);
    stmt.Reset();
    job_keys_[cache_key] = job_key;
  }
  auto [range, inserted] = batch_jobs_.try_emplace(job_key, time_ns, time_ns);
  range->second.first = std::min(range->second.first, time_ns);
  range->second.second = std::max(range->second.second, time_ns);
  if (job_gpus_.insert({job_key, gpu_id}).second) {
    Status s = stmts_["job_gpu"].Bind(1, job_key).Bind(2, gpu_id).Run();
    if (!s.ok() && batch_error_.ok()) {
      batch_error_ = s;
    }
  }
  return job_key;
}

Status LedgerStore::UpdateInventory(const IngestBatch& batch, int64_t received_ns) {
  int64_t last_sample = 0;
  std::set<std::string_view> gpus;
  std::string driver, version, failing, rpc_address;
  bool saw_collectors = false;
  for (const IngestSample& s : batch.samples) {
    last_sample = std::max(last_sample, s.time_ns);
    if (s.name == "vigil_gpu_info" || s.name == "vigil_gpu_up") {
      gpus.insert(LabelValue(s.labels, "gpu_uuid"));
    }
    if (const std::string_view d = LabelValue(s.labels, "driver_version"); !d.empty()) {
      driver = d;
    } else if (s.name == "vigil_gpu_backend_info" && driver.empty()) {
      driver = "backend " + std::string(LabelValue(s.labels, "backend"));
    }
    if (s.name == "vigil_daemon_info") {
      version = LabelValue(s.labels, "version");
      rpc_address = LabelValue(s.labels, "rpc_address");  // Used by fleet profiling.
    }
    if (s.name == "vigil_collector_success") {
      saw_collectors = true;
      if (s.value < 1) {
        if (!failing.empty()) failing += ',';
        failing += LabelValue(s.labels, "collector");
      }
    }
  }
  const std::string health = !saw_collectors   ? ""
                             : failing.empty() ? "ok"
                                               : "degraded: failing " + failing;
  if (!rpc_address.empty()) {
    VIGIL_RETURN_IF_ERROR(stmts_["host_rpc"].Bind(1, batch_host_id_).Bind(2, rpc_address).Run());
  }
  return stmts_["host_update"]
      .Bind(1, batch_host_id_)
      .Bind(2, received_ns)
      .Bind(3, last_sample)
      .Bind(4, static_cast<int64_t>(gpus.size()))
      .Bind(5, driver)
      .Bind(6, version)
      .Bind(7, health)
      .Bind(8, batch.seq)
      .Bind(9, static_cast<int64_t>(batch.samples.size()))
      .Run();
}

Status LedgerStore::ApplyRetention(int64_t now_ns) {
  std::lock_guard<std::mutex> lock(write_mu_);
  const int64_t minute_cut_ns = now_ns - options_.retention_ns;
  const int64_t rollup_cut_ns = now_ns - options_.rollup_retention_ns;
  const std::string minute_cut = std::to_string(minute_cut_ns / 1000000000);
  const std::string hour_cut = std::to_string(rollup_cut_ns / 1000000000);
  const std::string batch_cut = std::to_string(now_ns - options_.batch_window_ns);
  // Profiling requests with their trace files, and CPU profiles, go with the minute rows;
  // analyses are small summaries and live as long as the hourly rollups they are read with.
  std::vector<std::string> trace_dirs;
  {
    VIGIL_ASSIGN_OR_RETURN(Stmt st,
                           writer_->Prepare("SELECT trace_dir FROM profiling_requests WHERE "
                                            "created_ns < ?1 AND trace_dir != ''"));
    st.Bind(1, minute_cut_ns);
    while (true) {
      VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      trace_dirs.emplace_back(st.Text(0));
    }
  }
  const std::string sql =
      "BEGIN IMMEDIATE;"
      "DELETE FROM ledger_minute WHERE minute_s < " +
      minute_cut + ";" + "INSERT INTO retention_cuts VALUES ('ledger_minute', " + minute_cut +
      ") ON CONFLICT DO UPDATE SET cut_s=max(cut_s, excluded.cut_s);" +
      "DELETE FROM job_minute_metrics WHERE minute_s < " + minute_cut + ";" +
      "DELETE FROM gpu_minute_gauges WHERE minute_s < " + minute_cut + ";" +
      "DELETE FROM job_hour WHERE hour_s < " + hour_cut + ";" +
      "DELETE FROM host_hour WHERE hour_s < " + hour_cut + ";" +
      "DELETE FROM batches WHERE received_ns < " + batch_cut + ";" +
      "DELETE FROM series WHERE last_ns < " + batch_cut + ";" +
      "DELETE FROM profiling_requests WHERE created_ns < " + std::to_string(minute_cut_ns) + ";" +
      "DELETE FROM profiling_decisions WHERE time_ns < " + std::to_string(minute_cut_ns) + ";" +
      "DELETE FROM cpu_profiles WHERE received_ns < " + std::to_string(minute_cut_ns) + ";" +
      "DELETE FROM analysis_insights WHERE analysis_id IN (SELECT analysis_id FROM analyses "
      "WHERE received_ns < " +
      std::to_string(rollup_cut_ns) + ");" + "DELETE FROM analyses WHERE received_ns < " +
      std::to_string(rollup_cut_ns) + ";" + "COMMIT;";
  Status status = writer_->Exec(sql);
  if (!status.ok()) {
    writer_->Exec("ROLLBACK").IgnoreError();
    return status.WithContext("ledger retention");
  }
  // Counter state lives as long as the idempotency rows: a series silent for that long has
  // ended (its job or GPU is gone), and a resend older than that is not recognised anyway.
  ingestor_.ForgetBefore(now_ns - options_.batch_window_ns);
  for (const std::string& dir : trace_dirs) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (ec) VIGIL_LOG_WARN("retention: cannot remove {}: err={}", dir, ec.message());
  }
  return OkStatus();
}

}  // namespace vigil
