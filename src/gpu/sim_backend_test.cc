// SPDX-License-Identifier: Apache-2.0
#include "gpu/sim_backend.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(SimBackendTest, EightGpusWithTrainingDipsAndOneIdleButHeldGpu) {
  int64_t now = 1'000'000'000;
  SimBackend sim(8, [&] { return now; });
  EXPECT_TRUE(sim.simulated());
  std::vector<GpuReading> r;
  double min_sm = 1, max_sm = 0;
  for (int step = 0; step < 40; ++step) {
    now += 100'000'000;  // 100 ms
    ASSERT_TRUE(sim.Read(&r).ok());
    ASSERT_EQ(r.size(), 8u);
    min_sm = std::min(min_sm, *r[0].activity.sm_active);
    max_sm = std::max(max_sm, *r[0].activity.sm_active);
    EXPECT_EQ(*r[7].activity.sm_active, 0.0);
    ASSERT_EQ(r[7].processes.size(), 1u);  // Held while idle.
    // Each GPU's only process has all of the GPU's SM activity.
    EXPECT_EQ(r[0].processes[0].sm_ratio, r[0].activity.sm_active);
    EXPECT_EQ(r[7].processes[0].sm_ratio, 0.0);
    EXPECT_EQ(r[7].simulated_jobs[0].job_id, "sim-nb-3003");
    EXPECT_EQ(r[0].simulated_jobs[0].framework, "pytorch");
    EXPECT_EQ(r[4].simulated_jobs[0].framework, "jax");
  }
  EXPECT_LT(min_sm, 0.2);  // Data-loading dip.
  EXPECT_GT(max_sm, 0.85);
  EXPECT_NE(r[0].uuid, r[1].uuid);
}

TEST(SimBackendTest, SameInstantGivesSameValues) {
  int64_t now = 5;
  SimBackend sim(2, [&] { return now; });
  std::vector<GpuReading> a, b;
  now = 3'300'000'000;
  ASSERT_TRUE(sim.Read(&a).ok());
  ASSERT_TRUE(sim.Read(&b).ok());
  EXPECT_EQ(*a[1].power_watts, *b[1].power_watts);
}

}  // namespace
}  // namespace vigil
