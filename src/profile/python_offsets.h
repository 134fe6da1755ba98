// SPDX-License-Identifier: Apache-2.0
// Where CPython keeps what a stack reader needs, per interpreter version (x86-64 builds): the
// runtime's interpreter list and GIL, each thread state's frame pointer, the frame and code
// object fields, and the string and bytes object layouts. 3.9 to 3.12 come from a table
// (offsetof() in each version's own headers, Include/internal with Py_BUILD_CORE); 3.13 and
// later carry _Py_DebugOffsets at the start of _PyRuntime, which ParseDebugOffsets reads.
// Versions with neither are reported as unsupported rather than guessed. Immutable.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "base/status.h"

namespace vigil {

// Where the GIL lives: in the runtime (3.11), behind a pointer in each interpreter (3.12), or
// embedded in each interpreter (3.13).
enum class GilAt { kRuntime, kInterpreterPointer, kInterpreter };

// How the frames of one eval-loop call are delimited: an is_entry flag on the first (3.11), or
// a shim frame owned by the C stack just below it (3.12+).
enum class EntryMark { kIsEntryFlag, kShimFrame };

// Where a thread's frames hang: _PyInterpreterFrame chains (3.11+), or PyFrameObject chains
// from PyThreadState.frame (3.9, 3.10), one frame per eval-loop call.
enum class FrameModel { kInterpreterFrame, kFrameObject };

// The code object's line table: PEP 626 locations (3.11+), 3.10's co_linetable, co_lnotab.
enum class LineTableFormat { kLocations, kLineTable310, kLnotab };

struct PythonOffsets {
  int major = 3;
  int minor = 0;
  // _PyRuntimeState
  uint64_t runtime_interpreters_head = 0;
  // The GIL: `gil_locked` (an int) and `gil_last_holder` (a PyThreadState*) are relative to the
  // runtime, the struct `gil_pointer` in the interpreter points to, or the interpreter.
  GilAt gil_at = GilAt::kRuntime;
  uint64_t gil_pointer = 0;
  uint64_t gil_locked = 0;
  uint64_t gil_last_holder = 0;
  // PyInterpreterState
  uint64_t interp_next = 0;
  uint64_t interp_threads_head = 0;
  // PyThreadState
  uint64_t tstate_next = 0;
  uint64_t tstate_cframe = 0;            // _PyCFrame* (3.11, 3.12); 0 when absent.
  uint64_t tstate_current_frame = 0;     // _PyInterpreterFrame* (3.13+, no cframe).
  uint64_t tstate_native_thread_id = 0;  // 0 before 3.11: see tstate_thread_id.
  uint64_t tstate_thread_id = 0;         // pthread_t (the thread's struct pthread address).
  uint64_t tstate_frame = 0;             // PyFrameObject* (kFrameObject).
  FrameModel frame_model = FrameModel::kInterpreterFrame;
  uint64_t frame_lasti = 0;          // int f_lasti (kFrameObject).
  bool lasti_in_code_units = false;  // 3.10: f_lasti counts 2-byte units; 3.9: bytes.
  LineTableFormat line_table = LineTableFormat::kLocations;
  // _PyCFrame
  uint64_t cframe_current_frame = 0;
  // _PyInterpreterFrame
  uint64_t frame_code = 0;
  uint64_t frame_previous = 0;
  uint64_t frame_prev_instr = 0;
  uint64_t frame_is_entry = 0;  // kIsEntryFlag only.
  uint64_t frame_owner = 0;
  EntryMark entry_mark = EntryMark::kIsEntryFlag;
  // PyCodeObject
  uint64_t code_filename = 0;
  uint64_t code_name = 0;
  uint64_t code_qualname = 0;
  uint64_t code_firstlineno = 0;
  uint64_t code_linetable = 0;      // co_linetable, or co_lnotab (3.9).
  uint64_t code_code_adaptive = 0;  // First code unit (instructions live in the code object).
  // PyBytesObject / PyUnicodeObject
  uint64_t bytes_size = 0;
  uint64_t bytes_data = 0;
  uint64_t unicode_length = 0;
  uint64_t unicode_state = 0;
  uint64_t unicode_ascii_data = 0;    // sizeof(PyASCIIObject): compact ASCII data.
  uint64_t unicode_compact_data = 0;  // sizeof(PyCompactUnicodeObject): other compact data.
};

// The offsets for CPython major.minor from the table, std::nullopt when there is no row.
std::optional<PythonOffsets> PythonOffsetsFor(int major, int minor);

// The bytes of _Py_DebugOffsets to read from the start of _PyRuntime (3.13's layout).
inline constexpr size_t kPyDebugOffsetsSize = 584;
// Parses _Py_DebugOffsets (cookie "xdebugpy", 3.13.x layout; free-threaded builds refused).
// InvalidArgument for a missing cookie, Unimplemented for another layout version.
StatusOr<PythonOffsets> ParseDebugOffsets(std::span<const uint8_t> bytes);

}  // namespace vigil
