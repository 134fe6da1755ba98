// SPDX-License-Identifier: Apache-2.0
#include "collectors/sys_netclass_collector.h"

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

TEST(SysNetclassCollectorTest, ReadsLinkAttributesAndDetailedCounters) {
  SysNetclassCollector collector(FixturePaths("gpu_node_hw"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  const Labels eth0 = {{"interface", "eth0"}};
  EXPECT_EQ(MustFind(b, "vigil_host_network_speed_bytes_per_second", eth0), 100e9 / 8);
  EXPECT_EQ(MustFind(b, "vigil_host_network_up", eth0), 1);
  EXPECT_EQ(MustFind(b, "vigil_host_network_carrier", eth0), 1);
  EXPECT_EQ(MustFind(b, "vigil_host_network_carrier_changes_total", eth0), 3);
  EXPECT_EQ(MustFind(b, "vigil_host_network_carrier_up_changes_total", eth0), 2);
  EXPECT_EQ(MustFind(b, "vigil_host_network_carrier_down_changes_total", eth0), 1);
  EXPECT_EQ(MustFind(b, "vigil_host_network_mtu_bytes", eth0), 9000);
  EXPECT_EQ(MustFind(b, "vigil_host_network_transmit_queue_length", eth0), 1000);
  EXPECT_EQ(MustFind(b, "vigil_host_network_flags", eth0), 0x1003);
  EXPECT_EQ(MustFind(b, "vigil_host_network_iface_id", eth0), 2);
  EXPECT_EQ(MustFind(b, "vigil_host_network_name_assign_type", eth0), 4);
  EXPECT_EQ(MustFind(b, "vigil_host_network_protocol_type", eth0), 1);
  EXPECT_EQ(MustFind(b, "vigil_host_network_info",
                     {{"interface", "eth0"},
                      {"address", "0c:42:a1:5e:6f:70"},
                      {"broadcast", "ff:ff:ff:ff:ff:ff"},
                      {"duplex", "full"},
                      {"operstate", "up"},
                      {"ifalias", "uplink a"}}),
            1);
  EXPECT_EQ(MustFind(b, "vigil_host_network_receive_crc_errors_total", eth0), 7);
  EXPECT_EQ(MustFind(b, "vigil_host_network_receive_missed_errors_total", eth0), 11);
  EXPECT_EQ(MustFind(b, "vigil_host_network_receive_length_errors_total", eth0), 4);
  EXPECT_EQ(MustFind(b, "vigil_host_network_receive_alignment_errors_total", eth0), 0);
  EXPECT_EQ(MustFind(b, "vigil_host_network_transmit_carrier_sense_errors_total", eth0), 2);
  EXPECT_EQ(MustFind(b, "vigil_host_network_transmit_window_errors_total", eth0), 0);
  // A link without cable: no speed (-1), operstate down.
  const Labels eth1 = {{"interface", "eth1"}};
  EXPECT_EQ(FindValue(b, "vigil_host_network_speed_bytes_per_second", eth1), std::nullopt);
  EXPECT_EQ(MustFind(b, "vigil_host_network_up", eth1), 0);
  EXPECT_EQ(MustFind(b, "vigil_host_network_carrier", eth1), 0);
  // IPoIB: ARPHRD_INFINIBAND.
  EXPECT_EQ(MustFind(b, "vigil_host_network_protocol_type", {{"interface", "ib0"}}), 32);
  EXPECT_EQ(MustFind(b, "vigil_host_network_speed_bytes_per_second", {{"interface", "ib0"}}), 25e9);
  // lo is skipped, bonding_masters is not an interface; totals stay with proc_netdev.
  EXPECT_EQ(CountSamples(b, "vigil_host_network_info"), 3u);
  EXPECT_EQ(FindValue(b, "vigil_host_network_mtu_bytes", {{"interface", "lo"}}), std::nullopt);
}

TEST(SysNetclassCollectorTest, OnlyLoopbackIsAbsent) {
  ScratchTree tree;
  tree.Write("sys/class/net/lo/mtu", "65536\n");
  SysNetclassCollector collector(tree.paths());

  EXPECT_EQ(CollectOnce(collector).status.code(), StatusCode::kNotFound);
}

TEST(SysNetclassCollectorTest, GarbageFlagsAreDataLossAndTheRestStays) {
  ScratchTree tree;
  tree.Write("sys/class/net/eth0/flags", "0xzz\n");
  tree.Write("sys/class/net/eth0/mtu", "1500\n");
  tree.Write("sys/class/net/eth0/operstate", "dormant\n");
  SysNetclassCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  EXPECT_EQ(r.status.code(), StatusCode::kDataLoss);
  EXPECT_EQ(MustFind(r.batch, "vigil_host_network_mtu_bytes"), 1500);
  EXPECT_EQ(MustFind(r.batch, "vigil_host_network_up"), 0);
  EXPECT_EQ(MustFind(r.batch, "vigil_host_network_info", {{"operstate", "dormant"}}), 1);
}

TEST(SysNetclassCollectorTest, IdentityIsReadAtRescansAndStateEveryTick) {
  ScratchTree tree;
  tree.Write("sys/class/net/eth0/ifindex", "7\n");
  tree.Write("sys/class/net/eth0/address", "aa:bb:cc:dd:ee:ff\n");
  tree.Write("sys/class/net/eth0/mtu", "1500\n");
  tree.Write("sys/class/net/eth0/operstate", "up\n");
  SysNetclassCollector collector(tree.paths(), /*rescan_every=*/2);
  ASSERT_TRUE(CollectOnce(collector).status.ok());

  tree.Write("sys/class/net/eth0/ifindex", "8\n");
  tree.Write("sys/class/net/eth0/mtu", "9000\n");
  tree.Write("sys/class/net/eth0/operstate", "down\n");
  auto cached = CollectOnce(collector);
  auto rescanned = CollectOnce(collector);

  EXPECT_EQ(MustFind(cached.batch, "vigil_host_network_iface_id"), 7);
  EXPECT_EQ(MustFind(cached.batch, "vigil_host_network_mtu_bytes"), 9000);
  EXPECT_EQ(MustFind(cached.batch, "vigil_host_network_up"), 0);
  EXPECT_EQ(MustFind(cached.batch, "vigil_host_network_info",
                     {{"address", "aa:bb:cc:dd:ee:ff"}, {"operstate", "down"}}),
            1);
  EXPECT_EQ(MustFind(rescanned.batch, "vigil_host_network_iface_id"), 8);
}

TEST(SysNetclassCollectorTest, GarbageIdentityIsDataLossAndTheRestStays) {
  ScratchTree tree;
  tree.Write("sys/class/net/eth0/type", "ether\n");
  tree.Write("sys/class/net/eth0/mtu", "1500\n");
  SysNetclassCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  EXPECT_EQ(r.status.code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status.message().find("type"), std::string::npos) << r.status.message();
  EXPECT_EQ(MustFind(r.batch, "vigil_host_network_mtu_bytes"), 1500);
}

TEST(SysNetclassCollectorTest, AVanishedInterfaceLeavesNoSeriesAndIsRelisted) {
  ScratchTree tree;
  for (const char* iface : {"eth0", "veth1"}) {
    tree.Write(std::string("sys/class/net/") + iface + "/operstate", "up\n");
    tree.Write(std::string("sys/class/net/") + iface + "/mtu", "1500\n");
  }
  SysNetclassCollector collector(tree.paths(), /*rescan_every=*/1000);
  ASSERT_EQ(CountSamples(CollectOnce(collector).batch, "vigil_host_network_info"), 2u);

  std::filesystem::remove_all(tree.paths().sys_root + "/class/net/veth1");
  auto gone = CollectOnce(collector);
  auto relisted = CollectOnce(collector);

  EXPECT_TRUE(gone.status.ok()) << gone.status.message();
  EXPECT_EQ(FindValue(gone.batch, "vigil_host_network_info", {{"interface", "veth1"}}),
            std::nullopt);
  EXPECT_EQ(CountSamples(gone.batch, "vigil_host_network_mtu_bytes"), 1u);
  EXPECT_EQ(CountSamples(relisted.batch, "vigil_host_network_info"), 1u);
}

}  // namespace
}  // namespace vigil
