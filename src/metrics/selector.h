// SPDX-License-Identifier: Apache-2.0
// Matching series against a SeriesSelector (parsed by ParseSelector in series_store.h). Regexes
// are compiled once per query and fully anchored, as in Prometheus; a missing label matches as
// the empty string; the matcher name `__name__` applies to the metric name. Immutable after
// Compile(), so one instance may be shared by reader threads.
#pragma once

#include <memory>
#include <regex>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "metrics/metric.h"
#include "metrics/series_store.h"

namespace vigil {

class CompiledSelector {
 public:
  // InvalidArgument when a regex does not compile.
  static StatusOr<CompiledSelector> Compile(const SeriesSelector& selector);

  // The metric name the selector requires ("" = any).
  std::string_view name() const { return name_; }
  bool Matches(std::string_view metric_name, const Labels& labels) const;

 private:
  struct Matcher {
    LabelMatcher spec;
    std::shared_ptr<const std::regex> regex;  // kRe / kNre only.
  };

  std::string name_;
  std::vector<Matcher> matchers_;
};

}  // namespace vigil
