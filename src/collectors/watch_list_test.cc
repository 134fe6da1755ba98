// SPDX-License-Identifier: Apache-2.0
#include "collectors/watch_list.h"

#include <thread>

#include <gtest/gtest.h>

namespace vigil {
namespace {

constexpr int64_t kSecond = 1000000000;

TEST(WatchListTest, SnapshotListsWatchedPidsInOrder) {
  WatchList list;
  list.Watch(42, "gpu", 10 * kSecond);
  list.Watch(7, "ipc", 10 * kSecond);

  std::vector<WatchList::Entry> entries = list.Snapshot(11 * kSecond, 60 * kSecond);

  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].pid, 7);
  EXPECT_EQ(entries[0].reason, "ipc");
  EXPECT_EQ(entries[1].pid, 42);
  EXPECT_EQ(entries[1].reason, "gpu");
}

TEST(WatchListTest, RefreshUpdatesReasonAndTime) {
  WatchList list;
  list.Watch(42, "gpu", 10 * kSecond);
  list.Watch(42, "ipc", 70 * kSecond);

  std::vector<WatchList::Entry> entries = list.Snapshot(100 * kSecond, 60 * kSecond);

  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].reason, "ipc");
  EXPECT_EQ(entries[0].last_seen_ns, 70 * kSecond);
}

TEST(WatchListTest, EntriesOlderThanTtlExpireForGood) {
  WatchList list;
  list.Watch(1, "gpu", 0);
  list.Watch(2, "gpu", 50 * kSecond);

  std::vector<WatchList::Entry> entries = list.Snapshot(61 * kSecond, 60 * kSecond);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].pid, 2);
  // Dropped, not hidden: a later snapshot with a longer ttl does not bring it back.
  EXPECT_EQ(list.Snapshot(61 * kSecond, 1000 * kSecond).size(), 1u);
}

TEST(WatchListTest, UnwatchRemoves) {
  WatchList list;
  list.Watch(1, "gpu", 0);
  list.Unwatch(1);
  list.Unwatch(99);  // Unknown pids are fine.

  EXPECT_TRUE(list.Snapshot(0, kSecond).empty());
}

TEST(WatchListTest, ConcurrentWritersAndReadersAreSafe) {
  WatchList list;
  std::vector<std::jthread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&list, t] {
      for (int i = 0; i < 300; ++i) {
        list.Watch(t * 1000 + i, "gpu", i);
        if (i % 3 == 0) {
          list.Unwatch(t * 1000 + i);
        }
        (void)list.Snapshot(i, 1000000);
      }
    });
  }
  threads.clear();  // Joins.

  EXPECT_EQ(list.Snapshot(1000, 1000000).size(), 4u * 200u);
}

}  // namespace
}  // namespace vigil
