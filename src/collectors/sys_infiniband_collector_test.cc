// SPDX-License-Identifier: Apache-2.0
#include "collectors/sys_infiniband_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::ScratchTree;

TEST(SysInfinibandCollectorTest, ReadsMlx5Port) {
  SysInfinibandCollector collector(FixturePaths("cgroupv2_numa_ib_host"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  const Labels port = {{"device", "mlx5_0"}, {"port", "1"}};
  // port_xmit_data and port_rcv_data count 4-byte words.
  EXPECT_EQ(FindValue(b, "vigil_host_infiniband_transmit_bytes_total", port), 1e10);
  EXPECT_EQ(FindValue(b, "vigil_host_infiniband_receive_bytes_total", port), 5e9);
  EXPECT_EQ(FindValue(b, "vigil_host_infiniband_transmit_packets_total", port), 40000000);
  EXPECT_EQ(FindValue(b, "vigil_host_infiniband_receive_packets_total", port), 30000000);
  EXPECT_EQ(FindValue(b, "vigil_host_infiniband_receive_errors_total", port), 2);
  EXPECT_EQ(FindValue(b, "vigil_host_infiniband_transmit_discards_total", port), 1);
  EXPECT_EQ(FindValue(b, "vigil_host_infiniband_symbol_errors_total", port), 0);
  EXPECT_EQ(FindValue(b, "vigil_host_infiniband_link_downed_total", port), 1);
  EXPECT_EQ(FindValue(b, "vigil_host_infiniband_port_state", port), 4);
  EXPECT_EQ(FindValue(b, "vigil_host_infiniband_port_rate_bytes_per_second", port), 50e9);
}

TEST(SysInfinibandCollectorTest, HostsWithoutInfinibandAreAbsent) {
  for (const char* kind : {"debian12_vm", "old_kernel_4x"}) {
    SysInfinibandCollector collector(FixturePaths(kind));

    auto r = CollectOnce(collector);

    EXPECT_EQ(r.status.code(), StatusCode::kNotFound) << kind;
    EXPECT_TRUE(r.batch.samples.empty());
  }
}

TEST(SysInfinibandCollectorTest, ParsesStateAndRate) {
  EXPECT_EQ(*SysInfinibandCollector::ParseState("4: ACTIVE\n"), 4);
  EXPECT_EQ(*SysInfinibandCollector::ParseState("1: DOWN"), 1);
  EXPECT_DOUBLE_EQ(*SysInfinibandCollector::ParseRate("100 Gb/sec (4X EDR)\n"), 12.5e9);
  EXPECT_DOUBLE_EQ(*SysInfinibandCollector::ParseRate("2.5 Gb/sec (1X SDR)\n"), 312.5e6);
}

TEST(SysInfinibandCollectorTest, MalformedStateAndRateAreDataLoss) {
  EXPECT_EQ(SysInfinibandCollector::ParseState("ACTIVE").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(SysInfinibandCollector::ParseState("").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(SysInfinibandCollector::ParseRate("fast").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(SysInfinibandCollector::ParseRate("x Gb/sec").status().code(), StatusCode::kDataLoss);
}

TEST(SysInfinibandCollectorTest, GarbageCounterKeepsTheOtherCounters) {
  ScratchTree tree;
  tree.Write("sys/class/infiniband/mlx5_1/ports/1/counters/port_rcv_data", "12abc\n");
  tree.Write("sys/class/infiniband/mlx5_1/ports/1/counters/port_xmit_data", "10\n");
  tree.Write("sys/class/infiniband/mlx5_1/ports/1/state", "1: DOWN\n");
  SysInfinibandCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  EXPECT_EQ(r.status.code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status.message().find("port_rcv_data"), std::string::npos) << r.status.message();
  const Labels port = {{"device", "mlx5_1"}, {"port", "1"}};
  EXPECT_EQ(FindValue(r.batch, "vigil_host_infiniband_transmit_bytes_total", port), 40);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_infiniband_port_state", port), 1);
  EXPECT_EQ(CountSamples(r.batch, "vigil_host_infiniband_receive_bytes_total"), 0u);
}

TEST(SysInfinibandCollectorTest, DeviceWithoutPortsIsAFailureNotAbsent) {
  ScratchTree tree;
  tree.MakeDir("sys/class/infiniband/mlx5_2");
  SysInfinibandCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  EXPECT_FALSE(r.status.ok());
  EXPECT_FALSE(IsAbsent(r.status)) << r.status.message();
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::MustFind;

TEST(SysInfinibandCollectorTest, ReadsRoceHwCountersAndEfa) {
  SysInfinibandCollector collector(FixturePaths("gpu_node_hw"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  const Labels mlx = {{"device", "mlx5_1"}, {"port", "1"}};
  EXPECT_EQ(MustFind(b, "vigil_host_infiniband_transmit_bytes_total", mlx), 10000);
  EXPECT_EQ(MustFind(b, "vigil_host_infiniband_port_rate_bytes_per_second", mlx), 50e9);
  EXPECT_EQ(MustFind(b, "vigil_host_infiniband_port_physical_state", mlx), 5);
  EXPECT_EQ(MustFind(b, "vigil_host_infiniband_port_counter_total",
                     {{"device", "mlx5_1"}, {"counter", "port_xmit_wait"}}),
            1500);
  EXPECT_EQ(MustFind(b, "vigil_host_infiniband_port_counter_total",
                     {{"device", "mlx5_1"}, {"counter", "VL15_dropped"}}),
            0);
  EXPECT_EQ(MustFind(b, "vigil_host_infiniband_hw_counter_total",
                     {{"device", "mlx5_1"}, {"port", "1"}, {"counter", "out_of_buffer"}}),
            17);
  EXPECT_EQ(MustFind(b, "vigil_host_infiniband_hw_counter_total",
                     {{"device", "mlx5_1"}, {"counter", "np_cnp_sent"}}),
            120);
  EXPECT_EQ(MustFind(b, "vigil_host_infiniband_device_hw_counter_total",
                     {{"device", "mlx5_1"}, {"counter", "rx_write_requests"}}),
            4096);
  EXPECT_EQ(FindValue(b, "vigil_host_infiniband_hw_counter_total", {{"counter", "lifespan"}}),
            std::nullopt);
  EXPECT_EQ(MustFind(b, "vigil_host_infiniband_info",
                     {{"device", "mlx5_1"},
                      {"board_id", "MT_0000000838"},
                      {"firmware_version", "28.39.1002"},
                      {"hca_type", "MT4129"}}),
            1);
  // EFA: no IBTA counters/, everything in hw_counters/.
  const Labels efa = {{"device", "efa_0"}, {"port", "1"}};
  EXPECT_EQ(FindValue(b, "vigil_host_infiniband_transmit_bytes_total", efa), std::nullopt);
  EXPECT_EQ(MustFind(b, "vigil_host_infiniband_hw_counter_total",
                     {{"device", "efa_0"}, {"counter", "rdma_write_bytes"}}),
            2097152);
  EXPECT_EQ(MustFind(b, "vigil_host_infiniband_hw_counter_total",
                     {{"device", "efa_0"}, {"counter", "rx_drops"}}),
            1);
  EXPECT_EQ(MustFind(b, "vigil_host_infiniband_device_hw_counter_total",
                     {{"device", "efa_0"}, {"counter", "submitted_cmds"}}),
            42);
  EXPECT_EQ(MustFind(b, "vigil_host_infiniband_port_state", efa), 4);
  EXPECT_EQ(CountSamples(b, "vigil_host_infiniband_hw_counter_total"), 7u + 7u);
}

}  // namespace
}  // namespace vigil
