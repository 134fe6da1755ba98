// SPDX-License-Identifier: Apache-2.0
#include "fleet/ledger_ingest.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "base/time_util.h"

namespace vigil {
namespace {

constexpr int64_t kMinuteNs = kNanosPerMinute;

struct CounterField {
  std::string_view name;
  double LedgerCell::*field;
  bool per_job;
  bool seconds;
};

constexpr CounterField kCounters[] = {
    {"vigil_gpu_allocated_seconds_total", &LedgerCell::alloc_s, true, true},
    {"vigil_gpu_busy_seconds_total", &LedgerCell::busy_s, true, true},
    {"vigil_gpu_held_idle_seconds_total", &LedgerCell::held_idle_s, true, true},
    {"vigil_job_gpu_energy_joules_total", &LedgerCell::energy_j, true, false},
    {"vigil_gpu_energy_joules_total", &LedgerCell::energy_j, false, false},
};

// The counter a sample feeds, or null: per-job counters need a job id, the device's none.
const CounterField* MatchCounter(const IngestSample& s, bool has_job) {
  for (const CounterField& c : kCounters) {
    if (s.name == c.name && c.per_job == has_job) return &c;
  }
  return nullptr;
}

void AppendHeartbeatKey(const std::string& host, std::string_view uuid, std::string* key) {
  key->clear();
  key->append(host).append("\x1f#hb\x1f").append(uuid);
}

// Every series key starts with its host's name.
std::string_view HostOf(const std::string& key) {
  return std::string_view(key).substr(0, key.find('\x1f'));
}

void AppendSeriesKey(const std::string& host, const IngestSample& s, std::string* key) {
  key->clear();
  key->append(host).push_back('\x1f');
  key->append(s.name);
  for (const auto& [k, v] : s.labels) {
    key->push_back('\x1f');
    key->append(k).push_back('=');
    key->append(v);
  }
}

}  // namespace

void LedgerCell::Add(const LedgerCell& o) {
  wall_s += o.wall_s;
  alloc_s += o.alloc_s;
  busy_s += o.busy_s;
  held_idle_s += o.held_idle_s;
  energy_j += o.energy_j;
  sm_sum += o.sm_sum;
  sm_n += o.sm_n;
  flops_sum += o.flops_sum;
  flops_n += o.flops_n;
}

void LedgerIngestor::Spread(LedgerCells* cells, int64_t gpu_id, int64_t job_key,
                            double LedgerCell::*field, int64_t a_ns, int64_t b_ns, double amount) {
  if (b_ns <= a_ns) {
    (*cells)[{FloorDiv(b_ns, kMinuteNs) * 60, gpu_id, job_key}].*field += amount;
    return;
  }
  const double span = static_cast<double>(b_ns - a_ns);
  double left = amount;
  for (int64_t m = FloorDiv(a_ns, kMinuteNs);; ++m) {
    const int64_t lo = std::max(a_ns, m * kMinuteNs);
    const int64_t hi = std::min(b_ns, (m + 1) * kMinuteNs);
    LedgerCell& cell = (*cells)[{m * 60, gpu_id, job_key}];
    if (hi >= b_ns) {
      cell.*field += left;  // The remainder: the parts add up to `amount` exactly.
      return;
    }
    const double part = amount * static_cast<double>(hi - lo) / span;
    cell.*field += part;
    left -= part;
  }
}

void LedgerIngestor::SpreadWall(LedgerCells* cells, int64_t gpu_id, int64_t a_ns, int64_t b_ns) {
  for (int64_t m = FloorDiv(a_ns, kMinuteNs); m * kMinuteNs < b_ns; ++m) {
    const int64_t lo = std::max(a_ns, m * kMinuteNs);
    const int64_t hi = std::min(b_ns, (m + 1) * kMinuteNs);
    (*cells)[{m * 60, gpu_id, 0}].wall_s += static_cast<double>(hi - lo) / 1e9;
  }
}

const SeriesState* LedgerIngestor::Find(const std::string& key) const {
  auto it = series_.find(key);
  return it == series_.end() ? nullptr : &it->second;
}

void LedgerIngestor::Load(const std::string& key, SeriesState state) {
  if (series_.insert_or_assign(key, state).second) CountSeries(key, 1);
}

void LedgerIngestor::CountSeries(const std::string& key, int delta) {
  auto it = host_series_.try_emplace(std::string(HostOf(key)), 0).first;
  if (delta > 0) {
    ++it->second;
  } else if (it->second > 0) {
    --it->second;
  }
  if (it->second == 0) host_series_.erase(it);
}

size_t LedgerIngestor::series_of_host(const std::string& host) const {
  auto it = host_series_.find(host);
  return it == host_series_.end() ? 0 : it->second;
}

size_t LedgerIngestor::NewSeries(const IngestBatch& batch) const {
  // The keys Ingest() would create: a heartbeat per GPU-level sample's GPU, a counter series per
  // sample of a ledger counter.
  std::unordered_set<std::string> added;
  std::string key;
  for (const IngestSample& s : batch.samples) {
    const std::string_view uuid = LabelValue(s.labels, "gpu_uuid");
    if (uuid.empty()) continue;
    const bool has_job = !LabelValue(s.labels, "job_id").empty();
    if (!has_job && LabelValue(s.labels, "pid").empty()) {
      AppendHeartbeatKey(batch.host, uuid, &key);
      if (Find(key) == nullptr) added.insert(key);
    }
    if (MatchCounter(s, has_job) != nullptr) {
      AppendSeriesKey(batch.host, s, &key);
      if (Find(key) == nullptr) added.insert(key);
    }
  }
  return added.size();
}

size_t LedgerIngestor::ForgetBefore(int64_t cut_ns) {
  size_t forgotten = 0;
  for (auto it = series_.begin(); it != series_.end();) {
    if (it->second.last_ns < cut_ns && journal_.count(it->first) == 0) {
      CountSeries(it->first, -1);
      it = series_.erase(it);
      ++forgotten;
    } else {
      ++it;
    }
  }
  return forgotten;
}

SeriesState* LedgerIngestor::Touch(const std::string& key, bool create) {
  auto it = series_.find(key);
  if (it == series_.end()) {
    if (!create) {
      return nullptr;
    }
    journal_.try_emplace(key, std::nullopt);
    CountSeries(key, 1);
    return &series_[key];
  }
  journal_.try_emplace(key, it->second);
  return &it->second;
}

void LedgerIngestor::Rollback() {
  for (auto& [key, old] : journal_) {
    if (old) {
      series_[key] = *old;
    } else if (series_.erase(key) != 0) {
      CountSeries(key, -1);
    }
  }
  journal_.clear();
}

std::pair<int64_t, int64_t> LedgerIngestor::Clip(int64_t a_ns, int64_t b_ns,
                                                 int64_t fallback_ns) const {
  if (b_ns - a_ns <= max_gap_ns_) {
    return {a_ns, b_ns};
  }
  return {b_ns - std::clamp<int64_t>(fallback_ns, 0, max_gap_ns_), b_ns};
}

void LedgerIngestor::Heartbeat(const std::string& key, int64_t gpu_id, int64_t t,
                               LedgerCells* cells, IngestStats* stats) {
  const SeriesState* existing = Find(key);
  if (existing != nullptr && t >= existing->first_ns && t <= existing->last_ns) {
    return;  // This report time is already accounted for.
  }
  SeriesState* st = Touch(key, true);
  if (existing == nullptr) {
    *st = SeriesState{t, 0, t, 0, 0};
    return;
  }
  if (t > st->last_ns) {
    const auto [a, b] = Clip(st->last_ns, t, st->interval_ns);
    SpreadWall(cells, gpu_id, a, b);
    st->interval_ns = t - st->last_ns;
    st->last_ns = t;
  } else {
    const auto [a, b] = Clip(t, st->first_ns, st->interval_ns);
    SpreadWall(cells, gpu_id, a, b);
    if (st->interval_ns == 0) {
      st->interval_ns = st->first_ns - t;
    }
    st->first_ns = t;
  }
  (void)stats;
}

void LedgerIngestor::Counter(const std::string& key, const std::string& hb_key, int64_t gpu_id,
                             int64_t job_key, double LedgerCell::*field, bool seconds,
                             const IngestSample& s, LedgerCells* cells, IngestStats* stats) {
  const int64_t t = s.time_ns;
  const double v = s.value;
  const SeriesState* existing = Find(key);
  if (existing != nullptr && t >= existing->first_ns && t <= existing->last_ns) {
    ++stats->late;
    return;
  }
  const SeriesState* hb = Find(hb_key);
  const SeriesState hb_copy = hb ? *hb : SeriesState{};
  SeriesState* st = Touch(key, true);
  if (existing == nullptr) {
    *st = SeriesState{t, v, t, v, 0};
    if (hb == nullptr || hb_copy.first_ns >= t) {
      return;  // First sight of this GPU too: a baseline only.
    }
    const int64_t p = hb_copy.last_ns < t       ? hb_copy.last_ns
                      : hb_copy.interval_ns > 0 ? t - hb_copy.interval_ns
                                                : -1;
    const bool plausible = !seconds || v <= static_cast<double>(t - p) / 1e9 * 1.05 + 0.5;
    if (p >= 0 && t - p <= max_gap_ns_ && plausible && v >= 0) {
      // A job new on a reporting GPU: its counter started from zero at the previous report.
      Spread(cells, gpu_id, job_key, field, p, t, v);
      *st = SeriesState{p, 0, t, v, t - p};
      ++stats->used;
    }
    return;
  }
  if (t > st->last_ns) {
    double d = v - st->last_v;
    if (d < 0) {
      d = v;
      ++stats->resets;
    }
    const auto [a, b] = Clip(st->last_ns, t, st->interval_ns);
    Spread(cells, gpu_id, job_key, field, a, b, d);
    st->interval_ns = t - st->last_ns;
    st->last_ns = t;
    st->last_v = v;
  } else {
    double d = st->first_v - v;
    if (d < 0) {
      d = st->first_v;
      ++stats->resets;
    }
    const auto [a, b] = Clip(t, st->first_ns, st->interval_ns);
    Spread(cells, gpu_id, job_key, field, a, b, d);
    if (st->interval_ns == 0) {
      st->interval_ns = st->first_ns - t;
    }
    st->first_ns = t;
    st->first_v = v;
  }
  ++stats->used;
}

void LedgerIngestor::Ingest(const IngestBatch& batch, LedgerIds& ids, LedgerCells* cells,
                            IngestStats* stats) {
  std::string key;
  std::string hb_key;
  job_metrics_.clear();
  gpu_gauges_.clear();
  std::vector<const IngestSample*> gauges;
  for (const IngestSample& s : batch.samples) {
    ++stats->samples;
    const std::string_view uuid = LabelValue(s.labels, "gpu_uuid");
    if (uuid.empty()) {
      gauges.push_back(&s);
      continue;
    }
    const std::string_view job_id = LabelValue(s.labels, "job_id");
    const bool gpu_level = job_id.empty() && LabelValue(s.labels, "pid").empty();
    const CounterField* counter = MatchCounter(s, !job_id.empty());
    if (!gpu_level && counter == nullptr) {
      continue;  // Nothing the ledger keeps: no GPU row for it either.
    }
    const int64_t gpu_id = ids.GpuId(uuid, LabelValue(s.labels, "gpu_model"), s.time_ns);
    AppendHeartbeatKey(batch.host, uuid, &hb_key);
    if (gpu_level) {
      Heartbeat(hb_key, gpu_id, s.time_ns, cells, stats);
      if (s.name == "vigil_gpu_sm_active_ratio" || s.name == "vigil_gpu_flops_estimated") {
        LedgerCell& cell = (*cells)[{FloorDiv(s.time_ns, kMinuteNs) * 60, gpu_id, 0}];
        if (s.name == "vigil_gpu_sm_active_ratio") {
          cell.sm_sum += s.value;
          ++cell.sm_n;
        } else {
          cell.flops_sum += s.value;
          ++cell.flops_n;
        }
        ++stats->used;
        continue;
      }
      if (GpuGauge(s, gpu_id)) {
        ++stats->used;
        continue;
      }
    }
    if (counter == nullptr) {
      continue;
    }
    int64_t job_key = 0;
    if (counter->per_job) {
      JobIdent job{std::string(job_id),
                   std::string(LabelValue(s.labels, "user")),
                   std::string(LabelValue(s.labels, "team")),
                   std::string(LabelValue(s.labels, "model")),
                   std::string(LabelValue(s.labels, "framework")),
                   std::string(LabelValue(s.labels, "rule"))};
      job_key = ids.JobKey(job, gpu_id, s.time_ns);
    }
    AppendSeriesKey(batch.host, s, &key);
    Counter(key, hb_key, gpu_id, job_key, counter->field, counter->seconds, s, cells, stats);
  }
  // After the counters: the jobs this batch reports are known to `ids` by now.
  std::map<std::string, bool> on_host;
  for (const IngestSample* s : gauges) JobGauge(*s, ids, &on_host, stats);
}

}  // namespace vigil
