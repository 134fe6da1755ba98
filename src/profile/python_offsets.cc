// SPDX-License-Identifier: Apache-2.0
#include "profile/python_offsets.h"

#include <cstring>

#include <fmt/format.h>

namespace vigil {
namespace {

// CPython 3.11 (3.11.2, Debian 12; the structures are frozen within a minor version).
PythonOffsets Python311() {
  PythonOffsets o;
  o.major = 3;
  o.minor = 11;
  o.runtime_interpreters_head = 40;
  o.gil_at = GilAt::kRuntime;
  o.gil_last_holder = 368;  // ceval.gil.last_holder
  o.gil_locked = 376;       // ceval.gil.locked
  o.interp_next = 0;
  o.interp_threads_head = 16;
  o.tstate_next = 8;
  o.tstate_cframe = 56;
  o.tstate_native_thread_id = 160;
  o.cframe_current_frame = 8;
  o.frame_code = 32;
  o.frame_previous = 48;
  o.frame_prev_instr = 56;
  o.frame_is_entry = 68;
  o.frame_owner = 69;
  o.entry_mark = EntryMark::kIsEntryFlag;
  o.code_filename = 112;
  o.code_name = 120;
  o.code_qualname = 128;
  o.code_firstlineno = 72;
  o.code_linetable = 136;
  o.code_code_adaptive = 184;
  o.bytes_size = 16;
  o.bytes_data = 32;
  o.unicode_length = 16;
  o.unicode_state = 32;
  o.unicode_ascii_data = 48;
  o.unicode_compact_data = 72;
  return o;
}

// CPython 3.12 (3.12.1): per-interpreter GIL behind ceval.gil, no is_entry, no wstr.
PythonOffsets Python312() {
  PythonOffsets o;
  o.major = 3;
  o.minor = 12;
  o.runtime_interpreters_head = 40;
  o.gil_at = GilAt::kInterpreterPointer;
  o.gil_pointer = 384;    // PyInterpreterState.ceval.gil
  o.gil_last_holder = 8;  // struct _gil_runtime_state.last_holder
  o.gil_locked = 16;      // struct _gil_runtime_state.locked
  o.interp_next = 0;
  o.interp_threads_head = 72;
  o.tstate_next = 8;
  o.tstate_cframe = 56;
  o.tstate_native_thread_id = 144;
  o.cframe_current_frame = 0;
  o.frame_code = 0;
  o.frame_previous = 8;
  o.frame_prev_instr = 56;
  o.frame_owner = 70;
  o.entry_mark = EntryMark::kShimFrame;
  o.code_filename = 112;
  o.code_name = 120;
  o.code_qualname = 128;
  o.code_firstlineno = 68;
  o.code_linetable = 136;
  o.code_code_adaptive = 192;
  o.bytes_size = 16;
  o.bytes_data = 32;
  o.unicode_length = 16;
  o.unicode_state = 32;
  o.unicode_ascii_data = 40;
  o.unicode_compact_data = 56;
  return o;
}

// CPython 3.9 and 3.10 (3.9.18, 3.10.13): PyFrameObject chains, no native thread id.
PythonOffsets Python39Or310(int minor) {
  PythonOffsets o;
  o.major = 3;
  o.minor = minor;
  o.runtime_interpreters_head = 32;
  o.gil_at = GilAt::kRuntime;
  o.gil_last_holder = 360;
  o.gil_locked = 368;
  o.interp_next = 0;
  o.interp_threads_head = 8;  // tstate_head
  o.tstate_next = 8;
  o.tstate_thread_id = 176;
  o.tstate_frame = 24;
  o.frame_model = FrameModel::kFrameObject;
  o.frame_previous = 24;  // f_back
  o.frame_code = 32;
  o.frame_lasti = minor == 10 ? 96 : 104;
  o.lasti_in_code_units = minor == 10;
  o.line_table = minor == 10 ? LineTableFormat::kLineTable310 : LineTableFormat::kLnotab;
  o.code_filename = 104;
  o.code_name = 112;
  o.code_firstlineno = 40;
  o.code_linetable = 120;  // co_linetable (3.10), co_lnotab (3.9)
  o.bytes_size = 16;
  o.bytes_data = 32;
  o.unicode_length = 16;
  o.unicode_state = 32;
  o.unicode_ascii_data = 48;
  o.unicode_compact_data = 72;
  return o;
}

uint64_t Word(std::span<const uint8_t> bytes, size_t index) {
  uint64_t v = 0;
  std::memcpy(&v, bytes.data() + 8 + index * 8, sizeof(v));
  return v;
}

}  // namespace

std::optional<PythonOffsets> PythonOffsetsFor(int major, int minor) {
  if (major == 3 && (minor == 9 || minor == 10)) {
    return Python39Or310(minor);
  }
  if (major == 3 && minor == 11) {
    return Python311();
  }
  if (major == 3 && minor == 12) {
    return Python312();
  }
  return std::nullopt;
}

StatusOr<PythonOffsets> ParseDebugOffsets(std::span<const uint8_t> bytes) {
  if (bytes.size() < kPyDebugOffsetsSize || std::memcmp(bytes.data(), "xdebugpy", 8) != 0) {
    return InvalidArgumentError("_PyRuntime has no _Py_DebugOffsets cookie");
  }
  // Index i is the i-th uint64_t after the cookie, in 3.13's declaration order.
  const uint64_t version = Word(bytes, 0);
  PythonOffsets o;
  o.major = static_cast<int>((version >> 24) & 0xff);
  o.minor = static_cast<int>((version >> 16) & 0xff);
  if (o.major != 3 || o.minor != 13) {
    return UnimplementedError(
        fmt::format("_Py_DebugOffsets of CPython {}.{}: layout not known", o.major, o.minor));
  }
  if (Word(bytes, 1) != 0) {
    return UnimplementedError("free-threaded CPython builds are not supported");
  }
  o.runtime_interpreters_head = Word(bytes, 4);
  o.interp_next = Word(bytes, 7);
  o.interp_threads_head = Word(bytes, 8);
  o.gil_at = GilAt::kInterpreter;
  o.gil_locked = Word(bytes, 16);
  o.gil_last_holder = Word(bytes, 17);
  o.tstate_next = Word(bytes, 20);
  o.tstate_current_frame = Word(bytes, 22);
  o.tstate_native_thread_id = Word(bytes, 24);
  o.frame_previous = Word(bytes, 28);
  o.frame_code = Word(bytes, 29);        // f_executable
  o.frame_prev_instr = Word(bytes, 30);  // instr_ptr
  o.frame_owner = Word(bytes, 32);
  o.entry_mark = EntryMark::kShimFrame;
  o.code_filename = Word(bytes, 34);
  o.code_name = Word(bytes, 35);
  o.code_qualname = Word(bytes, 36);
  o.code_linetable = Word(bytes, 37);
  o.code_firstlineno = Word(bytes, 38);
  o.code_code_adaptive = Word(bytes, 42);
  o.bytes_size = Word(bytes, 64);
  o.bytes_data = Word(bytes, 65);
  o.unicode_state = Word(bytes, 67);
  o.unicode_length = Word(bytes, 68);
  o.unicode_ascii_data = Word(bytes, 69);
  o.unicode_compact_data = o.unicode_ascii_data + 16;  // + utf8_length, utf8.
  if (o.frame_owner >= 128 || o.frame_code >= 128 || o.frame_previous >= 128) {
    return DataLossError("_Py_DebugOffsets: frame offsets out of range");
  }
  return o;
}

}  // namespace vigil
