// SPDX-License-Identifier: Apache-2.0
#include "metrics/naming.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(NamingTest, AcceptsWellFormedFamilies) {
  constexpr MetricDesc kGood{"vigil_host_cpu_seconds_total", "CPU time by mode.",
                             MetricKind::kCounter, "seconds"};
  constexpr MetricDesc kFlops{"vigil_gpu_flops_estimated", "Estimated FLOP/s.", MetricKind::kGauge,
                              ""};

  EXPECT_TRUE(CheckMetricDesc(kGood).ok());
  EXPECT_TRUE(CheckMetricDesc(kFlops).ok());
}

TEST(NamingTest, RejectsBrokenRules) {
  EXPECT_FALSE(CheckMetricDesc({"host_cpu_seconds_total", "x.", MetricKind::kCounter, ""}).ok());
  EXPECT_FALSE(CheckMetricDesc({"vigil_host_cpu_seconds", "x.", MetricKind::kCounter, ""}).ok());
  EXPECT_FALSE(CheckMetricDesc({"vigil_host_mem_used_mib", "x.", MetricKind::kGauge, ""}).ok());
  EXPECT_FALSE(CheckMetricDesc({"vigil_host_load1", "no period", MetricKind::kGauge, ""}).ok());
  EXPECT_FALSE(CheckMetricDesc({"vigil_foo_load1", "x.", MetricKind::kGauge, ""}).ok());
}

TEST(NamingTest, LabelNameJobIsRefused) {
  EXPECT_FALSE(CheckLabelName("job").ok());
  EXPECT_TRUE(CheckLabelName("job_id").ok());
  EXPECT_FALSE(CheckLabelName("__name__").ok());
}

}  // namespace
}  // namespace vigil
