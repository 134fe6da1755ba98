// SPDX-License-Identifier: Apache-2.0
// vigild's system-call allow-list (libseccomp), installed on every thread once the daemon has
// started and its first collection pass has loaded the GPU backend (NVML and DCGM are vendor code
// loaded with dlopen). Nothing that vigild does after start needs exec, fork, ptrace, mount,
// set*id, capset, module loading, namespaces or keyrings, so a bug in a parser or a vendor library
// cannot use them.
//
// A call outside the list is not answered with EPERM: code that meets an unexpected error
// degrades silently (a spool falls back to memory, a collector goes absent, a library retries),
// while vigild's spool and sinks are built to lose nothing across a kill. So the call traps:
// a SIGSYS handler writes one line naming the call to stderr and the process dies with SIGSYS
// (systemd restarts it; --seccomp=false runs without the filter while the list is fixed).
// The one exception is clone3, answered ENOSYS so that glibc falls back to clone, whose flags a
// filter can check (threads only). Sanitizer builds add what their runtimes need (LeakSanitizer
// stops threads with ptrace; reports start a symbolizer). Install from one thread; thread-safe.
#pragma once

#include <span>

#include "base/status.h"

namespace vigil::daemon {

// Installs the filter on all threads (SECCOMP_FILTER_FLAG_TSYNC) and the SIGSYS handler.
// `allow_bpf` adds bpf and pidfd_open, for a collector that keeps attaching eBPF probes
// after start (bpf_cuda follows new processes); it is only set when such a collector is on.
// Internal when the kernel or libseccomp refuses it (the caller stops: --seccomp=false).
Status InstallSeccompFilter(bool allow_bpf = false);

// The system calls allowed without conditions (names as libseccomp spells them); socket, clone,
// prctl and tgkill are allowed only with the arguments vigild uses.
std::span<const char* const> SeccompAllowList();

}  // namespace vigil::daemon
