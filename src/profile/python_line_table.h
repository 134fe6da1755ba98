// SPDX-License-Identifier: Apache-2.0
// The line a CPython code object is at, from its line table: 3.11+'s location table
// (co_linetable, the format of Objects/locations.md: one entry per run of code units, a 4-bit
// code and a length, line deltas as (s)varints of 6-bit chunks), 3.10's co_linetable and
// 3.9's co_lnotab (Objects/lnotab_notes.txt of each). Stateless; bad tables give the last line
// known.
#pragma once

#include <string_view>

namespace vigil {

// The line of code unit `index` (a 2-byte unit of co_code), starting from `first_line`
// (co_firstlineno). -1 when the entry says "no location".
int PythonLineOfCodeUnit(std::string_view linetable, int first_line, int index);

// 3.10's co_linetable: (bytecode bytes delta, signed line delta; -128 = no line) pairs.
// `offset` is in bytes. -1 for "no line".
int PythonLineOf310Table(std::string_view linetable, int first_line, int offset);

// 3.9's co_lnotab: (bytecode bytes delta, signed line delta) pairs; `offset` in bytes.
int PythonLineOfLnotab(std::string_view lnotab, int first_line, int offset);

}  // namespace vigil
