// SPDX-License-Identifier: Apache-2.0
// A snoop session: the eBPF uprobes on the CUDA runtime, the driver and PyTorch's caching
// allocator in a set of processes, aggregated in BPF maps and read out as a SessionSummary.
// What `vigil snoop` and the bpf_cuda collector drive. Uprobes are attached once per library
// file (not per process) and filtered in BPF by a map of traced pids, so a process that maps
// an already-probed file is traced as soon as its pid is added, and a command started through
// SpawnStopped is traced from its first call. Not thread-safe: one thread owns a session.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "snoop/raw_event.h"
#include "snoop/snoop_summary.h"

namespace vigil::snoop {

struct SnoopOptions {
  std::vector<int> pids;  // Traced from Start; more with AddPid.
  // Attach to every process that maps libcudart/libcuda (or has a static cudart) as it
  // appears: /proc is scanned on Poll, at most every `scan_interval`; a process calling into a
  // file already probed is added on the next Poll after its first call.
  bool follow_new_processes = false;
  std::chrono::milliseconds scan_interval{500};
  bool raw_events = false;            // Stream every call through the ring buffer (TakeRawEvents).
  size_t max_raw_events = 1'000'000;  // Cap on events held between TakeRawEvents calls.
  double leak_age_seconds = 30;  // Allocations older than this and not freed are leak candidates.
  // Calls per second over all traced processes above which BPF records 1 in N calls
  // (SessionSummary::sampled). 0: never sample.
  uint64_t event_budget_per_second = 200'000;
  size_t max_stacks_per_process = 20;  // Leak groups and sync stacks kept per process.
  std::string proc_root = "/proc";
  // One multi-uprobe link per library file where the kernel has them (fast to detach); false
  // forces a perf-event link per probe, as on kernels before 6.6.
  bool multi_uprobe_links = true;
  // In CPython processes (3.9 to 3.13), stacks carry the calling thread's Python frames, read
  // by the probes at the call and merged where the eval loop runs them.
  bool python_frames = true;
};

// What a traced process had probes attached for (ProcessSummary::libraries says the same).
struct AttachedLibrary {
  std::string path;  // As the process sees it; the executable for a static cudart.
  std::string kind;  // "cudart", "cuda", "c10_cuda", "cudart_static".
  int probes = 0;    // Uprobes + uretprobes attached on this file (0 if already attached).
};

// OK as root or with CAP_BPF and CAP_PERFMON effective; otherwise PermissionDenied with one
// line saying what is needed.
Status CheckSnoopPrivileges();

class SnoopSession {
 public:
  // Loads the BPF programs and attaches to options.pids. PermissionDenied without the
  // privileges above; NotFound when a pid does not exist; FailedPrecondition when a given pid
  // maps no CUDA library (and has no static cudart).
  static StatusOr<std::unique_ptr<SnoopSession>> Start(const SnoopOptions& options);
  ~SnoopSession();  // Detaches every probe and closes every BPF object.
  SnoopSession(const SnoopSession&) = delete;
  SnoopSession& operator=(const SnoopSession&) = delete;

  // Starts tracing `pid`: attaches to the CUDA libraries it maps (files already probed are
  // shared) and adds it to the pid filter. AlreadyExists if traced; FailedPrecondition if it
  // maps no CUDA library yet (a process that dlopens later is picked up by Poll's rescans).
  Status AddPid(int pid);

  // Forks `argv` (PATH searched; a #! script runs its interpreter) held before exec. Release
  // lets it exec; the session stops it at its entry point (after the loader mapped its
  // libraries), attaches, and resumes it, so calls from main on are traced. The child is the
  // caller's child: reap it with waitpid. Libraries it dlopens later are attached by Poll's
  // rescans of traced processes' maps (calls before the rescan are missed).
  StatusOr<int> SpawnStopped(const std::vector<std::string>& argv);
  Status Release(int pid, std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // Drains the ring buffer (raw events), notices exited processes (their summary is kept,
  // `exited` set), rescans maps and /proc as configured, and adjusts sampling to the event
  // budget. Waits up to `timeout` for ring-buffer data; returns early when there is some.
  Status Poll(std::chrono::milliseconds timeout);

  // Current aggregates of every process traced in this session (exited ones included).
  // Cheap: reads the BPF maps once; stacks and kernel names are symbolised once and cached.
  SessionSummary Snapshot();

  // Raw events since the last call (empty unless options.raw_events), oldest first.
  std::vector<RawEvent> TakeRawEvents();

  std::vector<int> TracedPids() const;  // Live traced processes.
  std::vector<AttachedLibrary> LibrariesOf(int pid) const;
  int probes_attached() const;  // Uprobes and uretprobes attached now (all files).

 private:
  struct Impl;
  explicit SnoopSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigil::snoop
