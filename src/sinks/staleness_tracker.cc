// SPDX-License-Identifier: Apache-2.0
#include "sinks/staleness_tracker.h"

#include <utility>

namespace vigil {

void StalenessTracker::Begin(std::string_view source) {
  source_.assign(source);
  current_.clear();
}

void StalenessTracker::Saw(const std::string& key, const RwLabels& labels) {
  if (current_.contains(key)) {
    return;
  }
  SeriesSet& previous = previous_[source_];
  auto it = previous.find(key);
  if (it != previous.end()) {
    // Move the stored labels over instead of copying them again every tick.
    current_.insert(previous.extract(it));
  } else {
    current_.emplace(key, labels);
  }
}

std::vector<RwLabels> StalenessTracker::End() {
  std::vector<RwLabels> stale;
  SeriesSet& previous = previous_[source_];
  stale.reserve(previous.size());
  for (auto& [key, labels] : previous) {
    stale.push_back(std::move(labels));
  }
  previous = std::move(current_);
  current_ = SeriesSet();
  if (previous.empty()) {
    previous_.erase(source_);
  }
  return stale;
}

size_t StalenessTracker::tracked_series() const {
  size_t n = 0;
  for (const auto& [source, series] : previous_) {
    n += series.size();
  }
  return n;
}

}  // namespace vigil
