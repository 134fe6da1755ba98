// SPDX-License-Identifier: Apache-2.0
// Turns pushed samples into per-minute ledger contributions by differencing consecutive values of
// each counter series (docs/fleet.md "Ledger arithmetic"):
// - A GPU's wall time is the time between consecutive reports of that GPU (any GPU-level sample);
//   gaps longer than max_gap count only one report interval. Idle = wall - allocated.
// - A counter's increase between two points is spread over the minutes of that interval in
//   proportion to time, so a job that starts or ends inside a minute owns only its part of it.
// - A counter that goes down was reset (daemon restart): the new value is the increase.
// - A point later than a series' newest extends it forward, earlier than its oldest extends it
//   backward; a point in between is already accounted for (counters are cumulative) and is only
//   counted as late. This makes duplicate and out-of-order batches safe.
// - A job series that first appears on a GPU already reporting started from zero at that GPU's
//   previous report; otherwise its first point is only a baseline.
// - libvigil_client's job gauges count only for jobs the pushing host reported (its per-job
//   counters, in this batch or before): a host's token writes no data about other hosts' jobs.
// Owner: fleet. Thread-compatible: the ledger store calls it under its mutex.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"
#include "fleet/ingest_batch.h"
#include "fleet/sqlite_db.h"

namespace vigil {

struct CellKey {
  int64_t minute_s = 0;  // Unix seconds of the minute's start.
  int64_t gpu_id = 0;
  int64_t job_key = 0;  // 0: the GPU's own row.
  auto operator<=>(const CellKey&) const = default;
};

struct LedgerCell {
  double wall_s = 0, alloc_s = 0, busy_s = 0, held_idle_s = 0, energy_j = 0;
  double sm_sum = 0;
  int64_t sm_n = 0;
  double flops_sum = 0;
  int64_t flops_n = 0;
  void Add(const LedgerCell& o);
};

using LedgerCells = std::map<CellKey, LedgerCell>;

// libvigil_client's job gauges in one minute of one job id (they carry job_id, not gpu_uuid, and
// no user or rule, so they are keyed by the id alone): sums and counts of the reported values.
struct JobMetricCell {
  double mfu_sum = 0;
  int64_t mfu_n = 0;
  double flops_sum = 0;  // vigil_job_model_flops: model FLOPs per step.
  int64_t flops_n = 0;
  double step_s_sum = 0;
  int64_t step_n = 0;
  double dspib_sum = 0;  // vigil_job_device_seconds_per_input_byte.
  int64_t dspib_n = 0;
};
using JobMetricCells = std::map<std::pair<int64_t, std::string>, JobMetricCell>;  // minute_s, id.

// The per-GPU page's gauges in one minute of one GPU (ledger_gpu_gauges.cc): sums and counts.
struct GpuGaugeCell {
  double util_sum = 0;
  int64_t util_n = 0;
  double mem_used_sum = 0;
  int64_t mem_used_n = 0;
  double mem_total_sum = 0;
  int64_t mem_total_n = 0;
  double power_sum = 0;
  int64_t power_n = 0;
  double temp_sum = 0;
  int64_t temp_n = 0;
};
using GpuGaugeCells = std::map<std::pair<int64_t, int64_t>, GpuGaugeCell>;  // gpu_id, minute_s.

struct JobIdent {
  std::string job_id, user, team, model, framework, rule;
};

// Maps names to the store's ids, creating inventory rows as needed.
class LedgerIds {
 public:
  virtual ~LedgerIds() = default;
  virtual int64_t GpuId(std::string_view uuid, std::string_view gpu_model, int64_t time_ns) = 0;
  virtual int64_t JobKey(const JobIdent& job, int64_t gpu_id, int64_t time_ns) = 0;
  // Whether the batch's host has reported this job id on one of its GPUs (JobKey of this batch
  // included).
  virtual bool JobOnHost(std::string_view job_id) = 0;
};

struct SeriesState {
  int64_t first_ns = 0;
  double first_v = 0;
  int64_t last_ns = 0;
  double last_v = 0;
  int64_t interval_ns = 0;  // Last interval seen between two points.
};

struct IngestStats {
  uint64_t samples = 0;  // In the batch.
  uint64_t used = 0;     // Contributed to the ledger.
  uint64_t late = 0;     // Inside an already accounted interval (or a repeated point).
  uint64_t resets = 0;   // Counter resets seen.
  uint64_t foreign = 0;  // Job gauges of a job the host never reported: dropped.
};

class LedgerIngestor {
 public:
  static constexpr int64_t kDefaultMaxGapNs = 300LL * 1000000000;
  explicit LedgerIngestor(int64_t max_gap_ns = kDefaultMaxGapNs) : max_gap_ns_(max_gap_ns) {}

