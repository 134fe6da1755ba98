// SPDX-License-Identifier: Apache-2.0
// Every traced CUDA entry point as one registry row: the symbol to probe, the library it lives
// in, and what the BPF programs read from its arguments (cuda_probes.h api_spec), written from
// NVIDIA's documented prototypes and PyTorch's CUDACachingAllocator. A row's index is the
// attach cookie and its index in the BPF spec table.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "snoop/cuda_probes.h"
#include "snoop/raw_event.h"

namespace vigil::snoop {

enum class CudaLibrary { kRuntime, kDriver, kCachingAllocator };

struct CudaApi {
  std::string_view symbol;  // Mangled for C++ ("_ZN3c104cuda...").
  std::string_view name;    // As reported ("cudaMalloc", "CUDACachingAllocator::malloc").
  CudaLibrary provider;     // The library that defines the symbol.
  api_spec spec;
};

std::span<const CudaApi> CudaApis();
// Row index of `name` (reported name) or std::nullopt.
std::optional<size_t> FindCudaApi(std::string_view name);
// Whether a call of `api` made from the runtime's own code is left out (api_spec
// skip_under_runtime): a driver launch, sync, copy, allocation or free that the runtime makes
// to carry out its own call, which is counted already. Calls that keep state for later ones
// (kernel names, devices, contexts, mappings) are followed wherever they come from.
bool SkippedUnderTheRuntime(const CudaApi& api);
// The RawEvent group of a class (vs_class).
ApiGroup GroupOfClass(int klass);
// "HtoD", "DtoH", "DtoD", "HtoH", "default"; with "_pinned"/"_pageable" for a known host side.
std::string_view CopyKindName(int kind);

}  // namespace vigil::snoop
