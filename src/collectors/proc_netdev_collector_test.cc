// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_netdev_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::ScratchTree;

constexpr char kHeader[] =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
    "drop fifo colls carrier compressed\n";

TEST(ProcNetdevCollectorTest, ReadsCapturedDebianVm) {
  ProcNetdevCollector collector(FixturePaths("debian12_vm"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(CountSamples(b, "vigil_host_network_receive_bytes_total"), 3u);  // ifb0, ifb1, eth0.
  EXPECT_FALSE(FindValue(b, "vigil_host_network_receive_bytes_total", {{"interface", "lo"}}));
  const Labels eth0 = {{"interface", "eth0"}};
  EXPECT_EQ(FindValue(b, "vigil_host_network_receive_bytes_total", eth0), 45495203);
  EXPECT_EQ(FindValue(b, "vigil_host_network_receive_packets_total", eth0), 940);
  EXPECT_EQ(FindValue(b, "vigil_host_network_transmit_bytes_total", eth0), 46055);
  EXPECT_EQ(FindValue(b, "vigil_host_network_transmit_packets_total", eth0), 578);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_active_opens_total"), 35);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_passive_opens_total"), 24);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_in_segments_total"), 1204);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_out_segments_total"), 836);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_out_resets_total"), 2);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_retransmitted_segments_total"), 0);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_listen_overflows_total"), 0);
}

TEST(ProcNetdevCollectorTest, ReadsErrorsDropsAndTcpCounters) {
  ProcNetdevCollector collector(FixturePaths("cgroupv2_numa_ib_host"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  const Labels eth0 = {{"interface", "eth0"}};
  EXPECT_EQ(FindValue(b, "vigil_host_network_receive_bytes_total", eth0), 987654321012.0);
  EXPECT_EQ(FindValue(b, "vigil_host_network_receive_errors_total", eth0), 3);
  EXPECT_EQ(FindValue(b, "vigil_host_network_receive_drops_total", eth0), 7);
  EXPECT_EQ(FindValue(b, "vigil_host_network_transmit_bytes_total", eth0), 123456789012.0);
  EXPECT_EQ(FindValue(b, "vigil_host_network_transmit_errors_total", eth0), 1);
  EXPECT_EQ(FindValue(b, "vigil_host_network_transmit_drops_total", eth0), 2);
  EXPECT_EQ(FindValue(b, "vigil_host_network_receive_drops_total", {{"interface", "ib0"}}), 1);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_retransmitted_segments_total"), 4321);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_established_resets_total"), 34);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_established"), 56);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_out_resets_total"), 876);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_listen_overflows_total"), 7);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_listen_drops_total"), 9);
}

TEST(ProcNetdevCollectorTest, ReadsOldLineWithoutSpaceAfterColon) {
  ProcNetdevCollector collector(FixturePaths("old_kernel_4x"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const Labels eth0 = {{"interface", "eth0"}};
  EXPECT_EQ(FindValue(r.batch, "vigil_host_network_receive_bytes_total", eth0), 123456789012.0);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_network_receive_packets_total", eth0), 900000);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_network_transmit_drops_total", eth0), 4);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_tcp_retransmitted_segments_total"), 80);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_tcp_listen_drops_total"), 2);
}

TEST(ProcNetdevCollectorTest, EachOfTheSixteenColumnsLandsInItsFamily) {
  ScratchTree tree;
  tree.Write("proc/net/dev",
             std::string(kHeader) + "  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n");
  tree.Write("proc/net/snmp", "Tcp: ActiveOpens\nTcp: 1\n");
  tree.Write("proc/net/netstat", "TcpExt: ListenDrops\nTcpExt: 0\n");
  ProcNetdevCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const Labels eth0 = {{"interface", "eth0"}};
  const char* families[] = {"receive_bytes",
                            "receive_packets",
                            "receive_errors",
                            "receive_drops",
                            "receive_fifo_errors",
                            "receive_frame_errors",
                            "receive_compressed_packets",
                            "receive_multicast_packets",
                            "transmit_bytes",
                            "transmit_packets",
                            "transmit_errors",
                            "transmit_drops",
                            "transmit_fifo_errors",
                            "transmit_collisions",
                            "transmit_carrier_errors",
                            "transmit_compressed_packets"};
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(FindValue(r.batch, std::string("vigil_host_network_") + families[i] + "_total", eth0),
              i + 1)
        << families[i];
  }
}

TEST(ProcNetdevCollectorTest, EmptyExcludeKeepsLoopback) {
  ProcNetdevCollector collector(FixturePaths("old_kernel_4x"),
                                ProcNetdevOptions{.interface_exclude = ""});

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(FindValue(r.batch, "vigil_host_network_receive_bytes_total", {{"interface", "lo"}}),
            500000);
}

TEST(ProcNetdevCollectorTest, SnmpSectionIsNotConfusedWithTcpExt) {
  auto pairs = ProcNetdevCollector::ParseSnmpSection(
      "TcpExt: ListenDrops\nTcpExt: 5\nTcp: MaxConn OutRsts\nTcp: -1 3\n", "Tcp");

  ASSERT_TRUE(pairs.ok()) << pairs.status().message();
  ASSERT_EQ(pairs->size(), 2u);
  EXPECT_EQ((*pairs)[0].first, "MaxConn");
  EXPECT_EQ((*pairs)[0].second, -1);
  EXPECT_EQ((*pairs)[1].second, 3);
}

TEST(ProcNetdevCollectorTest, SnmpWithFewerValuesThanNamesIsDataLoss) {
  EXPECT_EQ(ProcNetdevCollector::ParseSnmpSection("Tcp: A B C\nTcp: 1 2\n", "Tcp").status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ProcNetdevCollector::ParseSnmpSection("Tcp: A B\n", "Tcp").status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ProcNetdevCollector::ParseSnmpSection("Tcp: A\nTcp: z\n", "Tcp").status().code(),
            StatusCode::kDataLoss);
}

TEST(ProcNetdevCollectorTest, TruncatedInterfaceLineIsDataLoss) {
  auto parsed = ProcNetdevCollector::ParseNetDev(std::string(kHeader) + "  eth0: 1 2 3 4 5\n");

  EXPECT_EQ(parsed.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(parsed.status().message().find("eth0"), std::string::npos);
}

TEST(ProcNetdevCollectorTest, GarbageCounterIsDataLoss) {
  auto parsed = ProcNetdevCollector::ParseNetDev(
      std::string(kHeader) + "  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 -16\n");

  EXPECT_EQ(parsed.status().code(), StatusCode::kDataLoss);
}

TEST(ProcNetdevCollectorTest, MissingSnmpKeepsInterfacesAndIsAFailure) {
  ScratchTree tree;
  tree.Write("proc/net/dev",
             std::string(kHeader) + "  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n");
  ProcNetdevCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  EXPECT_FALSE(r.status.ok());
  EXPECT_FALSE(IsAbsent(r.status)) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, "vigil_host_network_transmit_bytes_total", {{"interface", "eth0"}}),
            9);
}

TEST(ProcNetdevCollectorTest, MissingNetDevIsAbsent) {
  ScratchTree tree;
  ProcNetdevCollector collector(tree.paths());

  EXPECT_TRUE(IsAbsent(CollectOnce(collector).status));
}

}  // namespace
}  // namespace vigil
