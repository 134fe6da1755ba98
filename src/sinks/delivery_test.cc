// SPDX-License-Identifier: Apache-2.0
#include "sinks/delivery.h"

#include <stdlib.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/time_util.h"
#include "base/wait_for.h"

namespace vigil {
namespace {

// A receiver that is down until told otherwise and records what it accepted, in order.
struct Receiver {
  bool up = false;
  int attempts = 0;
  std::vector<std::string> accepted;
  SendFunction Function() {
    return [this](std::string_view body) -> SendResult {
      ++attempts;
      if (!up) return {SendOutcome::kRetry, 0, "connection refused"};
      accepted.emplace_back(body);
      return {SendOutcome::kAccepted, 200, ""};
    };
  }
};

DeliveryOptions Options(const std::string& dir) {
  return {.name = "test",
          .buffer = {.dir = dir, .max_bytes = 1 << 20},
          .backoff = {.initial_ns = 1'000'000, .max_ns = 4'000'000, .jitter = 0}};
}

// Pumps until nothing is buffered (or 10 s pass), waiting for each retry as the worker would.
void Drain(Delivery* d) {
  WaitFor([&] { return d->Pump(false) == 0; }, 10, std::chrono::milliseconds(1));
}

class DeliveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/vigil-delivery-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    root_ = templ;
  }
  void TearDown() override {
    if (mounted_) umount2(root_.c_str(), MNT_DETACH);
    std::filesystem::remove_all(root_);
  }
  // A file system of `bytes` at root_ (tmpfs; root only), so the disk really fills up.
  bool MountSmallDisk(size_t bytes) {
    const std::string opts = "size=" + std::to_string(bytes) + ",mode=0700";
    mounted_ = mount("tmpfs", root_.c_str(), "tmpfs", 0, opts.c_str()) == 0;
    return mounted_;
  }
  std::string root_;
  bool mounted_ = false;
};

TEST_F(DeliveryTest, OutageIsBufferedAndReplayedInOrderWithExactAccounting) {
  Receiver r;
  Delivery d(Options(root_ + "/buf"), r.Function());
  for (uint32_t i = 1; i <= 20; ++i) d.Offer(i, "payload-" + std::to_string(i));
  EXPECT_TRUE(d.failing());
  EXPECT_EQ(d.stats().buffered_payloads, 20u);
  // The outage lasts many backoff steps: the delay is capped, so it never grows past max_ns.
  for (int i = 0; i < 50; ++i) d.Pump(false);
  r.up = true;
  Drain(&d);
  ASSERT_EQ(r.accepted.size(), 20u);
  for (size_t i = 0; i < r.accepted.size(); ++i) {
    EXPECT_EQ(r.accepted[i], "payload-" + std::to_string(i + 1));  // Once each, in order.
  }
  const DeliveryStats s = d.stats();
  EXPECT_EQ(s.sent_payloads, 20u);
  EXPECT_EQ(s.sent_samples, 210u);  // 1 + 2 + ... + 20.
  EXPECT_EQ(s.buffer_dropped.batches, 0u);
  EXPECT_FALSE(s.failing);
  EXPECT_TRUE(s.degraded.empty());
}

TEST_F(DeliveryTest, UnwritableStateDirKeepsPayloadsInMemoryAndSaysSo) {
  // A regular file where the buffer's parent directory should be: mkdir fails, even for root.
  ASSERT_TRUE(WriteFileAtomic(root_ + "/state", "not a directory").ok());
  Receiver r;
  Delivery d(Options(root_ + "/state/buf"), r.Function());
  d.Offer(3, "abc");
  d.Offer(4, "defg");
  DeliveryStats s = d.stats();
  EXPECT_NE(s.degraded.find("buffer directory unusable"), std::string::npos) << s.degraded;
  EXPECT_EQ(s.at_risk_bytes, s.buffered_bytes);
  EXPECT_GT(s.at_risk_bytes, 0u);
  r.up = true;
  Drain(&d);
  EXPECT_EQ(r.accepted, (std::vector<std::string>{"abc", "defg"}));
  EXPECT_EQ(d.stats().sent_samples, 7u);
  EXPECT_EQ(d.stats().at_risk_bytes, 0u);
}

TEST_F(DeliveryTest, FullDiskHoldsPayloadsInMemoryInOrderAndLosesNone) {
  const std::string dir = root_ + "/buf";
  const bool real_disk = MountSmallDisk(64 << 10);
  Receiver r;
  Delivery d(Options(dir), r.Function());
  const std::string body(8 << 10, 'x');
  uint32_t offered = 0;
  auto offer = [&] {
    d.Offer(1, body);
    ++offered;
  };
  if (real_disk) {
    // Fill the 64 KiB file system until a payload no longer fits.
    while (offered < 64 && d.stats().at_risk_bytes == 0) offer();
  } else {
    // No mount(2) here: the buffer directory turns into a file, so every write fails.
    offer();
    std::filesystem::remove_all(dir);
    ASSERT_TRUE(WriteFileAtomic(dir, "").ok());
  }
  for (int i = 0; i < 5; ++i) offer();
  DeliveryStats s = d.stats();
  EXPECT_NE(s.degraded.find("buffer writes failing"), std::string::npos) << s.degraded;
  EXPECT_GE(s.at_risk_bytes, 5 * (body.size() + 4));
  EXPECT_EQ(s.buffered_payloads, offered);
  r.up = true;
  Drain(&d);
  EXPECT_EQ(r.accepted.size(), offered);  // Disk entries and memory entries, none lost.
  EXPECT_EQ(d.stats().sent_samples, offered);
  EXPECT_EQ(d.stats().at_risk_bytes, 0u);
}

TEST_F(DeliveryTest, BufferFirstWritesBeforeSendingAndSurvivesARestart) {
  DeliveryOptions o = Options(root_ + "/buf");
  o.buffer_first = true;
  Receiver down;
  {
    Delivery d(o, down.Function());
    d.Offer(5, "one");
    d.Offer(6, "two");
    d.Pump(false);
    EXPECT_EQ(d.stats().buffered_payloads, 2u);
  }  // The daemon dies with the receiver down.
  Receiver up;
  up.up = true;
  Delivery d(o, up.Function());
  Drain(&d);
  EXPECT_EQ(up.accepted, (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(d.stats().sent_samples, 11u);  // Counts survive in the buffer's entries.
}

TEST_F(DeliveryTest, OverflowingTheBoundCountsDroppedPayloadsAndSamples) {
  DeliveryOptions o = Options(root_ + "/buf");
  o.buffer.max_bytes = 2 * (4 + 10);  // Two payloads of 10 bytes.
  Receiver r;
  Delivery d(o, r.Function());
  for (uint32_t i = 0; i < 5; ++i) d.Offer(7, std::string(10, static_cast<char>('a' + i)));
  EXPECT_EQ(d.stats().buffer_dropped.batches, 3u);
  EXPECT_EQ(d.stats().buffer_dropped.samples, 21u);
  r.up = true;
  Drain(&d);
  EXPECT_EQ(r.accepted, (std::vector<std::string>{std::string(10, 'd'), std::string(10, 'e')}));
}

}  // namespace
}  // namespace vigil
