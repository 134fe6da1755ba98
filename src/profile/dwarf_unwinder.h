// SPDX-License-Identifier: Apache-2.0
// Unwinds a sampled user stack with DWARF call frame information, for code built without frame
// pointers (Debian builds most of its libraries and CPython that way). The sampler copies the
// user registers and the top of the stack (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
// this walks that copy with elfutils' libdw, as perf's unwind-libdw.c does: a Dwfl per process
// with every executable mapping reported (opened through /proc/PID/root), state attached with
// custom callbacks whose memory reader serves the copied stack (and the live process's memory
// through process_vm_readv for anything else, e.g. a frame's saved data outside the copy).
//
// Why libdw rather than libunwind: libdw is already a dependency (libdw-dev, for symbolisation
// and snoop), it reads .eh_frame and .debug_frame (also from separate debug files found by
// build id), and its Dwfl_Thread_Callbacks take a memory reader and initial registers
// directly, which is exactly the "unwind a copied stack" case; libunwind's remote mode needs
// a full unw_accessors_t shim plus its own ELF and debug-file lookup, and Debian's libunwind8
// does not find separate debug info by build id. One per sampling run; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "profile/perf_sampler.h"

namespace vigil {

class DwarfUnwinder {
 public:
  explicit DwarfUnwinder(std::string proc_root = "/proc",
                         std::string debug_root = "/usr/lib/debug");
  ~DwarfUnwinder();
  DwarfUnwinder(const DwarfUnwinder&) = delete;
  DwarfUnwinder& operator=(const DwarfUnwinder&) = delete;

  // The user callchain of `sample`, leaf first, into `*ips` (at most `max_frames`). Needs
  // user_regs and user_stack; FailedPrecondition without them, the libdw error otherwise (a
  // partial chain is still returned in *ips).
  Status Unwind(const RawSample& sample, std::vector<uint64_t>* ips, size_t max_frames = 127);
  // Builds the process's Dwfl now (modules reported, state attached) instead of at its first
  // sample.
  void Prepare(int pid) { ProcessFor(pid); }
  // Drops the process's Dwfl (it exited, or mapped new code).
  void Forget(int pid);

  struct Process;

 private:
  Process* ProcessFor(int pid);
  std::string proc_root_;
  std::string debug_root_;
  std::map<int, std::unique_ptr<Process>> processes_;
};

}  // namespace vigil
