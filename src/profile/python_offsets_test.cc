// SPDX-License-Identifier: Apache-2.0
#include "profile/python_offsets.h"

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace vigil {
namespace {

// A 3.13-layout _Py_DebugOffsets: the cookie, then uint64_t words in declaration order.
std::vector<uint8_t> DebugOffsets(uint64_t version, uint64_t free_threaded) {
  std::vector<uint8_t> bytes(kPyDebugOffsetsSize);
  std::memcpy(bytes.data(), "xdebugpy", 8);
  auto set = [&](size_t index, uint64_t value) {
    std::memcpy(bytes.data() + 8 + index * 8, &value, 8);
  };
  for (size_t i = 2; i < (kPyDebugOffsetsSize - 8) / 8; ++i) {
    set(i, 1000 + i);  // Distinct values to see which word lands where.
  }
  set(0, version);
  set(1, free_threaded);
  set(28, 8);   // frame previous
  set(29, 0);   // frame executable
  set(30, 56);  // frame instr_ptr
  set(32, 74);  // frame owner
  return bytes;
}

TEST(PythonOffsetsTest, DebugOffsetsOf313MapToTheReaderFields) {
  StatusOr<PythonOffsets> o = ParseDebugOffsets(DebugOffsets(0x030D00F0, 0));

  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->minor, 13);
  EXPECT_EQ(o->runtime_interpreters_head, 1004u);
  EXPECT_EQ(o->interp_threads_head, 1008u);
  EXPECT_EQ(o->gil_at, GilAt::kInterpreter);
  EXPECT_EQ(o->gil_locked, 1016u);
  EXPECT_EQ(o->gil_last_holder, 1017u);
  EXPECT_EQ(o->tstate_cframe, 0u);
  EXPECT_EQ(o->tstate_current_frame, 1022u);
  EXPECT_EQ(o->tstate_native_thread_id, 1024u);
  EXPECT_EQ(o->frame_owner, 74u);
  EXPECT_EQ(o->entry_mark, EntryMark::kShimFrame);
  EXPECT_EQ(o->code_filename, 1034u);
  EXPECT_EQ(o->code_qualname, 1036u);
  EXPECT_EQ(o->code_code_adaptive, 1042u);
  EXPECT_EQ(o->bytes_data, 1065u);
  EXPECT_EQ(o->unicode_ascii_data, 1069u);
  EXPECT_EQ(o->unicode_compact_data, 1085u);
}

TEST(PythonOffsetsTest, DebugOffsetsRefusals) {
  std::vector<uint8_t> bad_cookie = DebugOffsets(0x030D00F0, 0);
  bad_cookie[0] = 'y';

  EXPECT_EQ(ParseDebugOffsets(bad_cookie).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseDebugOffsets(DebugOffsets(0x030E00F0, 0)).status().code(),
            StatusCode::kUnimplemented);
  EXPECT_EQ(ParseDebugOffsets(DebugOffsets(0x030D00F0, 1)).status().code(),
            StatusCode::kUnimplemented);
  EXPECT_FALSE(PythonOffsetsFor(3, 8).has_value());
  EXPECT_FALSE(PythonOffsetsFor(3, 13).has_value());  // Read from the runtime instead.
  EXPECT_TRUE(PythonOffsetsFor(3, 9).has_value());
  EXPECT_TRUE(PythonOffsetsFor(3, 12).has_value());
}

}  // namespace
}  // namespace vigil
