// SPDX-License-Identifier: Apache-2.0
#include "profile/sampling_budget.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

// A fake CPU clock: each window's sampler CPU seconds as the test states them.
TEST(SamplingBudgetTest, HalvesWhenOverBudgetDownToOneHertz) {
  SamplingBudget budget(19, 0.005);             // 0.3 s of CPU in a 60 s window.
  BudgetStep step = budget.EndWindow(0.6, 60);  // 1 % of a core.
  EXPECT_EQ(step.decision, BudgetDecision::kLower);
  EXPECT_EQ(step.frequency_hz, 9);
  EXPECT_DOUBLE_EQ(step.used, 0.01);
  EXPECT_EQ(budget.EndWindow(0.6, 60).frequency_hz, 4);
  EXPECT_EQ(budget.EndWindow(0.6, 60).frequency_hz, 2);
  EXPECT_EQ(budget.EndWindow(0.6, 60).frequency_hz, 1);
  step = budget.EndWindow(0.6, 60);
  EXPECT_EQ(step.decision, BudgetDecision::kKeep);  // Never below 1 Hz.
  EXPECT_EQ(step.frequency_hz, 1);
}

TEST(SamplingBudgetTest, KeepsBetweenAQuarterAndAllOfTheBudget) {
  SamplingBudget budget(19, 0.005);
  EXPECT_EQ(budget.EndWindow(0.3, 60).decision, BudgetDecision::kKeep);   // Exactly the budget.
  EXPECT_EQ(budget.EndWindow(0.01, 60).decision, BudgetDecision::kKeep);  // At the ceiling.
  EXPECT_EQ(budget.frequency_hz(), 19);
  budget.EndWindow(0.6, 60);                     // -> 9 Hz.
  BudgetStep step = budget.EndWindow(0.12, 60);  // 0.2 %: above a quarter (0.125 %).
  EXPECT_EQ(step.decision, BudgetDecision::kKeep);
  EXPECT_EQ(step.frequency_hz, 9);
}

TEST(SamplingBudgetTest, RaisesBackToTheConfiguredFrequencyWhenWellUnder) {
  SamplingBudget budget(19, 0.005);
  budget.EndWindow(1.2, 60);                     // 9
  budget.EndWindow(1.2, 60);                     // 4
  budget.EndWindow(1.2, 60);                     // 2
  BudgetStep step = budget.EndWindow(0.06, 60);  // 0.1 %: under a quarter of the budget.
  EXPECT_EQ(step.decision, BudgetDecision::kRaise);
  EXPECT_EQ(step.frequency_hz, 4);
  EXPECT_EQ(budget.EndWindow(0.06, 60).frequency_hz, 8);
  EXPECT_EQ(budget.EndWindow(0.06, 60).frequency_hz, 16);
  EXPECT_EQ(budget.EndWindow(0.06, 60).frequency_hz, 19);  // Capped at the configured 19.
  EXPECT_EQ(budget.EndWindow(0.0, 60).decision, BudgetDecision::kKeep);
}

TEST(SamplingBudgetTest, AnEmptyWindowUsesNothing) {
  SamplingBudget budget(0, 0.005);  // A configured 0 Hz is taken as 1.
  EXPECT_EQ(budget.configured_hz(), 1);
  BudgetStep step = budget.EndWindow(5, 0);
  EXPECT_EQ(step.used, 0);
  EXPECT_EQ(step.decision, BudgetDecision::kKeep);
}

}  // namespace
}  // namespace vigil
