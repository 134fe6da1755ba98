// SPDX-License-Identifier: Apache-2.0
#include "gpu/gpu_accounting.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

constexpr int64_t kSec = 1'000'000'000;
const JobLabels kJobA{"1001", "alice", "llm", "llama", "slurm_cgroup", "pytorch"};
const JobLabels kJobB{"2002", "bob", "search", "bert", "k8s_pod", "jax"};

GpuAccountingInput Gpu(std::string uuid, std::vector<JobLabels> jobs, std::optional<double> act,
                       std::optional<double> energy = std::nullopt,
                       std::optional<double> power = std::nullopt) {
  return {std::move(uuid), true, std::move(jobs), act, energy, power};
}

TEST(GpuAccountantTest, AllocatedSecondsAddUpToWallTimeExactly) {
  GpuAccountant acc;
  // Irregular tick spacing, as a loaded daemon would produce.
  const int64_t ticks[] = {5 * kSec,     6 * kSec + 3, 7 * kSec + 999'999'999,
                           9 * kSec + 1, 9 * kSec + 2, 20 * kSec + 777};
  for (int64_t t : ticks)
    acc.Update(t, {Gpu("GPU-0", {kJobA}, 0.5), Gpu("GPU-1", {kJobA, kJobB}, 0.0)});
  const int64_t wall = ticks[5] - ticks[0];
  EXPECT_EQ((acc.jobs().at({"GPU-0", kJobA}).allocated_ns), wall);
  EXPECT_EQ(
      acc.jobs().at({"GPU-1", kJobA}).allocated_ns + acc.jobs().at({"GPU-1", kJobB}).allocated_ns,
      wall);
}

TEST(GpuAccountantTest, BusyIsWeightedByActivityAndIdleCountsZeroActivity) {
  GpuAccountant acc;
  acc.Update(0, {Gpu("GPU-0", {kJobA}, 0.0)});
  acc.Update(10 * kSec, {Gpu("GPU-0", {kJobA}, 0.8)});  // 10 s at 80 %.
  acc.Update(14 * kSec, {Gpu("GPU-0", {kJobA}, 0.0)});  // 4 s idle.
  const JobGpuUsage& u = acc.jobs().at({"GPU-0", kJobA});
  EXPECT_DOUBLE_EQ(u.allocated_s(), 14.0);
  EXPECT_DOUBLE_EQ(u.busy_s, 8.0);
  EXPECT_DOUBLE_EQ(u.held_idle_s, 4.0);
}

TEST(GpuAccountantTest, UnknownActivityAddsAllocatedButNeitherBusyNorIdle) {
  GpuAccountant acc;
  acc.Update(0, {Gpu("GPU-0", {kJobA}, std::nullopt)});
  acc.Update(3 * kSec, {Gpu("GPU-0", {kJobA}, std::nullopt)});
  const JobGpuUsage& u = acc.jobs().at({"GPU-0", kJobA});
  EXPECT_DOUBLE_EQ(u.allocated_s(), 3.0);
  EXPECT_DOUBLE_EQ(u.busy_s, 0.0);
  EXPECT_DOUBLE_EQ(u.held_idle_s, 0.0);
}

TEST(GpuAccountantTest, EnergyUsesCounterDeltasAndSplitsAcrossJobs) {
  GpuAccountant acc;
  acc.Update(0, {Gpu("GPU-0", {kJobA, kJobB}, 1.0, 1000.0, 300.0)});
  acc.Update(2 * kSec, {Gpu("GPU-0", {kJobA, kJobB}, 1.0, 1700.0, 400.0)});
  EXPECT_DOUBLE_EQ(acc.gpu_energy_j().at("GPU-0"), 700.0);
  EXPECT_DOUBLE_EQ(acc.jobs().at({"GPU-0", kJobA}).energy_j, 350.0);
  EXPECT_DOUBLE_EQ(acc.jobs().at({"GPU-0", kJobB}).energy_j, 350.0);
}

TEST(GpuAccountantTest, EnergyFallsBackToPowerTrapezoidWithoutCounter) {
  GpuAccountant acc;
  acc.Update(0, {Gpu("GPU-0", {}, 0.0, std::nullopt, 100.0)});
  acc.Update(4 * kSec, {Gpu("GPU-0", {}, 0.0, std::nullopt, 300.0)});
  EXPECT_DOUBLE_EQ(acc.gpu_energy_j().at("GPU-0"), 800.0);  // (100 + 300) / 2 x 4 s.
  EXPECT_TRUE(acc.jobs().empty());                          // Nobody held it: device energy only.
}

TEST(GpuAccountantTest, CounterResetFallsBackToPower) {
  GpuAccountant acc;
  acc.Update(0, {Gpu("GPU-0", {kJobA}, 1.0, 5000.0, 200.0)});
  acc.Update(1 * kSec, {Gpu("GPU-0", {kJobA}, 1.0, 10.0, 200.0)});  // Driver reloaded.
  EXPECT_DOUBLE_EQ(acc.gpu_energy_j().at("GPU-0"), 200.0);
}

TEST(GpuAccountantTest, UnknownProcessListAccountsNothingForJobs) {
  GpuAccountant acc;
  GpuAccountingInput lost = Gpu("GPU-0", {kJobA}, 1.0);
  lost.processes_known = false;
  acc.Update(0, {lost});
  acc.Update(kSec, {lost});
  EXPECT_TRUE(acc.jobs().empty());
}

}  // namespace
}  // namespace vigil
