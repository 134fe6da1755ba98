// SPDX-License-Identifier: Apache-2.0
// Starting a command held before exec, so it can be traced from its first call: the child
// blocks on a pipe until released, then execs; the session stops it at its executable's entry
// point (a uprobe at e_entry sends SIGSTOP, once the loader has mapped the libraries), attaches
// and resumes it. This file holds the process side: fork, release, and where the entry is.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace vigil::snoop {

struct HeldChild {
  int pid = -1;
  int release_fd = -1;     // Write end of the pipe the child waits on.
  std::string executable;  // The file the kernel will run (a #! script's interpreter).
};

// The executable `argv0` runs: searched in PATH when it has no '/', and for a "#!" script its
// interpreter (through /usr/bin/env's argument too). NotFound when there is none.
StatusOr<std::string> ResolveExecutable(const std::string& argv0);

// File offset of the ELF entry point (e_entry) of `path`.
StatusOr<uint64_t> EntryFileOffset(const std::string& path);

// Forks `argv` held before exec (the child is this process's child).
StatusOr<HeldChild> ForkHeld(const std::vector<std::string>& argv);

// Lets the child exec (closes release_fd).
Status ReleaseHeld(HeldChild& child);

// The state letter of /proc/PID/stat ('R', 'S', 'T' stopped, 'Z'), or 0 when gone.
char ProcessState(int pid, const std::string& proc_root = "/proc");

}  // namespace vigil::snoop
