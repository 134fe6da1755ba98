// SPDX-License-Identifier: Apache-2.0
// A process's memory map (/proc/PID/maps) and the way to open the files it maps. Paths in maps
// are paths in the process's own mount namespace; opening them through /proc/PID/root finds the
// same file for a process in a container, which is why every reader of a mapped file goes
// through MappedFilePath rather than the bare path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace vigil {

struct Mapping {
  uint64_t start = 0;        // First address of the mapping.
  uint64_t end = 0;          // One past the last address.
  uint64_t file_offset = 0;  // Offset in the file of `start`.
  bool readable = false;
  bool writable = false;
  bool executable = false;
  uint64_t inode = 0;  // 0 for anonymous mappings.
  std::string device;  // "fd:01" as maps prints it.
  std::string path;    // As the process sees it; "" for anonymous, "[stack]", "[vdso]", ...

  bool IsFile() const { return inode != 0 && !path.empty() && path.front() == '/'; }
  bool Contains(uint64_t address) const { return address >= start && address < end; }
  // The file offset that `address` (inside this mapping) corresponds to.
  uint64_t FileOffsetOf(uint64_t address) const { return address - start + file_offset; }
};

// Parses maps text. Lines that do not parse are skipped (the kernel's format is stable; a
// malformed line means a truncated read, and the rest is still usable).
std::vector<Mapping> ParseProcMaps(std::string_view text);

// Reads <proc_root>/<pid>/maps.
StatusOr<std::vector<Mapping>> ReadProcMaps(int pid, std::string_view proc_root = "/proc");

// "<proc_root>/<pid>/root<path>": the file `path` as the process `pid` sees it.
std::string MappedFilePath(int pid, std::string_view path, std::string_view proc_root = "/proc");

// The mapping that holds `address`, if any (maps are sorted by start).
const Mapping* FindMapping(const std::vector<Mapping>& maps, uint64_t address);

// The first file mapping whose basename starts with `prefix` ("libcudart.so", "libcuda.so.1").
std::optional<Mapping> FindMappedLibrary(const std::vector<Mapping>& maps, std::string_view prefix);

// The process's executable as it sees it (readlink of /proc/PID/exe), "" if unreadable.
std::string ExecutablePath(int pid, std::string_view proc_root = "/proc");

}  // namespace vigil
