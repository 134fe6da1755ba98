// SPDX-License-Identifier: Apache-2.0
// The one sample model of Vigil: {name, kind, unit, help, labels, value, time}. A family is
// declared once as a constexpr MetricDesc next to the code that produces it; samples point at
// their family, so a tick allocates only label strings. Batches are immutable once built and
// cross threads as shared_ptr<const MetricBatch>.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vigil {

enum class MetricKind { kGauge, kCounter };

inline std::string_view MetricKindName(MetricKind kind) {
  return kind == MetricKind::kCounter ? "counter" : "gauge";
}

struct MetricDesc {
  std::string_view name;  // vigil_<domain>_<what>_<unit>[_total]
  std::string_view help;  // One sentence ending in a period.
  MetricKind kind = MetricKind::kGauge;
  std::string_view unit;  // "seconds", "bytes", "ratio", "joules", "" for plain counts.
};

// Label pairs, kept sorted by name (MetricWriter sorts them); names are snake_case.
using Labels = std::vector<std::pair<std::string, std::string>>;

struct Sample {
  const MetricDesc* desc = nullptr;  // Static storage; never null in a batch.
  Labels labels;
  double value = 0;
  int64_t time_ns = 0;  // Unix epoch, UTC.
};

struct MetricBatch {
  int64_t time_ns = 0;  // When collection of this batch started.
  std::string source;   // Collector name that produced it ("" for merged batches).
  // False when the collector failed part-way: its series missing from this batch are kept as
  // they were rather than treated as gone (SeriesStore's latest view).
  bool complete = true;
  std::vector<Sample> samples;
};

using BatchPtr = std::shared_ptr<const MetricBatch>;

// Appends samples to a batch, stamping each with the batch time and sorting its labels.
class MetricWriter {
 public:
  explicit MetricWriter(MetricBatch* batch) : batch_(batch) {}

  void Add(const MetricDesc& desc, double value, Labels labels = {});
  size_t count() const { return batch_->samples.size(); }

 private:
  MetricBatch* batch_;
};

// Returns the value of label `name`, or "" when absent.
std::string_view LabelValue(const Labels& labels, std::string_view name);
void SortLabels(Labels* labels);

}  // namespace vigil
