// SPDX-License-Identifier: Apache-2.0
#include "profile/sampling_budget.h"

#include <algorithm>

namespace vigil {

SamplingBudget::SamplingBudget(int configured_hz, double budget)
    : configured_hz_(std::max(configured_hz, 1)), budget_(budget), frequency_hz_(configured_hz_) {}

BudgetStep SamplingBudget::EndWindow(double cpu_seconds, double wall_seconds) {
  BudgetStep step;
  step.used = wall_seconds > 0 ? cpu_seconds / wall_seconds : 0;
  if (step.used > budget_ && frequency_hz_ > 1) {
    frequency_hz_ = std::max(frequency_hz_ / 2, 1);
    step.decision = BudgetDecision::kLower;
  } else if (step.used < budget_ / 4 && frequency_hz_ < configured_hz_) {
    frequency_hz_ = std::min(frequency_hz_ * 2, configured_hz_);
    step.decision = BudgetDecision::kRaise;
  }
  step.frequency_hz = frequency_hz_;
  return step;
}

const char* BudgetDecisionName(BudgetDecision decision) {
  switch (decision) {
    case BudgetDecision::kKeep:
      return "keep";
    case BudgetDecision::kLower:
      return "lower";
    case BudgetDecision::kRaise:
      return "raise";
  }
  return "keep";
}

}  // namespace vigil
