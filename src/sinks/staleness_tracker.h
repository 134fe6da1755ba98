// SPDX-License-Identifier: Apache-2.0
// Finds the series that stopped appearing, so the remote-write sink can send Prometheus's stale
// marker for each of them once (as Prometheus does when a scrape no longer returns a series).
// Series are tracked per batch source (the collector): a series is stale when the next batch of
// the same source lacks it. A source that sends no batch at all (a failing collector that
// reports nothing) makes nothing stale. Thread-compatible: used on the sink's thread only.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sinks/remote_write_labels.h"

namespace vigil {

class StalenessTracker {
 public:
  // Starts the series set of one batch of `source`.
  void Begin(std::string_view source);
  // Records one series of the current batch; `key` is SeriesKey(labels).
  void Saw(const std::string& key, const RwLabels& labels);
  // Ends the batch; returns the series the previous batch of this source had and this one has
  // not. Each is returned once: a series that comes back is tracked again from then on.
  std::vector<RwLabels> End();

  size_t tracked_series() const;

 private:
  using SeriesSet = std::unordered_map<std::string, RwLabels>;
  std::unordered_map<std::string, SeriesSet> previous_;  // source -> series of its last batch.
  std::string source_;
  SeriesSet current_;
};

}  // namespace vigil
