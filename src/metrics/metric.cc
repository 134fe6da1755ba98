// SPDX-License-Identifier: Apache-2.0
#include "metrics/metric.h"

#include <algorithm>

namespace vigil {

void SortLabels(Labels* labels) {
  if (!std::is_sorted(labels->begin(), labels->end())) {
    std::sort(labels->begin(), labels->end());
  }
}

void MetricWriter::Add(const MetricDesc& desc, double value, Labels labels) {
  SortLabels(&labels);
  batch_->samples.push_back(Sample{&desc, std::move(labels), value, batch_->time_ns});
}

std::string_view LabelValue(const Labels& labels, std::string_view name) {
  for (const auto& [key, value] : labels) {
    if (key == name) {
      return value;
    }
  }
  return {};
}

}  // namespace vigil
