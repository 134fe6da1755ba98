// SPDX-License-Identifier: Apache-2.0
#include "snoop/runtime_code.h"

#include <algorithm>

#include "profile/elf_image.h"
#include "snoop/cuda_api_table.h"

namespace vigil::snoop {
namespace {

bool SameFile(const Mapping& m, const CudaLibraryFile& f) {
  return m.inode == f.inode && m.device == f.device;
}

// The file offsets from the first traced runtime entry point to the end of the last.
std::optional<std::pair<uint64_t, uint64_t>> StaticSpan(const CudaLibraryFile& file) {
  StatusOr<ElfImage> image = ElfImage::Load(file.open_path, /*look_for_debug_file=*/false);
  if (!image.ok()) return std::nullopt;
  std::optional<std::pair<uint64_t, uint64_t>> span;
  for (const CudaApi& api : CudaApis()) {
    if (api.provider != CudaLibrary::kRuntime) continue;
    std::optional<ElfSymbol> sym = image->FindSymbol(api.symbol);
    if (!sym || sym->address == 0) continue;
    std::optional<uint64_t> first = image->FileOffsetOfAddress(sym->address);
    if (!first) continue;
    uint64_t end = *first + std::max<uint64_t>(sym->size, 1);
    span = span ? std::pair{std::min(span->first, *first), std::max(span->second, end)}
                : std::pair{*first, end};
  }
  return span;
}

}  // namespace

std::vector<CodeRange> RuntimeCodeRanges(const std::vector<Mapping>& maps,
                                         const std::vector<CudaLibraryFile>& files,
                                         StaticRuntimeSpans* spans) {
  std::vector<CodeRange> out;
  for (const CudaLibraryFile& f : files) {
    if (f.provider != CudaLibrary::kRuntime) continue;
    if (!f.static_in_executable) {
      for (const Mapping& m : maps) {
        if (m.executable && SameFile(m, f)) out.push_back({m.start, m.end});
      }
      continue;
    }
    // A static runtime: its span of the file, placed through the mappings' file offsets.
    std::optional<std::pair<uint64_t, uint64_t>> span;
    auto key = std::make_pair(f.device, f.inode);
    if (spans != nullptr && spans->count(key)) {
      span = spans->at(key);
    } else {
      span = StaticSpan(f);
      if (spans != nullptr) (*spans)[key] = span;
    }
    if (!span) continue;
    for (const Mapping& m : maps) {
      if (!m.executable || !SameFile(m, f)) continue;
      uint64_t lo = m.file_offset, hi = m.file_offset + (m.end - m.start);
      uint64_t first = std::max(span->first, lo), end = std::min(span->second, hi);
      if (first < end) out.push_back({m.start + (first - lo), m.start + (end - lo)});
    }
  }
  return out;
}

}  // namespace vigil::snoop
