// SPDX-License-Identifier: Apache-2.0
#include "profile/perf_sampler.h"

#include <linux/perf_event.h>

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace vigil {
namespace {

// Builds a PERF_RECORD_SAMPLE the way the kernel lays it out for our sample_type.
class RecordBuilder {
 public:
  RecordBuilder() { bytes_.resize(sizeof(perf_event_header)); }
  template <typename T>
  RecordBuilder& Put(T value) {
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &value, sizeof(T));
    return *this;
  }
  std::vector<uint8_t> Done() {
    perf_event_header header{};
    header.type = PERF_RECORD_SAMPLE;
    header.size = static_cast<uint16_t>(bytes_.size());
    std::memcpy(bytes_.data(), &header, sizeof(header));
    return bytes_;
  }

 private:
  std::vector<uint8_t> bytes_;
};

TEST(PerfSamplerTest, ParsesCallchainContextsIntoKernelAndUserFrames) {
  std::vector<uint8_t> record = RecordBuilder()
                                    .Put<uint32_t>(42)  // pid
                                    .Put<uint32_t>(43)  // tid
                                    .Put<uint64_t>(1000)
                                    .Put<uint64_t>(6)  // nr
                                    .Put<uint64_t>(PERF_CONTEXT_KERNEL)
                                    .Put<uint64_t>(0xffffffff81000010)
                                    .Put<uint64_t>(0xffffffff81000020)
                                    .Put<uint64_t>(PERF_CONTEXT_USER)
                                    .Put<uint64_t>(0x401000)
                                    .Put<uint64_t>(0x401100)
                                    .Done();
  RawSample sample;

  ASSERT_TRUE(ParsePerfSample(record, /*with_stack=*/false, &sample));

  EXPECT_EQ(sample.pid, 42);
  EXPECT_EQ(sample.tid, 43);
  EXPECT_EQ(sample.time_ns, 1000u);
  EXPECT_EQ(sample.kernel_ips, (std::vector<uint64_t>{0xffffffff81000010, 0xffffffff81000020}));
  EXPECT_EQ(sample.user_ips, (std::vector<uint64_t>{0x401000, 0x401100}));
  EXPECT_TRUE(sample.user_stack.empty());
}

TEST(PerfSamplerTest, ParsesRegistersAndTheDynamicPartOfTheStackCopy) {
  RecordBuilder b;
  b.Put<uint32_t>(7).Put<uint32_t>(7).Put<uint64_t>(5).Put<uint64_t>(1);
  b.Put<uint64_t>(PERF_CONTEXT_USER);
  b.Put<uint64_t>(PERF_SAMPLE_REGS_ABI_64);
  for (int i = 0; i < kUserRegCount; ++i) {
    b.Put<uint64_t>(100 + static_cast<uint64_t>(i));
  }
  b.Put<uint64_t>(16);  // Stack size requested...
  for (int i = 0; i < 16; ++i) {
    b.Put<uint8_t>(static_cast<uint8_t>(i));
  }
  b.Put<uint64_t>(8);  // ...of which 8 bytes were valid.
  std::vector<uint8_t> record = b.Done();
  RawSample sample;

  ASSERT_TRUE(ParsePerfSample(record, /*with_stack=*/true, &sample));

  ASSERT_EQ(sample.user_regs.size(), static_cast<size_t>(kUserRegCount));
  EXPECT_EQ(sample.user_regs[kRegSp], 100u + kRegSp);
  EXPECT_EQ(sample.user_regs[kRegIp], 100u + kRegIp);
  EXPECT_EQ(sample.user_stack, (std::vector<uint8_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(sample.user_ips.empty());
}

TEST(PerfSamplerTest, TruncatedRecordsAreRefused) {
  std::vector<uint8_t> record = RecordBuilder()
                                    .Put<uint32_t>(1)
                                    .Put<uint32_t>(1)
                                    .Put<uint64_t>(1)
                                    .Put<uint64_t>(1000)  // nr far beyond the record
                                    .Put<uint64_t>(0x401000)
                                    .Done();
  RawSample sample;

  EXPECT_FALSE(ParsePerfSample(record, false, &sample));
  EXPECT_FALSE(ParsePerfSample(std::span<const uint8_t>(record.data(), 12), false, &sample));
}

}  // namespace
}  // namespace vigil
