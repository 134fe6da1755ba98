// SPDX-License-Identifier: Apache-2.0
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "trace/model/index_column.h"
#include "trace/model/memory_table.h"
#include "trace/model/near_column.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {
namespace {

TEST(IdColumnTest, GivesBackEveryIdExactly) {
  // Runs of nearby ids, missing ids (-1), blocks that start with missing ids, jumps far away,
  // negative ids and the extremes.
  std::vector<int64_t> ids;
  std::mt19937_64 rng(3);
  int64_t next = 1000;
  for (int i = 0; i < 5000; ++i) {
    switch (rng() % 8) {
      case 0:
        ids.push_back(-1);
        break;
      case 1:
        ids.push_back(static_cast<int64_t>(rng() % 4000000000000ULL));
        break;
      default:
        ids.push_back(next += static_cast<int64_t>(rng() % 3));
    }
  }
  for (int i = 0; i < 300; ++i) ids.push_back(-1);  // a whole block without ids
  ids.insert(ids.end(), {-7, std::numeric_limits<int64_t>::min(),
                         std::numeric_limits<int64_t>::max(), -32768, -32767, 0});
  IdColumn c;
  for (int64_t v : ids) c.push_back(v);
  ASSERT_EQ(c.size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) ASSERT_EQ(c[i], ids[i]) << i;
  EXPECT_EQ(std::vector<int64_t>(c.begin(), c.end()), ids);
  EXPECT_LT(c.wide_rows(), ids.size() / 4);  // only the far jumps
}

TEST(IndexColumnTest, FromValuesKeepsRowsWithoutAValue) {
  const std::vector<uint32_t> values = {kNoIndex, 5, kNoIndex, 2, 9, kNoIndex};
  IndexColumn c = IndexColumn::FromValues(values);
  ASSERT_EQ(c.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(c[i], values[i]);
  EXPECT_EQ(c.indexed_rows(), 3u);
}

TEST(MemoryTableTest, RowsReadBackAsTheyWereWritten) {
  std::vector<MemoryEvent> events;
  int64_t allocated = 0;
  for (int i = 0; i < 1000; ++i) {
    const int64_t bytes = i % 3 == 0 ? -(int64_t{1} << 33) : int64_t{512} << (i % 24);
    allocated += bytes;
    events.push_back({1669783687464300000LL + i * 1000, bytes, allocated,
                      i % 100 == 0 ? -1 : int64_t{12782141440}, i % 4 == 0 ? -1 : i % 3, i % 2});
  }
  MemoryTable t;
  for (const MemoryEvent& m : events) t.push_back(m);
  ASSERT_EQ(t.size(), events.size());
  size_t i = 0;
  for (const MemoryEvent& m : t) {
    const MemoryEvent& want = events[i++];
    ASSERT_EQ(m.ts, want.ts);
    ASSERT_EQ(m.bytes, want.bytes);
    ASSERT_EQ(m.total_allocated, want.total_allocated);
    ASSERT_EQ(m.total_reserved, want.total_reserved);
    ASSERT_EQ(m.device_id, want.device_id);
    ASSERT_EQ(m.device_type, want.device_type);
    ASSERT_EQ(t.ts(i - 1), want.ts);
  }
}

}  // namespace
}  // namespace vigil::trace
