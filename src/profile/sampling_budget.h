// SPDX-License-Identifier: Apache-2.0
// The CPU budget of continuous profiling: after each window the sampler's own CPU time for that
// window is compared with a budget (a fraction of one core). Over budget, the next window samples
// at half the frequency (never below 1 Hz); well under it (below a quarter of the budget, where
// doubling the rate still leaves room), the frequency doubles back towards the configured one.
// Pure arithmetic on the figures it is given, so tests drive it with an injected CPU clock.
#pragma once

namespace vigil {

enum class BudgetDecision { kKeep, kLower, kRaise };

struct BudgetStep {
  BudgetDecision decision = BudgetDecision::kKeep;
  int frequency_hz = 0;  // For the next window.
  double used = 0;       // CPU seconds per wall second in the window just ended.
};

class SamplingBudget {
 public:
  // `configured_hz` >= 1 is the ceiling; `budget` is CPU seconds per wall second (0.005 = 0.5 %
  // of one core).
  SamplingBudget(int configured_hz, double budget);

  // The window just ended took `cpu_seconds` of sampler CPU over `wall_seconds`.
  BudgetStep EndWindow(double cpu_seconds, double wall_seconds);

  int frequency_hz() const { return frequency_hz_; }
  int configured_hz() const { return configured_hz_; }
  double budget() const { return budget_; }

 private:
  const int configured_hz_;
  const double budget_;
  int frequency_hz_;
};

const char* BudgetDecisionName(BudgetDecision decision);

}  // namespace vigil
