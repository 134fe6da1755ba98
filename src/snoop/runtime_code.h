// SPDX-License-Identifier: Apache-2.0
// Where a process's CUDA runtime code is, so the probes can tell a driver call the runtime
// makes to carry out one of its own calls (cudaLaunchKernel calling cuLaunchKernel, as
// NVIDIA's runtime does through the driver's entry points) from one the program makes itself:
// the first is already counted as the runtime call, and counting it again would report every
// launch, sync and copy twice. A shared libcudart is its executable mappings. A runtime linked
// into the executable is the span from its first to its last traced entry point: its internal
// functions usually sit among them, but a driver call from one outside that span counts twice.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "profile/proc_maps.h"
#include "snoop/cuda_library_finder.h"

namespace vigil::snoop {

struct CodeRange {
  uint64_t start = 0;
  uint64_t end = 0;  // One past the last byte.
  bool operator==(const CodeRange&) const = default;
};

// Per executable (device, inode): the file offsets a static runtime spans ([first, end)), or
// std::nullopt when none was found; so a rescan loads each executable's symbols once.
using StaticRuntimeSpans =
    std::map<std::pair<std::string, uint64_t>, std::optional<std::pair<uint64_t, uint64_t>>>;

// The runtime code of a process with mappings `maps` and CUDA libraries `files` (as
// FindCudaLibraries found them), in its address space, in the order the maps list them.
std::vector<CodeRange> RuntimeCodeRanges(const std::vector<Mapping>& maps,
                                         const std::vector<CudaLibraryFile>& files,
                                         StaticRuntimeSpans* spans = nullptr);

}  // namespace vigil::snoop
