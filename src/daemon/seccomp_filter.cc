// SPDX-License-Identifier: Apache-2.0
#include "daemon/seccomp_filter.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

namespace vigil::daemon {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerBuild = true;
#else
constexpr bool kSanitizerBuild = false;
#endif

// Grouped by purpose, several to a line.
// clang-format off
constexpr const char* kAllowed[] = {
    // Files, directories and descriptors.
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2",
    "pwritev2", "open", "openat", "openat2", "close", "close_range", "stat", "fstat", "lstat",
    "newfstatat", "statx", "statfs", "fstatfs", "lseek", "access", "faccessat", "faccessat2",
    "readlink", "readlinkat", "getdents", "getdents64", "mkdir", "mkdirat", "rmdir", "unlink",
    "unlinkat", "rename", "renameat", "renameat2", "chmod", "fchmod", "fchmodat", "fchown",
    "fchownat", "ftruncate", "fallocate", "fsync", "fdatasync", "sync_file_range", "flock",
    "fcntl", "dup", "dup2", "dup3", "pipe", "pipe2", "ioctl", "fadvise64", "utimensat", "getcwd",
    "umask",
    // CPU performance counters (perf_pmu; a collector re-enabled by a reload opens them again).
    "perf_event_open",
    // Stack sampling (vigilProfile): Python frames and DWARF unwinding read the target's memory.
    "process_vm_readv",
    // Memory.
    "mmap", "munmap", "mprotect", "mremap", "madvise", "brk", "msync", "mincore", "get_mempolicy",
    // Threads, time, identity and capabilities (read only), signals to this process.
    "futex", "futex_waitv", "get_robust_list", "set_robust_list", "rseq", "set_tid_address",
    "exit", "exit_group", "restart_syscall", "nanosleep", "clock_nanosleep", "clock_gettime",
    "clock_getres", "gettimeofday", "time", "timer_create", "timer_settime", "timer_gettime",
    "timer_getoverrun", "timer_delete", "getitimer", "setitimer", "alarm", "getpid", "gettid",
    "getppid", "getuid", "geteuid", "getgid", "getegid", "getgroups", "getresuid", "getresgid",
    "getpgrp", "getpgid", "getsid", "capget", "getrusage", "getpriority", "sysinfo", "uname",
    "prlimit64", "getrlimit", "sched_getaffinity", "sched_getparam", "sched_getscheduler",
    "sched_yield", "getcpu", "getrandom", "membarrier", "rt_sigaction", "rt_sigprocmask",
    "rt_sigreturn", "rt_sigtimedwait", "rt_sigsuspend", "rt_sigpending", "sigaltstack", "pause",
    // The kernel's NTP state (clock_time calls adjtimex with modes 0; setting the clock needs
    // CAP_SYS_TIME, which vigild never keeps).
    "adjtimex", "clock_adjtime",
    // Event loops and sockets (socket() itself is limited to the families vigild uses).
    "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2",
    "eventfd", "eventfd2", "timerfd_create", "timerfd_settime", "timerfd_gettime", "signalfd",
    "signalfd4", "poll", "ppoll", "select", "pselect6", "socketpair", "bind", "listen", "accept",
    "accept4", "connect", "getsockname", "getpeername", "setsockopt", "getsockopt", "sendto",
    "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "shutdown",
};

// What sanitizer runtimes do at exit or on a report: LeakSanitizer's StopTheWorld clones a
// tracer that ptraces every thread; a report forks and execs llvm-symbolizer.
constexpr const char* kSanitizerExtras[] = {
    "ptrace", "wait4", "waitid", "fork", "vfork", "execve", "kill", "tkill", "prctl",
    "sched_setaffinity", "personality",
};
// eBPF collectors (bpf_cuda): map reads and program loads, pidfds of new processes (perf_event_open
// for their uprobes is on the list above).
constexpr const char* kBpfExtras[] = {"bpf", "pidfd_open"};
// clang-format on

// Filled before the filter is installed, read by the handler (which may not allocate).
constexpr int kMaxSyscall = 512;
const char* g_syscall_names[kMaxSyscall] = {};

void WriteAll(const char* text) {
  size_t left = strlen(text);
  while (left > 0) {
    const ssize_t n = write(STDERR_FILENO, text, left);
    if (n <= 0) {
      return;
    }
    text += n;
    left -= static_cast<size_t>(n);
  }
}

void OnSigsys(int, siginfo_t* info, void*) {
  const int nr = info->si_syscall;
  char number[16];
  int len = 0;
  for (unsigned v = static_cast<unsigned>(nr < 0 ? 0 : nr); len == 0 || v != 0; v /= 10) {
    number[len++] = static_cast<char>('0' + v % 10);
  }
  char digits[16];
  for (int i = 0; i < len; ++i) {
    digits[i] = number[len - 1 - i];
  }
  digits[len] = '\0';
  const char* name = nr >= 0 && nr < kMaxSyscall && g_syscall_names[nr] ? g_syscall_names[nr] : "?";
  WriteAll("vigild: seccomp: system call ");
  WriteAll(name);
  WriteAll(" (");
  WriteAll(digits);
  WriteAll(") is not on the allow-list; stopping (--seccomp=false runs without the filter)\n");
  signal(SIGSYS, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGSYS);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(SIGSYS);
  _exit(128 + SIGSYS);
}

Status Rule(scmp_filter_ctx ctx, uint32_t action, const char* name, unsigned count = 0,
            const scmp_arg_cmp* args = nullptr) {
  const int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) {
    return OkStatus();  // Not a system call on this architecture (e.g. open on arm64).
  }
  const int rc = count == 0 ? seccomp_rule_add(ctx, action, nr, 0)
                            : seccomp_rule_add_array(ctx, action, nr, count, args);
  if (rc != 0) {
    return ErrnoStatus(-rc, fmt::format("seccomp rule for {}", name));
  }
  return OkStatus();
}

