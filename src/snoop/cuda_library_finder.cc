// SPDX-License-Identifier: Apache-2.0
#include "snoop/cuda_library_finder.h"

#include <optional>

#include "profile/elf_image.h"

namespace vigil::snoop {
namespace {

struct Pattern {
  std::string_view prefix;  // Basename prefix of the mapped file.
  CudaLibrary provider;
};

constexpr Pattern kPatterns[] = {
    {"libcudart.so", CudaLibrary::kRuntime},
    {"libcuda.so", CudaLibrary::kDriver},
    {"libc10_cuda.so", CudaLibrary::kCachingAllocator},
};

CudaLibraryFile FileOf(int pid, const Mapping& m, CudaLibrary provider,
                       std::string_view proc_root) {
  CudaLibraryFile f;
  f.provider = provider;
  f.path = m.path;
  f.open_path = MappedFilePath(pid, m.path, proc_root);
  f.device = m.device;
  f.inode = m.inode;
  return f;
}

// The executable's mapping (the file /proc/PID/exe names), if mapped.
std::optional<Mapping> ExecutableMapping(int pid, const std::vector<Mapping>& maps,
                                         std::string_view proc_root) {
  std::string exe = ExecutablePath(pid, proc_root);
  if (exe.empty()) return std::nullopt;
  for (const Mapping& m : maps) {
    if (m.IsFile() && m.path == exe) return m;
  }
  return std::nullopt;
}

}  // namespace

std::vector<CudaLibraryFile> FindCudaLibraries(int pid, const std::vector<Mapping>& maps,
                                               std::string_view proc_root,
                                               StaticCudartCache* cache) {
  std::vector<CudaLibraryFile> found;
  bool have_runtime = false;
  for (const Pattern& p : kPatterns) {
    std::optional<Mapping> m = FindMappedLibrary(maps, p.prefix);
    if (!m) continue;
    found.push_back(FileOf(pid, *m, p.provider, proc_root));
    have_runtime |= p.provider == CudaLibrary::kRuntime;
  }
  if (!have_runtime) {
    std::optional<Mapping> exe = ExecutableMapping(pid, maps, proc_root);
    if (exe) {
      CudaLibraryFile f = FileOf(pid, *exe, CudaLibrary::kRuntime, proc_root);
      auto key = std::make_pair(f.device, f.inode);
      std::optional<bool> known;
      if (cache && cache->count(key)) known = (*cache)[key];
      if (!known) {
        // Asked of every new executable a scan meets: the cheap question, not a symbol table.
        known = ElfDefinesFunctions(f.open_path, {"cudaLaunchKernel", "cudaMalloc"});
        if (cache) (*cache)[key] = *known;
      }
      if (*known) {
        f.static_in_executable = true;
        found.push_back(std::move(f));
      }
    }
  }
  return found;
}

StatusOr<std::vector<CudaLibraryFile>> FindCudaLibraries(int pid, std::string_view proc_root) {
  StatusOr<std::vector<Mapping>> maps = ReadProcMaps(pid, proc_root);
  if (!maps.ok()) return maps.status();
  return FindCudaLibraries(pid, *maps, proc_root);
}

std::string_view LibraryKindName(const CudaLibraryFile& file) {
  switch (file.provider) {
    case CudaLibrary::kRuntime:
      return file.static_in_executable ? "cudart_static" : "cudart";
    case CudaLibrary::kDriver:
      return "cuda";
    case CudaLibrary::kCachingAllocator:
      return "c10_cuda";
  }
  return "?";
}

}  // namespace vigil::snoop
