// SPDX-License-Identifier: Apache-2.0
// Which CUDA libraries a process really maps, found from /proc/PID/maps: libcudart.so.*,
// libcuda.so.*, libc10_cuda.so, and a cudart linked statically into the executable (its
// symbols in the executable's own ELF tables). Paths are returned both as the process sees
// them and as this process can open them (through /proc/PID/root, so containers work).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "profile/proc_maps.h"
#include "snoop/cuda_api_table.h"

namespace vigil::snoop {

struct CudaLibraryFile {
  CudaLibrary provider = CudaLibrary::kRuntime;
  bool static_in_executable = false;  // cudart's symbols are in the executable itself.
  std::string path;                   // As the process sees it.
  std::string open_path;              // <proc_root>/PID/root<path>.
  std::string device;  // As in maps ("fd:01") and inode: the file's identity, so a file
  uint64_t inode = 0;  // many processes map is probed once.
};

// Whether an executable (by device and inode) has a static cudart, remembered across scans so
// a /proc scan loads each executable's symbols once.
using StaticCudartCache = std::map<std::pair<std::string, uint64_t>, bool>;

// Libraries found in `maps` of `pid` (executable scanned for a static cudart when no
// libcudart is mapped). An empty result is not an error.
std::vector<CudaLibraryFile> FindCudaLibraries(int pid, const std::vector<Mapping>& maps,
                                               std::string_view proc_root = "/proc",
                                               StaticCudartCache* cache = nullptr);

// Reads the maps, then as above. NotFound when the process does not exist.
StatusOr<std::vector<CudaLibraryFile>> FindCudaLibraries(int pid,
                                                         std::string_view proc_root = "/proc");

// "cudart", "cuda", "c10_cuda", "cudart_static".
std::string_view LibraryKindName(const CudaLibraryFile& file);

}  // namespace vigil::snoop
