// SPDX-License-Identifier: Apache-2.0
#include "metrics/series_store.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <shared_mutex>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>

#include "base/logging.h"
#include "metrics/selector.h"
#include "metrics/series_history.h"

namespace vigil {
namespace {

struct Series {
  Series(const MetricDesc* desc, Labels label_set, const SeriesHistoryOptions& options)
      : labels(std::move(label_set)), history(desc, options) {}

  Labels labels;
  SeriesHistory history;
  uint32_t source = 0;  // Index into Impl::source_runs; 0: a batch with no source.
  uint64_t run = 0;     // The source's run that wrote it last.
};

// Heap bytes of a std::string beyond its inline (SSO) buffer; libstdc++ keeps 15 chars inline.
size_t StringHeapBytes(const std::string& s) {
  return s.capacity() > 15 ? HeapBytes(s.capacity() + 1) : 0;
}

// Hash-table memory: the bucket array plus one node per element (payload + next + cached hash).
template <typename Map>
size_t MapBytes(const Map& map) {
  const size_t node = sizeof(typename Map::value_type) + 2 * sizeof(void*);
  return HeapBytes(map.bucket_count() * sizeof(void*)) + map.size() * HeapBytes(node);
}

// Canonical identity of a series: length-prefixed name and sorted label pairs.
void AppendField(std::string_view field, std::string* key) {
  const auto n = static_cast<uint32_t>(field.size());
  key->append(reinterpret_cast<const char*>(&n), sizeof(n));
  key->append(field);
}

void BuildKey(std::string_view name, const Labels& labels, std::string* key) {
  key->clear();
  AppendField(name, key);
  for (const auto& [k, v] : labels) {
    AppendField(k, key);
    AppendField(v, key);
  }
}

bool SeriesDataLess(const SeriesData& a, const SeriesData& b) {
  if (a.desc->name != b.desc->name) {
    return a.desc->name < b.desc->name;
  }
  return a.labels < b.labels;
}

// Keeps the last point of each step window [start + k*step, start + (k+1)*step).
void ThinToStep(int64_t start_ns, int64_t step_ns, std::vector<Point>* points) {
  size_t out = 0;
  int64_t prev_window = std::numeric_limits<int64_t>::min();
  for (const Point& p : *points) {
    const int64_t window = (p.time_ns - start_ns) / step_ns;
    if (out > 0 && window == prev_window) {
      (*points)[out - 1] = p;
    } else {
      (*points)[out++] = p;
    }
    prev_window = window;
  }
  points->resize(out);
}

}  // namespace

struct SeriesStore::Impl {
  explicit Impl(const SeriesStoreOptions& opts) : options(opts) {
    history_options.raw_retention_ns = opts.raw_retention_ns;
    history_options.downsample_step_ns = opts.downsample_step_ns;
    history_options.downsampled_retention_ns = opts.downsampled_retention_ns;
    const int64_t shortest = opts.downsample_step_ns > 0
                                 ? std::min(opts.raw_retention_ns, opts.downsample_step_ns)
                                 : opts.raw_retention_ns;
    sweep_interval_ns = std::max<int64_t>(1, shortest / 2);
  }

  void Sweep();
  // The run number this batch gives the series it writes (see Series::run).
  uint32_t BeginRun(const MetricBatch& batch);
  // Whether `series` is still in the latest view: newer than `max_age_ns` (0 = any) and written
  // by its source's last complete batch.
  bool IsLatest(const Series& series, int64_t max_age_ns) const {
    const SeriesHistory& h = series.history;
    if (!h.has_latest() || (max_age_ns > 0 && now_ns - h.latest().time_ns > max_age_ns)) {
      return false;
    }
    return series.source == 0 || series.run == source_runs[series.source];
  }
  using Index = std::unordered_map<std::string, std::unique_ptr<Series>>;
  // The series of `desc` and `labels` (sorted), added if new; nullptr when the store is full.
  Series* FindOrAdd(const MetricDesc* desc, const Labels& labels);
  // Forgets one series; returns the iterator after it.
  Index::iterator Remove(Index::iterator it);
  // Series whose name passes the selector's name filter, under the caller's lock.
  template <typename Fn>
  void ForEachCandidate(const CompiledSelector& selector, Fn&& fn) const;

