// SPDX-License-Identifier: Apache-2.0
#include "collectors/sys_thermal_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FixturePaths;
using testing::MustFind;
using testing::ScratchTree;

TEST(SysThermalCollectorTest, ReadsZonesAndCoolingDevices) {
  SysThermalCollector collector(FixturePaths("gpu_node_hw"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_thermal_zone_temperature_celsius",
                            {{"zone", "0"}, {"type", "x86_pkg_temp"}}),
                   46.0);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_thermal_zone_temperature_celsius",
                            {{"zone", "1"}, {"type", "acpitz"}}),
                   27.8);
  EXPECT_EQ(MustFind(b, "vigil_host_thermal_cooling_device_state",
                     {{"device", "0"}, {"type", "Processor"}}),
            2);
  EXPECT_EQ(MustFind(b, "vigil_host_thermal_cooling_device_max_state",
                     {{"device", "1"}, {"type", "intel_powerclamp"}}),
            50);
  EXPECT_EQ(CountSamples(b, "vigil_host_thermal_zone_temperature_celsius"), 2u);
}

TEST(SysThermalCollectorTest, AnEmptyThermalClassIsAbsent) {
  ScratchTree tree;
  tree.MakeDir("sys/class/thermal");  // What a VM without ACPI thermal zones shows.
  SysThermalCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  EXPECT_EQ(r.status.code(), StatusCode::kNotFound) << r.status.message();
  SysThermalCollector old(FixturePaths("old_kernel_4x"));
  EXPECT_EQ(CollectOnce(old).status.code(), StatusCode::kNotFound);
}

TEST(SysThermalCollectorTest, ZoneAppearingLaterIsFoundOnTheNextTick) {
  ScratchTree tree;
  tree.MakeDir("sys/class/thermal");
  SysThermalCollector collector(tree.paths());
  ASSERT_EQ(CollectOnce(collector).status.code(), StatusCode::kNotFound);

  tree.Write("sys/class/thermal/thermal_zone3/type", "iwlwifi_1\n");
  tree.Write("sys/class/thermal/thermal_zone3/temp", "-1000\n");
  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(MustFind(r.batch, "vigil_host_thermal_zone_temperature_celsius", {{"zone", "3"}}), -1);
}

}  // namespace
}  // namespace vigil
