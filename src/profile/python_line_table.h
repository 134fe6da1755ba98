// SPDX-License-Identifier: Apache-2.0
// The line a CPython 3.11+ code object is at, from its location table (co_linetable, the
// format of Objects/locations.md: one entry per run of code units, a 4-bit code and a length,
// line deltas as (s)varints of 6-bit chunks). Stateless; bad tables give the last line known.
#pragma once

#include <string_view>

namespace vigil {

// The line of code unit `index` (a 2-byte unit of co_code), starting from `first_line`
// (co_firstlineno). -1 when the entry says "no location".
int PythonLineOfCodeUnit(std::string_view linetable, int first_line, int index);

}  // namespace vigil
