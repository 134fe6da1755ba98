// SPDX-License-Identifier: Apache-2.0
// Where on a function its uprobe goes. The kernel emulates a probed push, nop or branch, but
// any other first instruction is copied out of line and single-stepped: a second trap per
// call. On a test VM a single-stepped probe cost about 5 us a call against 1 us for an
// emulated push. CET builds (-fcf-protection, the default of several distributions' compilers)
// start every function with endbr64, which is single-stepped, and usually go on with a push.
// The probe then goes on that push: the process still runs endbr64 itself, and at the push the
// arguments, the stack pointer and the return address a uretprobe replaces are as at entry.
// Past any other instruction the probe would be single-stepped anyway, and the spot after
// endbr64 can be a branch target (a loop at the top of the function), so it stays on entry.
#pragma once

#include <cstdint>
#include <string>

namespace vigil::snoop {

// The file offset to probe for a function whose first instruction is at `function_offset` in
// the file open as `fd`: past a leading endbr64 followed by a push, else the function's own. A file
// that cannot be read there gets the function's offset (attaching then reports the problem).
uint64_t ProbeSiteOffset(int fd, uint64_t function_offset);

}  // namespace vigil::snoop
