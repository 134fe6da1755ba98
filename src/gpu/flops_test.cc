// SPDX-License-Identifier: Apache-2.0
#include "gpu/flops.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(EstimateFlopsTest, MatchesHandComputationOnH100) {
  const GpuSpec* h100 = FindGpuSpec("NVIDIA H100 80GB HBM3");
  ASSERT_NE(h100, nullptr);
  GpuActivity a;
  a.hmma_active = 0.5;
  a.fp32_active = 0.1;
  // 132 SMs x 1755 MHz = 231.66e9 SM-clocks/s;
  // HMMA 0.5 x 4096 x 231.66e9 = 474.43968e12; FP32 0.1 x 256 x 231.66e9 = 5.930496e12.
  auto est = EstimateFlops(*h100, a, 1755e6);
  ASSERT_TRUE(est.has_value());
  EXPECT_DOUBLE_EQ(est->flops, 480.370176e12);
  EXPECT_DOUBLE_EQ(est->dense_peak_flops, 989.4e12);
  EXPECT_NEAR(est->dense_peak_ratio, 480.370176 / 989.4, 1e-12);
}

TEST(EstimateFlopsTest, NoPipeActivityMeansNoEstimate) {
  const GpuSpec* a100 = FindGpuSpec("NVIDIA A100-SXM4-80GB");
  GpuActivity a;
  a.sm_active = 0.9;  // Not a pipe: says nothing about FLOPs.
  a.dram_active = 0.4;
  EXPECT_FALSE(EstimateFlops(*a100, a, 1410e6).has_value());
}

TEST(EstimateFlopsTest, AnyTensorStandsInForMissingHmmaSplit) {
  const GpuSpec* a100 = FindGpuSpec("NVIDIA A100-SXM4-80GB");
  GpuActivity a;
  a.tensor_active = 1.0;
  // 108 x 2048 x 1410e6 = 311.86944e12: the full dense BF16 peak.
  EXPECT_DOUBLE_EQ(EstimateFlops(*a100, a, 1410e6)->flops, 311.86944e12);
}

TEST(EstimateFlopsTest, MissingClockFallsBackToBoostClock) {
  const GpuSpec* v100 = FindGpuSpec("Tesla V100-SXM2-16GB");
  GpuActivity a;
  a.fp64_active = 1.0;
  // 80 x 64 x 1530e6 = 7.8336e12.
  EXPECT_DOUBLE_EQ(EstimateFlops(*v100, a, std::nullopt)->flops, 7.8336e12);
}

TEST(EstimateFlopsTest, DfmaUsesFp64TensorRateAndImmaTwiceFp16) {
  const GpuSpec* h100 = FindGpuSpec("H100 SXM");
  GpuActivity a;
  a.dfma_active = 0.25;
  a.imma_active = 0.25;
  const double clocks = 132 * 1e9;
  EXPECT_DOUBLE_EQ(EstimateFlops(*h100, a, 1e9)->flops,
                   0.25 * 256 * clocks + 0.25 * 2 * 4096 * clocks);
}

}  // namespace
}  // namespace vigil
