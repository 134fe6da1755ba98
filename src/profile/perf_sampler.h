// SPDX-License-Identifier: Apache-2.0
// On-CPU stack sampling with perf_event_open: one sampling event per thread of the target
// processes (their /proc/PID/task is re-read while sampling, so threads started later are
// sampled too; `inherit` cannot be combined with a per-thread mmap ring), or one per CPU for the
// whole host. The event is the hardware cycles counter where a PMU exists and the software
// cpu-clock otherwise (VMs), at a frequency (default 99 Hz, off the beat of 100 Hz timers).
// Each sample carries the thread, a timestamp and the kernel's callchain (user frames from frame
// pointers; kernel frames when perf_event_paranoid or root allows, retried without them
// otherwise). With `copy_user_stack`, each sample also carries the user registers and a copy of
// the top of the user stack, which DwarfUnwinder walks for code built without frame pointers.
// Not thread-safe: one thread calls Run. A target that exits is dropped, not an error.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace vigil {

class PerfRing;

struct SamplerOptions {
  std::vector<int> pids;             // Processes to sample (every thread of each).
  bool all = false;                  // Every process of the host (one event per CPU); pids ignored.
  int frequency_hz = 99;             // Samples per second per thread (per CPU with `all`).
  bool kernel_stacks = true;         // Ask for kernel frames; silently dropped when not allowed.
  bool try_hardware = true;          // cycles when the host has a PMU, else cpu-clock.
  bool copy_user_stack = false;      // PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER.
  uint32_t user_stack_bytes = 8192;  // Bytes of stack copied per sample (multiple of 8).
  int ring_pages = 0;  // Data pages per ring (power of 2); 0 picks by mode and thread count.
  std::chrono::milliseconds rescan_interval{200};  // How often /proc/PID/task is re-read.
  std::string proc_root = "/proc";
};

struct RawSample {
  int pid = 0;
  int tid = 0;
  uint64_t time_ns = 0;              // CLOCK_MONOTONIC (perf's default clock).
  std::vector<uint64_t> kernel_ips;  // Leaf first.
  std::vector<uint64_t> user_ips;    // Leaf first; from frame pointers.
  std::vector<uint64_t> user_regs;   // x86-64, in kUserRegs order; empty without a copy.
  std::vector<uint8_t> user_stack;   // Copied from the user stack pointer upwards.
};

// Order of RawSample::user_regs (PERF_REG_X86_* bits requested, in bit order).
enum UserReg : int {
  kRegAx,
  kRegBx,
  kRegCx,
  kRegDx,
  kRegSi,
  kRegDi,
  kRegBp,
  kRegSp,
  kRegIp,
  kRegR8,
  kRegR9,
  kRegR10,
  kRegR11,
  kRegR12,
  kRegR13,
  kRegR14,
  kRegR15,
  kUserRegCount
};

struct SamplerStats {
  uint64_t samples = 0;
  uint64_t lost = 0;           // Samples the kernel dropped (ring full).
  uint64_t threads_seen = 0;   // Threads an event was opened on, over the run.
  uint64_t open_failures = 0;  // Threads that exited before their event opened, etc.
  uint64_t malformed = 0;      // Sample records that did not parse (dropped).
};

class PerfSampler {
 public:
  // Opens the events. PermissionDenied (with the perf_event_paranoid value in the message) when
  // the kernel refuses; NotFound when no target process exists.
  static StatusOr<std::unique_ptr<PerfSampler>> Start(const SamplerOptions& options);
  ~PerfSampler();
  PerfSampler(const PerfSampler&) = delete;
  PerfSampler& operator=(const PerfSampler&) = delete;

  // Delivers samples to `on_sample` until `deadline`, or until every target has exited (then
  // returns early, OK). Sampling is enabled on entry and disabled on return.
  Status Run(std::chrono::steady_clock::time_point deadline,
             const std::function<void(const RawSample&)>& on_sample);

  const std::string& event_name() const { return event_name_; }  // "cycles" or "cpu-clock".
  bool kernel_stacks() const { return kernel_stacks_; }
  const SamplerStats& stats() const { return stats_; }
  // How many sampled threads (or CPUs) have an open event now.
  size_t open_events() const { return rings_.size(); }

 private:
  explicit PerfSampler(SamplerOptions options);
  Status OpenFirst();
  Status OpenOn(int pid, int tid, int cpu);
  void Rescan();
  void Drain(PerfRing& ring, const std::function<void(const RawSample&)>& on_sample);

  SamplerOptions options_;
  std::string event_name_;
  uint32_t event_type_ = 0;
  uint64_t event_config_ = 0;
  bool kernel_stacks_ = true;
  bool running_ = false;
  std::map<int, std::unique_ptr<PerfRing>> rings_;  // tid (or cpu with `all`) -> ring.
  std::map<int, int> tid_pid_;
  SamplerStats stats_;
  RawSample scratch_;
};

// Parses one PERF_RECORD_SAMPLE (header included) with TID | TIME | CALLCHAIN, plus
// REGS_USER | STACK_USER when `with_stack`. Callchain context markers split kernel and user
// frames. False for a record shorter than its own counts say.
bool ParsePerfSample(std::span<const uint8_t> record, bool with_stack, RawSample* out);

// /proc/sys/kernel/perf_event_paranoid, or 2 (the kernel default) when unreadable.
int PerfEventParanoid(const std::string& proc_root = "/proc");

}  // namespace vigil
