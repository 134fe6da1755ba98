// SPDX-License-Identifier: Apache-2.0
// Where CPython keeps what a stack reader needs, per interpreter version (x86-64 builds): the
// runtime's interpreter list and GIL, each thread state's frame pointer, the frame and code
// object fields, and the string and bytes object layouts. Offsets are offsetof() of the
// version's own headers (Include/internal with Py_BUILD_CORE), one row per minor version.
// Versions without a row are reported as unsupported rather than guessed. Immutable.
#pragma once

#include <cstdint>
#include <optional>

namespace vigil {

struct PythonOffsets {
  int major = 3;
  int minor = 0;
  // _PyRuntimeState
  uint64_t runtime_interpreters_head = 0;
  uint64_t runtime_gil_last_holder = 0;  // ceval.gil.last_holder (a PyThreadState*).
  uint64_t runtime_gil_locked = 0;       // ceval.gil.locked (an int).
  // PyInterpreterState
  uint64_t interp_next = 0;
  uint64_t interp_threads_head = 0;
  // PyThreadState
  uint64_t tstate_next = 0;
  uint64_t tstate_cframe = 0;  // _PyCFrame* (3.11, 3.12).
  uint64_t tstate_native_thread_id = 0;
  // _PyCFrame
  uint64_t cframe_current_frame = 0;
  // _PyInterpreterFrame
  uint64_t frame_code = 0;
  uint64_t frame_previous = 0;
  uint64_t frame_prev_instr = 0;
  uint64_t frame_is_entry = 0;
  uint64_t frame_owner = 0;
  // PyCodeObject
  uint64_t code_filename = 0;
  uint64_t code_name = 0;
  uint64_t code_qualname = 0;
  uint64_t code_firstlineno = 0;
  uint64_t code_linetable = 0;
  uint64_t code_code_adaptive = 0;  // First code unit (instructions live in the code object).
  // PyBytesObject / PyUnicodeObject
  uint64_t bytes_size = 0;
  uint64_t bytes_data = 0;
  uint64_t unicode_length = 0;
  uint64_t unicode_state = 0;
  uint64_t unicode_ascii_data = 0;    // sizeof(PyASCIIObject): compact ASCII data.
  uint64_t unicode_compact_data = 0;  // sizeof(PyCompactUnicodeObject): other compact data.
};

// The offsets for CPython major.minor, std::nullopt when there is no row.
std::optional<PythonOffsets> PythonOffsetsFor(int major, int minor);

}  // namespace vigil
