// SPDX-License-Identifier: Apache-2.0
#include "gpu/process_list.h"

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace vigil {
namespace {

// Writes entries the way a driver with `stride`-byte structs does (field by field).
std::vector<uint8_t> Buffer(size_t stride,
                            const std::vector<std::pair<uint32_t, uint64_t>>& procs) {
  std::vector<uint8_t> buf(64 * kMaxProcessInfoSize, kProcessBufferSentinel);
  for (size_t i = 0; i < procs.size(); ++i) {
    uint8_t* e = buf.data() + i * stride;
    std::memset(e, 0, stride);
    std::memcpy(e, &procs[i].first, 4);
    std::memcpy(e + 8, &procs[i].second, 8);
    if (stride >= 24) {
      const uint32_t none = 0xFFFFFFFF;
      std::memcpy(e + 16, &none, 4);
      std::memcpy(e + 20, &none, 4);
    }
  }
  return buf;
}

const std::vector<std::pair<uint32_t, uint64_t>> kProcs = {
    {4242, 6498025472ULL}, {4243, 1ULL << 32}, {77, 2097152ULL}};

class StrideTest : public ::testing::TestWithParam<size_t> {};

TEST_P(StrideTest, ProbeFindsTheStrideTheLibraryWrote) {
  const size_t stride = GetParam();
  const auto buf = Buffer(stride, kProcs);
  for (size_t expected : {size_t{16}, size_t{24}, size_t{32}}) {
    auto probed = ProbeProcessStride(buf, 3, expected);
    ASSERT_TRUE(probed.has_value()) << "expected " << expected;
    EXPECT_EQ(*probed, stride) << "expected " << expected;
  }
  auto procs = DecodeProcesses(buf, 3, stride);
  ASSERT_EQ(procs.size(), 3u);
  EXPECT_EQ(procs[0].pid, 4242);
  EXPECT_EQ(procs[0].used_memory_bytes, 6498025472ULL);
  EXPECT_EQ(procs[1].pid, 4243);
  EXPECT_EQ(procs[2].pid, 77);
  EXPECT_EQ(procs[2].used_memory_bytes, 2097152ULL);
  EXPECT_FALSE(procs[0].gpu_instance_id.has_value());
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, StrideTest, ::testing::Values(16, 24, 32));

TEST(ProcessListTest, EmptyListKeepsExpectedStride) {
  std::vector<uint8_t> buf(128, kProcessBufferSentinel);
  EXPECT_EQ(ProbeProcessStride(buf, 0, 24), 24u);
}

TEST(ProcessListTest, GarbageIsRejected) {
  std::vector<uint8_t> buf(256, 0);  // pid 0 everywhere.
  EXPECT_FALSE(ProbeProcessStride(buf, 2, 24).has_value());
}

TEST(ProcessListTest, MigInstanceIdsAreDecoded) {
  auto buf = Buffer(24, {{9, 100}});
  const uint32_t gi = 3, ci = 1;
  std::memcpy(buf.data() + 16, &gi, 4);
  std::memcpy(buf.data() + 20, &ci, 4);
  auto procs = DecodeProcesses(buf, 1, 24);
  EXPECT_EQ(procs[0].gpu_instance_id, 3u);
  EXPECT_EQ(procs[0].compute_instance_id, 1u);
}

}  // namespace
}  // namespace vigil
