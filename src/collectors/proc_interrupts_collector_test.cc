// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_interrupts_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::ScratchTree;

constexpr char kFamily[] = "vigil_host_irq_interrupts_total";

TEST(ProcInterruptsCollectorTest, ReadsCapturedKernel618) {
  ProcInterruptsCollector collector(FixturePaths("debian12_k618_vm"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(
      FindValue(b, kFamily,
                {{"cpu", "1"}, {"irq", "26"}, {"info", "IO-APIC"}, {"devices", "4-edge ttyS0"}}),
      14);
  EXPECT_EQ(
      FindValue(b, kFamily, {{"cpu", "0"}, {"irq", "NMI"}, {"info", "Non-maskable interrupts"}}),
      0);
  EXPECT_EQ(CountSamples(b, kFamily) % 2, 0u);  // Two CPUs, every line counted for both.
  EXPECT_FALSE(FindValue(b, kFamily, {{"irq", "ERR"}}));
}

TEST(ProcInterruptsCollectorTest, OfflineCpuColumnsKeepTheirNumbers) {
  ScratchTree tree;
  tree.Write("proc/interrupts",
             "           CPU0       CPU2\n"
             "  0:         44          0   IO-APIC   2-edge      timer\n"
             "120:        100        250   PCI-MSI 524288-edge      nvme0q0\n"
             "LOC:    9000000    8000000   Local timer interrupts\n"
             "ERR:          3\n"
             "MIS:          0\n");
  ProcInterruptsCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(CountSamples(b, kFamily), 6u);
  EXPECT_EQ(FindValue(b, kFamily, {{"cpu", "2"}, {"irq", "120"}}), 250);
  EXPECT_EQ(FindValue(b, kFamily, {{"cpu", "0"}, {"irq", "120"}, {"info", "PCI-MSI"}}), 100);
  EXPECT_EQ(FindValue(b, kFamily, {{"cpu", "2"}, {"irq", "LOC"}}), 8000000);
  EXPECT_FALSE(FindValue(b, kFamily, {{"cpu", "1"}, {"irq", "LOC"}}));
}

TEST(ProcInterruptsCollectorTest, BadHeaderIsDataLoss) {
  MetricBatch batch;
  MetricWriter writer(&batch);

  EXPECT_EQ(ProcInterruptsCollector::Parse("  0: 1 2\n", writer).code(), StatusCode::kDataLoss);
  EXPECT_EQ(ProcInterruptsCollector::Parse("\n", writer).code(), StatusCode::kDataLoss);
}

TEST(ProcInterruptsCollectorTest, IsOffByDefault) {
  EXPECT_FALSE(ProcInterruptsCollector::kInfo.enabled_by_default);
}

TEST(ProcInterruptsCollectorTest, MissingFileIsAbsent) {
  ScratchTree tree;
  ProcInterruptsCollector collector(tree.paths());

  EXPECT_TRUE(IsAbsent(CollectOnce(collector).status));
}

}  // namespace
}  // namespace vigil
