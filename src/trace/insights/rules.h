// SPDX-License-Identifier: Apache-2.0
// The rule engine: every insight rule, in a fixed order (one rule per file in this directory, each
// with a descriptor that carries its id and its thresholds with their defaults and meaning), and
// the thresholds in force (defaults, changed with `vigil analyze --threshold name=value`).
// Owner: trace.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "trace/results/insight.h"

namespace vigil::trace {

struct Report;
class InsightThresholds;

struct ThresholdSpec {
  std::string_view name;
  double default_value;
  std::string_view meaning;
};

struct InsightRuleSpec {
  std::string_view id;
  std::span<const ThresholdSpec> thresholds;
  void (*run)(const Report& report, const InsightThresholds& th, std::vector<Insight>* out);
};

// Every rule, in the order they run.
std::span<const InsightRuleSpec* const> AllInsightRules();

// The value of every rule's thresholds: the defaults until Set.
class InsightThresholds {
 public:
  InsightThresholds();
  // The value of a threshold some rule declares; a name no rule declares is a programming error
  // (aborts with the name).
  double Get(std::string_view name) const;
  // InvalidArgument for a name no rule declares.
  Status Set(std::string_view name, double value);
  const std::map<std::string, double, std::less<>>& values() const { return values_; }

 private:
  std::map<std::string, double, std::less<>> values_;
};

std::vector<Insight> RunInsightRules(const Report& report, const InsightThresholds& thresholds);

}  // namespace vigil::trace
