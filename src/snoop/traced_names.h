// SPDX-License-Identifier: Apache-2.0
// Names for what the probes record in traced processes: kernels (a host stub symbolised, or a
// CUfunction named by cuModuleGetFunction / cuLibraryGetKernel) and user stacks. Live
// processes go through the Symbolizer (files through /proc/PID/root); once a process has
// exited, its saved maps and the mapped files opened by their own paths (same inode) still
// name addresses. Python frames captured with a stack are named through PythonStacks and
// merged where the eval loop runs them. Names are cached; a miss is retried every 2 s, not on
// every snapshot.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "profile/elf_image.h"
#include "profile/proc_maps.h"
#include "profile/symbolizer.h"
#include "snoop/aggregator.h"
#include "snoop/python_stacks.h"

namespace vigil::snoop {

class TracedNames : public NameResolver {
 public:
  // `func_names_fd`, `stacks_fd`: the probes' maps of kernel names and of stacks; `python`
  // (borrowed, may be null) names their Python frames.
  TracedNames(std::string proc_root, int func_names_fd, int stacks_fd,
              PythonStacks* python = nullptr);

  // The process's maps as just read (kept for naming after it exits).
  void SetMaps(int pid, std::vector<Mapping> maps);
  // Reads its maps into the symboliser while the process is there.
  void Prime(int pid);
  // The process is gone: misses are retried now, and then for good; the symboliser forgets it.
  void MarkExited(int pid);

  std::string KernelName(uint32_t pid, uint32_t api, uint64_t func) override;
  CallStack Stack(uint32_t pid, int64_t stack_id) override;

 private:
  Frame FallbackFrame(uint32_t pid, uint64_t address);

  Symbolizer symbolizer_;
  int func_names_fd_;
  int stacks_fd_;
  PythonStacks* python_;
  std::map<int, std::vector<Mapping>> maps_;
  std::set<int> exited_;
  std::map<std::tuple<uint32_t, bool, uint64_t>, std::string> kernel_names_;
  std::map<std::tuple<uint32_t, bool, uint64_t>, std::chrono::steady_clock::time_point> retry_;
  std::map<std::pair<uint32_t, int64_t>, CallStack> stacks_;
  std::map<std::pair<std::string, uint64_t>, std::unique_ptr<ElfImage>> images_;
};

}  // namespace vigil::snoop
