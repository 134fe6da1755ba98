// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_arp_collector.h"

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
    "IP address       HW type     Flags       HW address            Mask     Device\n";

TEST(ProcArpCollectorTest, ReadsCapturedKernel618) {
  ProcArpCollector collector(FixturePaths("debian12_k618_vm"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, "vigil_host_arp_entries", {{"interface", "eth0"}}), 1);
  EXPECT_EQ(CountSamples(r.batch, "vigil_host_arp_entries"), 1u);
}

TEST(ProcArpCollectorTest, CountsPerInterface) {
  ScratchTree tree;
  tree.Write("proc/net/arp", std::string(kHeader) +
                                 "10.0.0.1         0x1         0x2         aa:bb:cc:00:00:01     *"
                                 "        eth0\n"
                                 "10.0.0.2         0x1         0x0         00:00:00:00:00:00     *"
                                 "        eth0\n"
                                 "10.1.0.1         0x20        0x2         80:00:02:08:fe:80     *"
                                 "        ib0\n"
                                 "10.0.0.3         0x1         0x2         aa:bb:cc:00:00:03     *"
                                 "        eth0\n");
  ProcArpCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, "vigil_host_arp_entries", {{"interface", "eth0"}}), 3);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_arp_entries", {{"interface", "ib0"}}), 1);
}

TEST(ProcArpCollectorTest, EmptyTableHasNoSamplesAndTruncatedLineIsDataLoss) {
  ScratchTree tree;
  tree.Write("proc/net/arp", kHeader);
  ProcArpCollector empty(tree.paths());
  auto r = CollectOnce(empty);
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.batch.samples.size(), 0u);

  std::vector<std::pair<std::string_view, uint64_t>> counts;
  EXPECT_EQ(ProcArpCollector::Parse(std::string(kHeader) + "10.0.0.1 0x1 0x2\n", &counts).code(),
            StatusCode::kDataLoss);
}

TEST(ProcArpCollectorTest, MissingFileIsAbsent) {
  ScratchTree tree;
  ProcArpCollector collector(tree.paths());

  EXPECT_TRUE(IsAbsent(CollectOnce(collector).status));
}

}  // namespace
}  // namespace vigil
