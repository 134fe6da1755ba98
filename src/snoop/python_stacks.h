// SPDX-License-Identifier: Apache-2.0
// Python frames in snoop's stacks. A probe fires at the call, and by the time user space reads
// the maps the thread has moved on, so the BPF program walks the calling thread's frame chain
// itself. This gives it what it needs per CPython process: the frame layout (py_procs, from
// profile/python_offsets) and each thread's PyThreadState* by native thread id (py_threads,
// from a walk of the interpreter's thread list; re-walked when the program notes a thread it
// does not know, and periodically). It then turns the captured (code object, instruction)
// pairs into function, file and line through profile's PythonProcess. One per session; not
// thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "profile/python_frames.h"
#include "profile/python_offsets.h"
#include "snoop/cuda_probes.h"
#include "snoop/map_reader.h"

namespace vigil::snoop {

// The BPF program's view of `offsets`; InvalidArgument when one frame's fields span more than
// VS_PY_WINDOW bytes (the program reads a frame in one go).
StatusOr<py_layout> PythonLayout(const PythonOffsets& offsets);

struct PythonStacksFds {
  int procs = -1;        // py_procs: pid -> py_layout.
  int threads = -1;      // py_threads: (pid, tid) -> PyThreadState*.
  int new_threads = -1;  // py_new_threads: threads the program did not know.
};

class PythonStacks {
 public:
  PythonStacks(std::string proc_root, PythonStacksFds fds);
  ~PythonStacks();

  // Starts capturing `pid`'s Python frames when it runs CPython (OK and nothing done when it
  // does not); Unimplemented for a CPython version without offsets.
  Status Add(int pid);
  // Forgets `pid` (it exited) and clears its map entries.
  void Remove(int pid);
  // Re-walks the thread lists of processes where the program met an unknown thread or where
  // none is known yet, and every process's at most every `interval`.
  void Refresh(std::chrono::milliseconds interval);

  bool Has(int pid) const { return processes_.count(pid) != 0; }
  // The interpreter's module ("python3.11"), for merging; empty when not CPython.
  std::string Module(int pid) const;
  // "3.11" for a CPython process; empty otherwise.
  std::string Version(int pid) const;
  // Captured frames named, leaf first; an error when a code object cannot be read now.
  StatusOr<std::vector<PythonFrame>> Resolve(int pid,
                                             const std::vector<CapturedPythonFrame>& frames);

 private:
  struct Process {
    std::unique_ptr<PythonProcess> python;
    std::set<int> tids;  // Written to py_threads.
    std::chrono::steady_clock::time_point refreshed;
  };
  void WriteThreads(int pid, Process& process);
  std::set<int> TakeNewThreadPids();

  std::string proc_root_;
  PythonStacksFds fds_;
  std::map<int, Process> processes_;
};

}  // namespace vigil::snoop