  const SeriesStoreOptions options;
  SeriesHistoryOptions history_options;
  int64_t sweep_interval_ns = 1;

  // glibc's rwlock prefers readers, so a steady stream of queries could starve collection. A
  // writer announces itself and new readers hold back until it has had its turn.
  std::shared_lock<std::shared_mutex> ReadLock() const {
    while (writers_waiting.load(std::memory_order_acquire) > 0) {
      std::this_thread::yield();
    }
    return std::shared_lock(mu);
  }
  std::unique_lock<std::shared_mutex> WriteLock() {
    writers_waiting.fetch_add(1, std::memory_order_acq_rel);
    std::unique_lock lock(mu);
    writers_waiting.fetch_sub(1, std::memory_order_acq_rel);
    return lock;
  }

  mutable std::shared_mutex mu;
  mutable std::atomic<int> writers_waiting{0};
  Index index;
  // Families by name (views into the descs' static names), for name-filtered queries.
  std::unordered_map<std::string_view, std::vector<Series*>> by_name;
  bool has_now = false;
  int64_t now_ns = 0;  // Newest sample time appended so far.
  int64_t last_sweep_ns = 0;
  uint64_t dropped_series = 0;
  uint64_t rejected_samples = 0;
  std::string scratch_key;
  // Per batch source (a collector's name): its id and how many complete batches it has sent.
  std::unordered_map<std::string, uint32_t> source_ids;
  std::vector<uint64_t> source_runs{0};
  // Per source, the series each sample of its last batch went to: a collector writes the same
  // series in the same order tick after tick, so a sample whose name and labels match its
  // place's series skips building and hashing its key. Emptied when any series was removed.
  std::vector<std::vector<Series*>> source_series{1};
  std::vector<uint64_t> source_series_removals{0};  // `removals` when it was last valid.
  uint64_t removals = 0;
  // Every series by name, then labels: a scrape walks it instead of sorting (rebuilt by the
  // writer when a series came or went).
  std::vector<const Series*> ordered;
  bool order_stale = false;
  void SortIfStale();
};

void SeriesStore::Impl::SortIfStale() {
  if (!order_stale) {
    return;
  }
  order_stale = false;
  ordered.clear();
  ordered.reserve(index.size());
  for (const auto& [key, series] : index) {
    ordered.push_back(series.get());
  }
  std::sort(ordered.begin(), ordered.end(), [](const Series* a, const Series* b) {
    if (a->history.desc()->name != b->history.desc()->name) {
      return a->history.desc()->name < b->history.desc()->name;
    }
    return a->labels < b->labels;
  });
}

uint32_t SeriesStore::Impl::BeginRun(const MetricBatch& batch) {
  if (batch.source.empty()) {
    return 0;
  }
  auto [it, added] =
      source_ids.try_emplace(batch.source, static_cast<uint32_t>(source_runs.size()));
  if (added) {
    source_runs.push_back(0);
    source_series.emplace_back();
    source_series_removals.push_back(removals);
  }
  if (batch.complete) {
    ++source_runs[it->second];
  }
  return it->second;
}

Series* SeriesStore::Impl::FindOrAdd(const MetricDesc* desc, const Labels& labels) {
  BuildKey(desc->name, labels, &scratch_key);
  auto it = index.find(scratch_key);
  if (it != index.end()) {
    return it->second.get();
  }
  if (index.size() >= options.max_series) {
    ++dropped_series;
    VIGIL_LOG_EVERY_N_SEC(WARN, 60, "series store full, dropping new series: max_series={}",
                          options.max_series);
    return nullptr;
  }
  auto series = std::make_unique<Series>(desc, labels, history_options);
  series->labels.shrink_to_fit();
  by_name[desc->name].push_back(series.get());
  order_stale = true;
  return index.emplace(scratch_key, std::move(series)).first->second.get();
}

SeriesStore::Impl::Index::iterator SeriesStore::Impl::Remove(Index::iterator it) {
  Series* series = it->second.get();
  order_stale = true;
  ++removals;
  auto family = by_name.find(series->history.desc()->name);
  if (family != by_name.end()) {
    std::erase(family->second, series);
    if (family->second.empty()) {
      by_name.erase(family);
    }
  }
  return index.erase(it);
}

void SeriesStore::Impl::Sweep() {
  last_sweep_ns = now_ns;
  for (auto it = index.begin(); it != index.end();) {
    it->second->history.Expire(now_ns);
    it = it->second->history.empty() ? Remove(it) : std::next(it);
  }
}

template <typename Fn>
void SeriesStore::Impl::ForEachCandidate(const CompiledSelector& selector, Fn&& fn) const {
  if (!selector.name().empty()) {
    auto family = by_name.find(selector.name());
    if (family != by_name.end()) {
      for (const Series* series : family->second) {
        fn(*series);
      }
    }
    return;
  }
  for (const auto& [key, series] : index) {
    fn(*series);
  }
}

SeriesStore::SeriesStore(SeriesStoreOptions options) : impl_(std::make_unique<Impl>(options)) {}

SeriesStore::~SeriesStore() = default;

void SeriesStore::Append(const MetricBatch& batch) {
  auto lock = impl_->WriteLock();
  Impl& s = *impl_;
  const uint32_t source = s.BeginRun(batch);
  std::vector<Series*>& last = s.source_series[source];
  if (s.source_series_removals[source] != s.removals) {
    last.clear();  // A series it points at may be gone.
    s.source_series_removals[source] = s.removals;
  }
  size_t position = 0;
  for (const Sample& sample : batch.samples) {
    if (sample.desc == nullptr) {
      continue;
    }
    const int64_t time_ns = sample.time_ns != 0 ? sample.time_ns : batch.time_ns;
    Labels sorted_copy;
    const Labels* labels = &sample.labels;
    if (!std::is_sorted(labels->begin(), labels->end())) {
      sorted_copy = sample.labels;
      SortLabels(&sorted_copy);
      labels = &sorted_copy;
    }
    Series* series = position < last.size() ? last[position] : nullptr;
    if (series == nullptr || series->history.desc() != sample.desc || series->labels != *labels) {
      series = s.FindOrAdd(sample.desc, *labels);
    }
    if (position < last.size()) {
      last[position] = series;
    } else {
      last.push_back(series);
    }
    ++position;
    if (series == nullptr) {
      continue;  // The store is full.
    }
    series->source = source;
    series->run = s.source_runs[source];
    SeriesHistory& history = series->history;
    if (!history.Append(time_ns, sample.value).ok()) {
      ++s.rejected_samples;
      continue;
    }
    if (!s.has_now || time_ns > s.now_ns) {
      if (!s.has_now) {
        s.last_sweep_ns = time_ns;
      }
      s.has_now = true;
      s.now_ns = time_ns;
    }
    history.Expire(s.now_ns);
  }
  if (s.has_now && s.now_ns - s.last_sweep_ns >= s.sweep_interval_ns) {
    s.Sweep();
  }
  s.SortIfStale();
}

std::vector<SeriesData> SeriesStore::Latest(const SeriesSelector& selector,
                                            int64_t max_age_ns) const {
  std::vector<SeriesData> out;
  StatusOr<CompiledSelector> compiled = CompiledSelector::Compile(selector);
  if (!compiled.ok()) {
    return out;
  }
  auto lock = impl_->ReadLock();
  const Impl& s = *impl_;
  s.ForEachCandidate(*compiled, [&](const Series& series) {
    const SeriesHistory& h = series.history;
    if (!s.IsLatest(series, max_age_ns)) {
      return;
    }
    if (!compiled->Matches(h.desc()->name, series.labels)) {
      return;
    }
    out.push_back(SeriesData{h.desc(), series.labels, {h.latest()}});
  });
  lock.unlock();
  std::sort(out.begin(), out.end(), SeriesDataLess);
  return out;
}

void SeriesStore::VisitLatest(int64_t max_age_ns,
                              const std::function<void(std::vector<LatestRef>&)>& fn) const {
  std::vector<LatestRef> refs;
  auto lock = impl_->ReadLock();
  const Impl& s = *impl_;
  refs.reserve(s.ordered.size());
  for (const Series* series : s.ordered) {
    const SeriesHistory& h = series->history;
    if (!s.IsLatest(*series, max_age_ns)) {
      continue;
    }
    refs.push_back(LatestRef{h.desc(), &series->labels, h.latest()});
  }
  fn(refs);
}

std::vector<SeriesData> SeriesStore::Range(const SeriesSelector& selector, int64_t start_ns,
                                           int64_t end_ns, int64_t step_ns) const {
  std::vector<SeriesData> out;
  StatusOr<CompiledSelector> compiled = CompiledSelector::Compile(selector);
  if (!compiled.ok() || start_ns > end_ns) {
    return out;
  }
  auto lock = impl_->ReadLock();
  impl_->ForEachCandidate(*compiled, [&](const Series& series) {
    const SeriesHistory& h = series.history;
    if (!compiled->Matches(h.desc()->name, series.labels)) {
      return;
    }
    SeriesData data{h.desc(), series.labels, {}};
    h.Collect(start_ns, end_ns, &data.points);
    if (data.points.empty()) {
      return;
    }
    if (step_ns > 0) {
      ThinToStep(start_ns, step_ns, &data.points);
    }
    out.push_back(std::move(data));
  });
  lock.unlock();
  std::sort(out.begin(), out.end(), SeriesDataLess);
  return out;
}

SeriesStoreStats SeriesStore::stats() const {
  auto lock = impl_->ReadLock();
  const Impl& s = *impl_;
  SeriesStoreStats st;
  st.series = s.index.size();
  st.dropped_series = s.dropped_series;
  st.rejected_samples = s.rejected_samples;
  size_t bytes = sizeof(Impl) + MapBytes(s.index) + MapBytes(s.by_name) +
                 StringHeapBytes(s.scratch_key) + MapBytes(s.source_ids) +
                 HeapBytes(s.source_runs.capacity() * sizeof(uint64_t)) +
                 HeapBytes(s.source_series_removals.capacity() * sizeof(uint64_t)) +
                 HeapBytes(s.source_series.capacity() * sizeof(std::vector<Series*>)) +
                 HeapBytes(s.ordered.capacity() * sizeof(const Series*));
  for (const std::vector<Series*>& series : s.source_series) {
    bytes += HeapBytes(series.capacity() * sizeof(Series*));
  }
  for (const auto& [name, id] : s.source_ids) {
    bytes += StringHeapBytes(name);
  }
  for (const auto& [name, family] : s.by_name) {
    bytes += HeapBytes(family.capacity() * sizeof(Series*));
  }
  for (const auto& [key, series] : s.index) {
    const SeriesHistory& h = series->history;
    st.raw_points += h.raw_points();
    st.downsampled_points += h.downsampled_points();
    st.raw_payload_bytes += h.raw_payload_bytes();
    bytes += StringHeapBytes(key) + HeapBytes(sizeof(Series)) +
             HeapBytes(series->labels.capacity() * sizeof(Labels::value_type));
    for (const auto& [k, v] : series->labels) {
      bytes += StringHeapBytes(k) + StringHeapBytes(v);
    }
    bytes += h.heap_bytes();
    st.raw_block_bytes += h.raw_heap_bytes();
    st.downsampled_block_bytes += h.downsampled_heap_bytes();
  }
  st.bytes = bytes;
  return st;
}

}  // namespace vigil
