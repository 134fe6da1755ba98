// SPDX-License-Identifier: Apache-2.0
// The frame layout handed to the probes, checked against the field offsets of CPython's own
// headers (Include/internal/pycore_frame.h, Include/cpython/pystate.h, Include/frameobject.h of
// each version), not against the table it is made from.
#include "snoop/python_stacks.h"

#include <gtest/gtest.h>

namespace vigil::snoop {
namespace {

TEST(PythonLayoutTest, Python311ReadsTheCFrameAndIsEntry) {
  StatusOr<py_layout> l = PythonLayout(*PythonOffsetsFor(3, 11));
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->model, uint32_t{VS_PY_INTERP_FRAME});
  EXPECT_EQ(l->entry_mark, uint32_t{VS_PY_ENTRY_FLAG});
  EXPECT_EQ(l->tstate_cframe, 56u);        // PyThreadState.cframe
  EXPECT_EQ(l->cframe_current_frame, 8u);  // _PyCFrame.current_frame (after use_tracing)
  EXPECT_EQ(l->frame_code, 32u);           // _PyInterpreterFrame.f_code
  EXPECT_EQ(l->frame_previous, 48u);       // .previous
  EXPECT_EQ(l->frame_position, 56u);       // .prev_instr
  EXPECT_EQ(l->frame_is_entry, 68u);       // .is_entry, after int stacktop
  EXPECT_EQ(l->frame_read_size, 69u);      // Up to and with is_entry.
  EXPECT_EQ(l->tstate_native_thread_id, 160u);
}

TEST(PythonLayoutTest, Python312MarksRunsWithShimFrames) {
  StatusOr<py_layout> l = PythonLayout(*PythonOffsetsFor(3, 12));
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->entry_mark, uint32_t{VS_PY_ENTRY_SHIM});
  EXPECT_EQ(l->frame_code, 0u);    // f_code first
  EXPECT_EQ(l->frame_owner, 70u);  // char owner, after stacktop and return_offset
  EXPECT_EQ(l->frame_read_size, 71u);
}

TEST(PythonLayoutTest, Python310WalksFrameObjects) {
  StatusOr<py_layout> l = PythonLayout(*PythonOffsetsFor(3, 10));
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->model, uint32_t{VS_PY_FRAME_OBJECT});
  EXPECT_EQ(l->tstate_frame, 24u);    // PyThreadState.frame
  EXPECT_EQ(l->frame_previous, 24u);  // PyFrameObject.f_back
  EXPECT_EQ(l->frame_code, 32u);      // .f_code
  EXPECT_EQ(l->frame_position, 96u);  // int f_lasti
  EXPECT_EQ(l->frame_read_size, 100u);
  EXPECT_EQ(l->tstate_native_thread_id, 0u);  // Not checked before 3.11.
}

TEST(PythonLayoutTest, RefusesFieldsBeyondTheWindow) {
  PythonOffsets o = *PythonOffsetsFor(3, 11);
  o.frame_is_entry = VS_PY_WINDOW;
  StatusOr<py_layout> l = PythonLayout(o);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace vigil::snoop
