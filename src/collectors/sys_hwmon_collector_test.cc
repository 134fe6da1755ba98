// SPDX-License-Identifier: Apache-2.0
#include "collectors/sys_hwmon_collector.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::MustFind;
using testing::ScratchTree;

TEST(SysHwmonCollectorTest, ReadsChipsWithNodeExporterChipNames) {
  SysHwmonCollector collector(FixturePaths("gpu_node_hw"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  // Chip names: <bus>_<device> from the device link, else the name file, else the directory.
  const Labels pkg = {{"chip", "platform_coretemp_0"}, {"sensor", "temp1"}};
  EXPECT_EQ(MustFind(b, "vigil_host_hwmon_temperature_celsius", pkg), 45.0);
  EXPECT_EQ(MustFind(b, "vigil_host_hwmon_temperature_max_celsius", pkg), 80.0);
  EXPECT_EQ(MustFind(b, "vigil_host_hwmon_temperature_critical_celsius", pkg), 100.0);
  EXPECT_EQ(MustFind(b, "vigil_host_hwmon_temperature_celsius",
                     {{"chip", "platform_coretemp_0"}, {"sensor", "temp2"}}),
            42.5);
  EXPECT_EQ(
      MustFind(b, "vigil_host_hwmon_alarm",
               {{"chip", "platform_coretemp_0"}, {"sensor", "temp2"}, {"condition", "crit_alarm"}}),
      1);
  const Labels nvme = {{"chip", "nvme_nvme0"}, {"sensor", "temp1"}};
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_hwmon_temperature_celsius", nvme), 38.85);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_hwmon_temperature_celsius",
                            {{"chip", "nvme_nvme0"}, {"sensor", "temp2"}}),
                   -5.0);
  const Labels fan1 = {{"chip", "nct6798"}, {"sensor", "fan1"}};
  EXPECT_EQ(MustFind(b, "vigil_host_hwmon_fan_rpm", fan1), 1200);
  EXPECT_EQ(MustFind(b, "vigil_host_hwmon_fan_min_rpm", fan1), 300);
  EXPECT_EQ(MustFind(b, "vigil_host_hwmon_alarm",
                     {{"chip", "nct6798"}, {"sensor", "fan2"}, {"condition", "alarm"}}),
            1);
  const Labels in0 = {{"chip", "nct6798"}, {"sensor", "in0"}};
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_hwmon_voltage_volts", in0), 1.104);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_hwmon_voltage_max_volts", in0), 1.744);
  EXPECT_DOUBLE_EQ(
      MustFind(b, "vigil_host_hwmon_current_amperes", {{"chip", "nct6798"}, {"sensor", "curr1"}}),
      2.5);
  // power1 has only an average; power2 has both and keeps the instantaneous input.
  EXPECT_DOUBLE_EQ(
      MustFind(b, "vigil_host_hwmon_power_watts", {{"chip", "nct6798"}, {"sensor", "power1"}}),
      65.5);
  EXPECT_DOUBLE_EQ(
      MustFind(b, "vigil_host_hwmon_power_watts", {{"chip", "nct6798"}, {"sensor", "power2"}}),
      12.0);
  EXPECT_DOUBLE_EQ(
      MustFind(b, "vigil_host_hwmon_power_cap_watts", {{"chip", "nct6798"}, {"sensor", "power1"}}),
      250.0);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_hwmon_energy_joules_total",
                            {{"chip", "nct6798"}, {"sensor", "energy1"}}),
                   123.456789);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_hwmon_humidity_ratio",
                            {{"chip", "nct6798"}, {"sensor", "humidity1"}}),
                   0.45);
  EXPECT_EQ(MustFind(b, "vigil_host_hwmon_temperature_celsius",
                     {{"chip", "hwmon3"}, {"sensor", "temp1"}}),
            30);
  EXPECT_EQ(MustFind(b, "vigil_host_hwmon_chip_info",
                     {{"chip", "platform_coretemp_0"}, {"chip_name", "coretemp"}}),
            1);
  EXPECT_EQ(FindValue(b, "vigil_host_hwmon_chip_info", {{"chip", "hwmon3"}}), std::nullopt);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_hwmon_temperature_min_celsius", nvme), -273.15);
  EXPECT_EQ(MustFind(b, "vigil_host_hwmon_frequency_hertz",
                     {{"chip", "pci0000:00_0000:00:02_0"}, {"sensor", "freq1"}}),
            1.8e9);
  EXPECT_EQ(MustFind(b, "vigil_host_hwmon_fan_target_rpm",
                     {{"chip", "pci0000:00_0000:00:02_0"}, {"sensor", "fan1"}}),
            2000);
  EXPECT_EQ(
      MustFind(b, "vigil_host_hwmon_sensor_info",
               {{"chip", "platform_coretemp_0"}, {"sensor", "temp1"}, {"label", "Package id 0"}}),
      1);
  // The GPU's PCI device directory (read for old-layout attributes) has look-alike files.
  EXPECT_EQ(FindValue(b, "vigil_host_hwmon_sensor_info", {{"sensor", "port1"}}), std::nullopt);
  EXPECT_EQ(CountSamples(b, "vigil_host_hwmon_sensor_info"), 8u);
  EXPECT_EQ(CountSamples(b, "vigil_host_hwmon_chip_info"), 4u);
  EXPECT_EQ(CountSamples(b, "vigil_host_hwmon_temperature_celsius"), 6u);
  EXPECT_EQ(CountSamples(b, "vigil_host_hwmon_power_watts"), 2u);
}

