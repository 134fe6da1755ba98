// SPDX-License-Identifier: Apache-2.0
#include "profile/python_offsets.h"

namespace vigil {
namespace {

// CPython 3.11 (3.11.2, Debian 12; the structures are frozen within a minor version).
PythonOffsets Python311() {
  PythonOffsets o;
  o.major = 3;
  o.minor = 11;
  o.runtime_interpreters_head = 40;
  o.runtime_gil_last_holder = 368;
  o.runtime_gil_locked = 376;
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

}  // namespace

std::optional<PythonOffsets> PythonOffsetsFor(int major, int minor) {
  if (major == 3 && minor == 11) {
    return Python311();
  }
  return std::nullopt;
}

}  // namespace vigil
