// SPDX-License-Identifier: Apache-2.0
#include "gpu/profiling_control.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(ProfilingControlTest, PauseAndResume) {
  ASSERT_TRUE(ResumeGpuProfiling().ok());
  EXPECT_FALSE(GpuProfilingPaused());
  EXPECT_EQ(GpuProfilingPauseRemainingSeconds(), 0);
  ASSERT_TRUE(PauseGpuProfiling(300).ok());
  EXPECT_TRUE(GpuProfilingPaused());
  EXPECT_GT(GpuProfilingPauseRemainingSeconds(), 298);
  ASSERT_TRUE(ResumeGpuProfiling().ok());
  EXPECT_FALSE(GpuProfilingPaused());
}

TEST(ProfilingControlTest, UntimedPauseLastsUntilResumed) {
  ASSERT_TRUE(PauseGpuProfiling(0).ok());
  EXPECT_TRUE(GpuProfilingPaused());
  EXPECT_EQ(GpuProfilingPauseRemainingSeconds(), -1);
  ASSERT_TRUE(ResumeGpuProfiling().ok());
  EXPECT_FALSE(GpuProfilingPaused());
}

}  // namespace
}  // namespace vigil
