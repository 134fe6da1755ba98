// SPDX-License-Identifier: Apache-2.0
// Reads the CUDA probes' BPF maps into plain vectors (one pass per map, capped), and deletes a
// process's entries once it has exited and its summary is frozen. No interpretation here: the
// aggregator turns the contents into ProcessSummary values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "snoop/cuda_probes.h"

namespace vigil::snoop {

struct ProbeMapFds {
  int launches = -1;
  int syncs = -1;
  int sync_stacks = -1;
  int outstanding = -1;
  int memory = -1;
  int copies = -1;
  int func_names = -1;
  int stacks = -1;
  int counters = -1;
  int inflights = -1;
  int thread_devices = -1;
  int ctx_devices = -1;
};

struct MapContents {
  std::vector<std::pair<launch_key, uint64_t>> launches;
  std::vector<std::pair<sync_key, sync_stats>> syncs;
  std::vector<std::pair<sync_stack_key, count_ns>> sync_stacks;
  std::vector<std::pair<alloc_key, alloc_info>> outstanding;
  std::vector<std::pair<mem_key, mem_stats>> memory;
  std::vector<std::pair<copy_key, copy_stats>> copies;
};

// Every map's entries; at most `max_entries` per map (the maps are bounded anyway).
MapContents ReadMaps(const ProbeMapFds& fds, size_t max_entries = 1 << 20);

// One counter (vs_counter index) summed over CPUs.
uint64_t ReadCounter(int counters_fd, uint32_t index);

// One Python frame as the probes captured it (see py_frame).
struct CapturedPythonFrame {
  uint64_t code = 0;
  uint64_t position = 0;
  bool entry = false;  // The first frame of its eval-loop call.
};

struct StackRecord {
  std::vector<uint64_t> ips;                // Innermost first, zeros dropped.
  std::vector<CapturedPythonFrame> python;  // Innermost first; empty outside CPython.
  bool python_truncated = false;            // Outer Python frames were not recorded.
};

// The user stack `stack_id`; no ips when unknown.
StackRecord ReadStack(int stacks_fd, int64_t stack_id);

// The name cuModuleGetFunction / cuLibraryGetKernel gave `handle` in `pid`.
std::optional<std::string> ReadFuncName(int func_names_fd, uint32_t pid, uint64_t handle);

// Deletes every entry of `pid` from the per-process maps.
void DeletePid(const ProbeMapFds& fds, uint32_t pid);

}  // namespace vigil::snoop