TEST(SysHwmonCollectorTest, HostsWithoutHwmonAreAbsent) {
  for (const char* kind : {"debian12_vm", "old_kernel_4x"}) {
    SysHwmonCollector collector(FixturePaths(kind));

    auto r = CollectOnce(collector);

    EXPECT_EQ(r.status.code(), StatusCode::kNotFound) << kind;
    EXPECT_TRUE(r.batch.samples.empty());
  }
}

TEST(SysHwmonCollectorTest, CleansNamesAsNodeExporter) {
  EXPECT_EQ(SysHwmonCollector::CleanName("coretemp.0"), "coretemp_0");
  EXPECT_EQ(SysHwmonCollector::CleanName("0000:00:18.3\n"), "0000:00:18_3");
  EXPECT_EQ(SysHwmonCollector::CleanName("ACPI Thermal-Zone"), "acpi_thermal_zone");
  EXPECT_EQ(SysHwmonCollector::CleanName("..."), "");
}

TEST(SysHwmonCollectorTest, GarbageValueKeepsTheOtherSensors) {
  ScratchTree tree;
  tree.Write("sys/class/hwmon/hwmon0/name", "k10temp\n");
  tree.Write("sys/class/hwmon/hwmon0/temp1_input", "garbage\n");
  tree.Write("sys/class/hwmon/hwmon0/temp2_input", "51000\n");
  SysHwmonCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  EXPECT_EQ(r.status.code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status.message().find("temp1_input"), std::string::npos) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, "vigil_host_hwmon_temperature_celsius", {{"sensor", "temp2"}}), 51);
}

TEST(SysHwmonCollectorTest, KeepsTheListingUntilASensorVanishes) {
  ScratchTree tree;
  tree.Write("sys/class/hwmon/hwmon0/name", "drivetemp\n");
  tree.Write("sys/class/hwmon/hwmon0/temp1_input", "40000\n");
  SysHwmonCollector collector(tree.paths(), /*rescan_every=*/1000);
  ASSERT_TRUE(CollectOnce(collector).status.ok());

  // A sensor added between rescans is not seen yet: the listing is cached.
  tree.Write("sys/class/hwmon/hwmon1/name", "drivetemp\n");
  tree.Write("sys/class/hwmon/hwmon1/temp1_input", "41000\n");
  auto cached = CollectOnce(collector);
  EXPECT_EQ(CountSamples(cached.batch, "vigil_host_hwmon_temperature_celsius"), 1u);

  // A planned file that vanishes makes the next tick list again.
  std::filesystem::remove(tree.paths().sys_root + "/class/hwmon/hwmon0/temp1_input");
  auto gone = CollectOnce(collector);
  EXPECT_EQ(CountSamples(gone.batch, "vigil_host_hwmon_temperature_celsius"), 0u);
  auto rescanned = CollectOnce(collector);
  EXPECT_EQ(CountSamples(rescanned.batch, "vigil_host_hwmon_temperature_celsius"), 1u);
  EXPECT_EQ(MustFind(rescanned.batch, "vigil_host_hwmon_temperature_celsius"), 41);
}

}  // namespace
}  // namespace vigil