  // Adds the batch's contributions to *cells. The series touched since the last Commit() or
  // Rollback() are listed by touched(); Rollback() puts their previous states back.
  void Ingest(const IngestBatch& batch, LedgerIds& ids, LedgerCells* cells, IngestStats* stats);
  // The job gauges of the last Ingest() (each call starts afresh); the store writes them with
  // FlushJobMetrics in the same transaction.
  JobMetricCells TakeJobMetrics() { return std::exchange(job_metrics_, {}); }
  // The GPU gauges of the last Ingest(), written with FlushGpuGauges likewise.
  GpuGaugeCells TakeGpuGauges() { return std::exchange(gpu_gauges_, {}); }
  void Commit() { journal_.clear(); }
  void Rollback();

  const std::map<std::string, std::optional<SeriesState>>& touched() const { return journal_; }
  const SeriesState* Find(const std::string& key) const;
  void Load(const std::string& key, SeriesState state);
  // The series Ingest(batch) would add (distinct keys not held yet), and those held for a host:
  // what the per-host series limit (ledger_limits.h) is checked on before a batch is applied.
  size_t NewSeries(const IngestBatch& batch) const;
  size_t series_of_host(const std::string& host) const;
  // Forgets the series whose last point is before cut_ns (not those touched since the last
  // Commit()); returns how many. A series seen again later starts afresh, as a new one does.
  size_t ForgetBefore(int64_t cut_ns);
  size_t series_count() const { return series_.size(); }
  // Forgets every series (before reloading them from the ledger after a failed commit).
  void Clear() {
    series_.clear();
    journal_.clear();
    host_series_.clear();
  }

  // Spreads `amount` of `field` over [a_ns, b_ns) by minute (all of it in b's minute when the
  // interval is empty); the parts add up to amount exactly. Exposed for tests.
  static void Spread(LedgerCells* cells, int64_t gpu_id, int64_t job_key, double LedgerCell::*field,
                     int64_t a_ns, int64_t b_ns, double amount);
  // Adds the seconds of [a_ns, b_ns) to each minute's wall_s, computed in integer nanoseconds.
  static void SpreadWall(LedgerCells* cells, int64_t gpu_id, int64_t a_ns, int64_t b_ns);

 private:
  SeriesState* Touch(const std::string& key, bool create);
  void CountSeries(const std::string& key, int delta);
  // The interval to account for a step from a to b: itself, or its last `fallback` when longer
  // than max_gap.
  std::pair<int64_t, int64_t> Clip(int64_t a_ns, int64_t b_ns, int64_t fallback_ns) const;
  void Heartbeat(const std::string& key, int64_t gpu_id, int64_t t, LedgerCells* cells,
                 IngestStats* stats);
  void Counter(const std::string& key, const std::string& hb_key, int64_t gpu_id, int64_t job_key,
               double LedgerCell::*field, bool seconds, const IngestSample& s, LedgerCells* cells,
               IngestStats* stats);

  // Adds a GPU-level gauge the per-GPU page shows; false when `s` is not one of them.
  bool GpuGauge(const IngestSample& s, int64_t gpu_id);
  void JobGauge(const IngestSample& s, LedgerIds& ids, std::map<std::string, bool>* on_host,
                IngestStats* stats);

  const int64_t max_gap_ns_;
  JobMetricCells job_metrics_;
  GpuGaugeCells gpu_gauges_;
  std::unordered_map<std::string, SeriesState> series_;
  std::map<std::string, std::optional<SeriesState>> journal_;  // Previous state; nullopt = new.
  std::unordered_map<std::string, size_t> host_series_;        // Host -> series held.
};

// Adds the cells to job_minute_metrics (sums and counts add up across batches and hosts).
Status FlushJobMetrics(Db& db, const JobMetricCells& cells);
// Adds the cells to gpu_minute_gauges.
Status FlushGpuGauges(Db& db, const GpuGaugeCells& cells);

}  // namespace vigil
