// SPDX-License-Identifier: Apache-2.0
// `vigil analyze --cpu-profile FILE`: a CPU profile of the same processes over the same window
// (`vigil profile --json`, or what `vigil trace --with-cpu-profile` writes beside the trace),
// summarised next to the idle-time breakdown: when the GPU waits on the host, the hottest host
// functions say where the host was. The profile's window is compared with the trace's (both on
// Unix time: the Kineto trace's clock is Unix time minus baseTimeNanoseconds), so a profile of
// another moment is flagged rather than read as this one's.
// Owner: trace. Loading reads one file; the summary is a pure function.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

// The profile as `vigil profile --json` writes it (the fields this analysis reads).
struct CpuProfileInput {
  std::string path;
  std::string event;  // "cpu-clock", "cycles"
  int frequency_hz = 0;
  int64_t start_unix_ns = 0;
  int64_t duration_ns = 0;
  uint64_t total_samples = 0;
  uint64_t python_samples = 0;
  uint64_t gil_samples = 0;
  std::vector<int64_t> pids;
  std::vector<std::string> labels;  // per frame: "f", "f (file.py:42)", "f_[k]"
  std::vector<bool> is_process;     // per frame: the process-name root, not a function
  struct Stack {
    std::vector<uint32_t> frames;  // root first
    uint64_t count = 0;
  };
  std::vector<Stack> stacks;
};

// Reads and checks a profile JSON file (at most 1 GiB). InvalidArgument names what is wrong.
StatusOr<std::shared_ptr<const CpuProfileInput>> LoadCpuProfile(const std::string& path);

struct CpuFunction {
  std::string label;
  uint64_t self = 0;   // samples with this function as the leaf
  uint64_t total = 0;  // samples with it anywhere on the stack (counted once per stack)
};

struct CpuProfileSummary {
  bool computed = false;
  std::string path;
  std::string event;
  int frequency_hz = 0;
  uint64_t samples = 0;
  uint64_t python_samples = 0;
  uint64_t gil_samples = 0;
  double profile_seconds = 0;
  // Seconds of the profile's window inside the trace's; -1 when the trace has no Unix clock.
  double overlap_seconds = -1;
  double trace_seconds = 0;
  std::vector<CpuFunction> top_self;   // the hottest functions by self samples, at most 10
  std::vector<CpuFunction> top_total;  // by total samples, process roots left out, at most 10
};

CpuProfileSummary SummarizeCpuProfile(const CpuProfileInput& profile, const RankTrace& trace);

}  // namespace vigil::trace
