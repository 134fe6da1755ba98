// SPDX-License-Identifier: Apache-2.0
// Turns raw samples into profile stacks: kernel and user addresses through the Symbolizer
// (kallsyms for the kernel; for callers, return address minus one, so a call that ends a
// function is not credited to the next one), the user stack unwound with DWARF CFI where the
// sampler copied it and an unwinder is given, Python frames merged in where the target is
// CPython, and the process name as the root. Owns the per-process state (Python attachments,
// names); borrows the symboliser. One per sampling run; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "profile/perf_sampler.h"
#include "profile/profile.h"
#include "profile/python_frames.h"
#include "profile/symbolizer.h"

namespace vigil {

class DwarfUnwinder;

struct StackBuilderOptions {
  bool python = true;        // Read Python frames of CPython targets.
  bool process_root = true;  // The process name as the root frame.
  std::string proc_root = "/proc";
};

struct StackBuilderStats {
  uint64_t python_samples = 0;  // Samples with Python frames merged.
  uint64_t gil_samples = 0;     // ... whose thread held the GIL.
  uint64_t python_read_errors = 0;
  uint64_t dwarf_unwound = 0;  // Samples whose user stack came from DWARF unwinding.
};

class StackBuilder {
 public:
  // `unwinder` may be null: user stacks then come from frame pointers only.
  StackBuilder(StackBuilderOptions options, Symbolizer* symbolizer, DwarfUnwinder* unwinder);
  ~StackBuilder();

  // Loads what the first sample of `pid` would (names, Python attachment, symbols, unwind
  // state), so that sampling does not start with a long stall. Optional.
  void Prepare(int pid);
  // Adds one sample to `profile`.
  void Add(const RawSample& sample, Profile* profile);
  // The frames of one sample, leaf first (what Add interns).
  std::vector<ProfileFrame> Frames(const RawSample& sample);
  const StackBuilderStats& stats() const { return stats_; }

 private:
  struct ProcessInfo {
    std::string name;
    std::unique_ptr<PythonProcess> python;  // Null when not CPython.
  };
  ProcessInfo& InfoOf(int pid);

  StackBuilderOptions options_;
  Symbolizer* const symbolizer_;
  DwarfUnwinder* const unwinder_;
  std::map<int, ProcessInfo> processes_;
  std::vector<uint64_t> user_ips_;
  StackBuilderStats stats_;
};

}  // namespace vigil