Status AddRules(scmp_filter_ctx ctx, bool allow_bpf) {
  for (const char* name : kAllowed) {
    VIGIL_RETURN_IF_ERROR(Rule(ctx, SCMP_ACT_ALLOW, name));
  }
  if (allow_bpf) {
    for (const char* name : kBpfExtras) {
      VIGIL_RETURN_IF_ERROR(Rule(ctx, SCMP_ACT_ALLOW, name));
    }
  }
  for (int family : {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK}) {
    const scmp_arg_cmp arg = SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(family));
    VIGIL_RETURN_IF_ERROR(Rule(ctx, SCMP_ACT_ALLOW, "socket", 1, &arg));
  }
  // Signals only to this process (raise, and the handler above).
  const scmp_arg_cmp own = SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(getpid()));
  VIGIL_RETURN_IF_ERROR(Rule(ctx, SCMP_ACT_ALLOW, "tgkill", 1, &own));
  // Thread names only.
  for (int option : {PR_SET_NAME, PR_GET_NAME, PR_CAPBSET_READ, PR_GET_DUMPABLE}) {
    const scmp_arg_cmp arg = SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(option));
    VIGIL_RETURN_IF_ERROR(Rule(ctx, SCMP_ACT_ALLOW, "prctl", 1, &arg));
  }
  VIGIL_RETURN_IF_ERROR(Rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3"));
  if (kSanitizerBuild) {
    VIGIL_RETURN_IF_ERROR(Rule(ctx, SCMP_ACT_ALLOW, "clone"));
    for (const char* name : kSanitizerExtras) {
      VIGIL_RETURN_IF_ERROR(Rule(ctx, SCMP_ACT_ALLOW, name));
    }
  } else {
    // New threads only: a process or a namespace cannot be made.
    const scmp_arg_cmp thread = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD);
    VIGIL_RETURN_IF_ERROR(Rule(ctx, SCMP_ACT_ALLOW, "clone", 1, &thread));
  }
  return OkStatus();
}

}  // namespace

std::span<const char* const> SeccompAllowList() { return kAllowed; }

Status InstallSeccompFilter(bool allow_bpf) {
  for (int nr = 0; nr < kMaxSyscall; ++nr) {
    if (g_syscall_names[nr] == nullptr) {
      g_syscall_names[nr] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
    }
  }
  struct sigaction action {};
  action.sa_sigaction = OnSigsys;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGSYS, &action, nullptr) != 0) {
    return ErrnoStatus(errno, "sigaction(SIGSYS)");
  }
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
  if (ctx == nullptr) {
    return InternalError("seccomp_init failed");
  }
  Status s = AddRules(ctx, allow_bpf);
  if (s.ok()) {
    if (int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1); rc != 0) {
      s = ErrnoStatus(-rc, "seccomp: synchronise threads");
    }
  }
  if (s.ok()) {
    if (int rc = seccomp_load(ctx); rc != 0) {
      s = ErrnoStatus(-rc, "seccomp_load");
    }
  }
  seccomp_release(ctx);
  return s.WithContext("seccomp filter (--seccomp=false turns it off)");
}

}  // namespace vigil::daemon
