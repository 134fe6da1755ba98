// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_sockstat_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::ScratchTree;

TEST(ProcSockstatCollectorTest, ReadsCapturedKernel618) {
  ProcSockstatCollector collector(FixturePaths("debian12_k618_vm"), 4096);

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(FindValue(b, "vigil_host_sockets_used"), 17);
  EXPECT_EQ(FindValue(b, "vigil_host_sockets_in_use", {{"protocol", "tcp"}, {"ip_version", "4"}}),
            1);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_allocated_sockets"), 1);
  EXPECT_EQ(FindValue(b, "vigil_host_socket_memory_bytes", {{"protocol", "tcp"}}), 17 * 4096);
  // tcp, udp, udplite and raw for each IP version.
  EXPECT_EQ(CountSamples(b, "vigil_host_sockets_in_use"), 8u);
  EXPECT_EQ(CountSamples(b, "vigil_host_ip_reassembly_queues"), 2u);
}

TEST(ProcSockstatCollectorTest, EveryFieldLandsInItsFamily) {
  ScratchTree tree;
  tree.Write("proc/net/sockstat",
             "sockets: used 1234\n"
             "TCP: inuse 50 orphan 3 tw 70 alloc 60 mem 25\n"
             "UDP: inuse 8 mem 2\n"
             "UDPLITE: inuse 1\n"
             "RAW: inuse 2\n"
             "FRAG: inuse 4 memory 8192\n"
             "MPTCP: inuse 9\n");
  tree.Write("proc/net/sockstat6",
             "TCP6: inuse 20\nUDP6: inuse 6\nUDPLITE6: inuse 0\nRAW6: inuse 1\n"
             "FRAG6: inuse 5 memory 1024\n");
  ProcSockstatCollector collector(tree.paths(), 16384);

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(FindValue(b, "vigil_host_sockets_used"), 1234);
  EXPECT_EQ(FindValue(b, "vigil_host_sockets_in_use", {{"protocol", "tcp"}, {"ip_version", "4"}}),
            50);
  EXPECT_EQ(FindValue(b, "vigil_host_sockets_in_use", {{"protocol", "tcp"}, {"ip_version", "6"}}),
            20);
  EXPECT_EQ(FindValue(b, "vigil_host_sockets_in_use", {{"protocol", "udp"}, {"ip_version", "6"}}),
            6);
  EXPECT_EQ(FindValue(b, "vigil_host_sockets_in_use", {{"protocol", "raw"}, {"ip_version", "4"}}),
            2);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_orphan_sockets"), 3);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_time_wait_sockets"), 70);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_allocated_sockets"), 60);
  EXPECT_EQ(FindValue(b, "vigil_host_socket_memory_bytes", {{"protocol", "tcp"}}), 25 * 16384);
  EXPECT_EQ(FindValue(b, "vigil_host_socket_memory_bytes", {{"protocol", "udp"}}), 2 * 16384);
  EXPECT_EQ(FindValue(b, "vigil_host_ip_reassembly_queues", {{"ip_version", "4"}}), 4);
  EXPECT_EQ(FindValue(b, "vigil_host_ip_reassembly_memory_bytes", {{"ip_version", "4"}}), 8192);
  EXPECT_EQ(FindValue(b, "vigil_host_ip_reassembly_memory_bytes", {{"ip_version", "6"}}), 1024);
  EXPECT_EQ(CountSamples(b, "vigil_host_sockets_in_use"), 8u);  // MPTCP is not listed.
}

TEST(ProcSockstatCollectorTest, NoSockstat6MeansNoIpv6Series) {
  ScratchTree tree;
  tree.Write("proc/net/sockstat", "sockets: used 3\nTCP: inuse 1 orphan 0 tw 0 alloc 1 mem 1\n");
  ProcSockstatCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_FALSE(FindValue(r.batch, "vigil_host_sockets_in_use", {{"ip_version", "6"}}));
}

TEST(ProcSockstatCollectorTest, BadValueIsDataLoss) {
  MetricBatch batch;
  MetricWriter writer(&batch);

  EXPECT_EQ(ProcSockstatCollector::Parse("TCP: inuse x\n", 4096, writer).code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ProcSockstatCollector::Parse("TCP: inuse\n", 4096, writer).code(),
            StatusCode::kDataLoss);
}

TEST(ProcSockstatCollectorTest, MissingFileIsAbsent) {
  ScratchTree tree;
  ProcSockstatCollector collector(tree.paths());

  EXPECT_TRUE(IsAbsent(CollectOnce(collector).status));
}

}  // namespace
}  // namespace vigil
