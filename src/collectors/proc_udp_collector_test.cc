// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_udp_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::ScratchTree;

constexpr char kFamily[] = "vigil_host_udp_queued_bytes";
constexpr char kHeader[] =
    "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
    "inode ref pointer drops\n";

TEST(ProcUdpCollectorTest, ReadsCapturedKernel618WithoutSockets) {
  ProcUdpCollector collector(FixturePaths("debian12_k618_vm"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(CountSamples(r.batch, kFamily), 4u);
  EXPECT_EQ(FindValue(r.batch, kFamily, {{"ip_version", "4"}, {"queue", "receive"}}), 0);
}

TEST(ProcUdpCollectorTest, SumsHexQueuesOverSockets) {
  ScratchTree tree;
  tree.Write("proc/net/udp",
             std::string(kHeader) +
                 "  123: 00000000:0044 00000000:0000 07 00000000:00000a00 00:00000000 00000000"
                 "     0        0 17040 2 0000000000000000 0\n"
                 "  456: 0100007F:0035 00000000:0000 07 00000100:00000001 00:00000000 00000000"
                 "   101        0 17041 2 0000000000000000 0\n");
  ProcUdpCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, kFamily, {{"ip_version", "4"}, {"queue", "receive"}}), 0xa01);
  EXPECT_EQ(FindValue(r.batch, kFamily, {{"ip_version", "4"}, {"queue", "transmit"}}), 0x100);
  EXPECT_FALSE(FindValue(r.batch, kFamily, {{"ip_version", "6"}, {"queue", "receive"}}));
}

TEST(ProcUdpCollectorTest, BadQueueColumnIsDataLoss) {
  EXPECT_EQ(ProcUdpCollector::Parse(std::string(kHeader) +
                                    "  1: 00000000:0044 00000000:0000 07 0000zz00:00000000\n")
                .status()
                .code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ProcUdpCollector::Parse(std::string(kHeader) + "  1: 00000000:0044\n").status().code(),
            StatusCode::kDataLoss);
}

TEST(ProcUdpCollectorTest, MissingFileIsAbsent) {
  ScratchTree tree;
  ProcUdpCollector collector(tree.paths());

  EXPECT_TRUE(IsAbsent(CollectOnce(collector).status));
}

}  // namespace
}  // namespace vigil
