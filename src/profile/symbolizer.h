// SPDX-License-Identifier: Apache-2.0
// Turns addresses in a running process into frames: module, function (demangled) and offset.
// Files are opened through /proc/PID/root (containers) and cached by device+inode so many
// processes mapping the same library load it once. A perf map (/tmp/perf-PID.map, written by
// JITs) names addresses in anonymous executable memory. Not thread-safe; one per sampler.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "profile/elf_image.h"
#include "profile/proc_maps.h"

namespace vigil {

struct Frame {
  std::string function;  // Demangled; "[unknown]" when no symbol covers the address.
  std::string module;    // Basename of the mapped file ("libcudart.so.12"), "[jit]", "[kernel]".
  uint64_t address = 0;  // As given (process address).
  uint64_t offset = 0;   // Address minus the symbol's start, 0 when unknown.
  bool known() const { return function != "[unknown]"; }
};

struct SymbolizerOptions {
  std::string proc_root = "/proc";
  std::string debug_root = "/usr/lib/debug";
  std::string perf_map_dir = "/tmp";  // perf-PID.map lives here (in the process's namespace).
};

class Symbolizer {
 public:
  explicit Symbolizer(SymbolizerOptions options = {});
  ~Symbolizer();

  // Symbolises one address of process `pid`. Reads the process's maps on first use and again
  // when an address falls outside every known mapping (a library loaded later).
  Frame Symbolize(int pid, uint64_t address);
  std::vector<Frame> SymbolizeStack(int pid, const std::vector<uint64_t>& addresses);
  // Drops what is cached for `pid` (it exited, or its maps changed).
  void Forget(int pid);

  // The image loaded for the file mapped at `mapping` in `pid` (cached), or nullptr.
  const ElfImage* ImageFor(int pid, const Mapping& mapping);
  // Maps of `pid` as last read (read now if never read).
  const std::vector<Mapping>& MapsOf(int pid);

 private:
  struct ProcessState;
  struct KernelSymbols;  // /proc/kallsyms, read on the first kernel address.
  ProcessState& StateOf(int pid, bool reread);
  SymbolizerOptions options_;
  std::map<int, std::unique_ptr<ProcessState>> processes_;
  std::map<std::pair<std::string, uint64_t>, std::unique_ptr<ElfImage>> images_;  // dev, inode
  std::map<std::pair<std::string, uint64_t>, bool> failed_images_;
  bool kallsyms_read_ = false;
  std::unique_ptr<KernelSymbols> kallsyms_;
};

}  // namespace vigil
