// SPDX-License-Identifier: Apache-2.0
#include "trace/model/host_blocking.h"

#include <algorithm>
#include <array>
#include <vector>

namespace vigil::trace {
namespace {

using enum HostBlocking;
using BK = BlockKind;

constexpr std::string_view kStreamSync = "waits until every operation queued on the stream is done";
constexpr std::string_view kDeviceSync = "waits until every operation queued on the device is done";
constexpr std::string_view kEventSync = "waits until the work before the event is done";
constexpr std::string_view kSyncCopy =
    "synchronous copy: returns when the copy is done (CUDA queues device-to-device copies without "
    "waiting)";
constexpr std::string_view kAsyncCopy =
    "queued, except when the host side is pageable memory: the copy is staged through a pinned "
    "buffer and the call waits for it";
constexpr std::string_view kFree = "synchronises the device before it releases the memory";
constexpr std::string_view kMalloc =
    "blocks while the driver maps memory and may synchronise the device (the caching allocator "
    "calls it on a cache miss)";
constexpr std::string_view kHostAlloc =
    "page-locks host memory in the driver, serialised with the device";
constexpr std::string_view kStreamOrdered = "stream-ordered: queued like a kernel";
constexpr std::string_view kQueued = "queued on a stream; the host does not wait";
constexpr std::string_view kPoll = "polls and returns at once, done or not";
constexpr std::string_view kGpuWait =
    "makes a stream wait for an event on the GPU; the host does not wait";
constexpr std::string_view kMemset =
    "queued; blocks only for a pinned host target, which PyTorch does not use";

constexpr std::array kTable = {
    // CUDA runtime: explicit synchronisation.
    HostBlockingRule{"cudaDeviceSynchronize", kAlways, BK::kExplicitSync, kDeviceSync},
    HostBlockingRule{"cudaThreadSynchronize", kAlways, BK::kExplicitSync, kDeviceSync},
    HostBlockingRule{"cudaStreamSynchronize", kAlways, BK::kExplicitSync, kStreamSync},
    HostBlockingRule{"cudaEventSynchronize", kAlways, BK::kExplicitSync, kEventSync},
    HostBlockingRule{"cudaStreamQuery", kNever, BK::kNone, kPoll},
    HostBlockingRule{"cudaEventQuery", kNever, BK::kNone, kPoll},
    HostBlockingRule{"cudaStreamWaitEvent", kNever, BK::kNone, kGpuWait},
    HostBlockingRule{"cudaEventRecord", kNever, BK::kNone, kQueued},
    HostBlockingRule{"cudaEventRecordWithFlags", kNever, BK::kNone, kQueued},
    // CUDA runtime: copies.
    HostBlockingRule{"cudaMemcpy", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"cudaMemcpy2D", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"cudaMemcpy3D", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"cudaMemcpyPeer", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"cudaMemcpyToSymbol", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"cudaMemcpyFromSymbol", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"cudaMemcpyAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"cudaMemcpy2DAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"cudaMemcpy3DAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"cudaMemcpyPeerAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"cudaMemcpyToSymbolAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"cudaMemcpyFromSymbolAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"cudaMemset", kNever, BK::kNone, kMemset},
    HostBlockingRule{"cudaMemsetAsync", kNever, BK::kNone, kMemset},
    // CUDA runtime: memory.
    HostBlockingRule{"cudaMalloc", kAlways, BK::kAllocation, kMalloc},
    HostBlockingRule{"cudaMallocManaged", kAlways, BK::kAllocation, kMalloc},
    HostBlockingRule{"cudaMallocPitch", kAlways, BK::kAllocation, kMalloc},
    HostBlockingRule{"cudaFree", kAlways, BK::kAllocation, kFree},
    HostBlockingRule{"cudaMallocHost", kAlways, BK::kAllocation, kHostAlloc},
    HostBlockingRule{"cudaHostAlloc", kAlways, BK::kAllocation, kHostAlloc},
    HostBlockingRule{"cudaFreeHost", kAlways, BK::kAllocation, kFree},
    HostBlockingRule{"cudaHostRegister", kAlways, BK::kAllocation, kHostAlloc},
    HostBlockingRule{"cudaHostUnregister", kAlways, BK::kAllocation, kFree},
    HostBlockingRule{"cudaMallocAsync", kNever, BK::kNone, kStreamOrdered},
    HostBlockingRule{"cudaMallocFromPoolAsync", kNever, BK::kNone, kStreamOrdered},
    HostBlockingRule{"cudaFreeAsync", kNever, BK::kNone, kStreamOrdered},
    // CUDA runtime: launches.
    HostBlockingRule{"cudaLaunchKernel", kNever, BK::kNone, kQueued},
    HostBlockingRule{"cudaLaunchKernelExC", kNever, BK::kNone, kQueued},
    HostBlockingRule{"cudaLaunchCooperativeKernel", kNever, BK::kNone, kQueued},
    HostBlockingRule{"cudaGraphLaunch", kNever, BK::kNone, kQueued},
    // CUDA driver.
    HostBlockingRule{"cuCtxSynchronize", kAlways, BK::kExplicitSync, kDeviceSync},
    HostBlockingRule{"cuStreamSynchronize", kAlways, BK::kExplicitSync, kStreamSync},
    HostBlockingRule{"cuEventSynchronize", kAlways, BK::kExplicitSync, kEventSync},
    HostBlockingRule{"cuStreamQuery", kNever, BK::kNone, kPoll},
    HostBlockingRule{"cuEventQuery", kNever, BK::kNone, kPoll},
    HostBlockingRule{"cuStreamWaitEvent", kNever, BK::kNone, kGpuWait},
    HostBlockingRule{"cuEventRecord", kNever, BK::kNone, kQueued},
    HostBlockingRule{"cuMemcpy", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"cuMemcpyHtoD", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"cuMemcpyDtoH", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"cuMemcpyDtoD", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"cuMemcpy2D", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"cuMemcpy3D", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"cuMemcpyPeer", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"cuMemcpyAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"cuMemcpyHtoDAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"cuMemcpyDtoHAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"cuMemcpy2DAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"cuMemcpy3DAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"cuMemcpyPeerAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"cuMemAlloc", kAlways, BK::kAllocation, kMalloc},
    HostBlockingRule{"cuMemAllocManaged", kAlways, BK::kAllocation, kMalloc},
    HostBlockingRule{"cuMemFree", kAlways, BK::kAllocation, kFree},
    HostBlockingRule{"cuMemAllocHost", kAlways, BK::kAllocation, kHostAlloc},
    HostBlockingRule{"cuMemHostAlloc", kAlways, BK::kAllocation, kHostAlloc},
    HostBlockingRule{"cuMemFreeHost", kAlways, BK::kAllocation, kFree},
    HostBlockingRule{"cuMemAllocAsync", kNever, BK::kNone, kStreamOrdered},
    HostBlockingRule{"cuMemFreeAsync", kNever, BK::kNone, kStreamOrdered},
    HostBlockingRule{"cuLaunchKernel", kNever, BK::kNone, kQueued},
    HostBlockingRule{"cuLaunchKernelEx", kNever, BK::kNone, kQueued},
    HostBlockingRule{"cuGraphLaunch", kNever, BK::kNone, kQueued},
    // HIP (ROCm). hipMemcpyWithStream is the synchronous copy PyTorch uses for .cpu() on ROCm.
    HostBlockingRule{"hipDeviceSynchronize", kAlways, BK::kExplicitSync, kDeviceSync},
    HostBlockingRule{"hipStreamSynchronize", kAlways, BK::kExplicitSync, kStreamSync},
    HostBlockingRule{"hipEventSynchronize", kAlways, BK::kExplicitSync, kEventSync},
    HostBlockingRule{"hipStreamQuery", kNever, BK::kNone, kPoll},
    HostBlockingRule{"hipEventQuery", kNever, BK::kNone, kPoll},
    HostBlockingRule{"hipStreamWaitEvent", kNever, BK::kNone, kGpuWait},
    HostBlockingRule{"hipEventRecord", kNever, BK::kNone, kQueued},
    HostBlockingRule{"hipEventRecordWithFlags", kNever, BK::kNone, kQueued},
    HostBlockingRule{"hipMemcpy", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"hipMemcpyWithStream", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"hipMemcpyHtoD", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"hipMemcpyDtoH", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"hipMemcpyDtoD", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"hipMemcpy2D", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"hipMemcpyPeer", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"hipMemcpyToSymbol", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"hipMemcpyFromSymbol", kAlways, BK::kBlockingCopy, kSyncCopy},
    HostBlockingRule{"hipMemcpyAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"hipMemcpyHtoDAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"hipMemcpyDtoHAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"hipMemcpy2DAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"hipMemcpyPeerAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"hipMemcpyToSymbolAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"hipMemcpyFromSymbolAsync", kPageable, BK::kPageableCopy, kAsyncCopy},
    HostBlockingRule{"hipMemset", kNever, BK::kNone, kMemset},
    HostBlockingRule{"hipMemsetAsync", kNever, BK::kNone, kMemset},
    HostBlockingRule{"hipMalloc", kAlways, BK::kAllocation, kMalloc},
    HostBlockingRule{"hipExtMallocWithFlags", kAlways, BK::kAllocation, kMalloc},
    HostBlockingRule{"hipMallocManaged", kAlways, BK::kAllocation, kMalloc},
    HostBlockingRule{"hipFree", kAlways, BK::kAllocation, kFree},
    HostBlockingRule{"hipHostMalloc", kAlways, BK::kAllocation, kHostAlloc},
    HostBlockingRule{"hipHostFree", kAlways, BK::kAllocation, kFree},
    HostBlockingRule{"hipHostRegister", kAlways, BK::kAllocation, kHostAlloc},
    HostBlockingRule{"hipHostUnregister", kAlways, BK::kAllocation, kFree},
    HostBlockingRule{"hipMallocAsync", kNever, BK::kNone, kStreamOrdered},
    HostBlockingRule{"hipFreeAsync", kNever, BK::kNone, kStreamOrdered},
    HostBlockingRule{"hipLaunchKernel", kNever, BK::kNone, kQueued},
    HostBlockingRule{"hipExtLaunchKernel", kNever, BK::kNone, kQueued},
    HostBlockingRule{"hipModuleLaunchKernel", kNever, BK::kNone, kQueued},
    HostBlockingRule{"hipExtModuleLaunchKernel", kNever, BK::kNone, kQueued},
    HostBlockingRule{"hipGraphLaunch", kNever, BK::kNone, kQueued},
};

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view StripVersion(std::string_view s) {
  size_t k = s.size();
  while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9') --k;
  if (k < s.size() && k >= 2 && s[k - 1] == 'v' && s[k - 2] == '_') return s.substr(0, k - 2);
  return s;
}

bool MemoryKindIs(std::string_view copy_name, std::string_view kind) {
  return copy_name.find(kind) != std::string_view::npos;
}

}  // namespace

std::span<const HostBlockingRule> HostBlockingTable() { return kTable; }

std::string_view NormalizeApiName(std::string_view name) {
  name = StripVersion(name);
  for (std::string_view suffix : {"_ptsz", "_ptds", "_spt"}) {
    if (EndsWith(name, suffix)) name = StripVersion(name.substr(0, name.size() - suffix.size()));
  }
  return name;
}

const HostBlockingRule* FindHostBlockingRule(std::string_view api) {
  static const std::vector<const HostBlockingRule*> sorted = [] {
    std::vector<const HostBlockingRule*> v;
    for (const HostBlockingRule& r : kTable) v.push_back(&r);
    std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->api < b->api; });
    return v;
  }();
  api = NormalizeApiName(api);
  auto it =
      std::lower_bound(sorted.begin(), sorted.end(), api,
                       [](const HostBlockingRule* r, std::string_view n) { return r->api < n; });
  return it != sorted.end() && (*it)->api == api ? *it : nullptr;
}

HostBlocking HostBlockingOfName(std::string_view api) {
  const HostBlockingRule* r = FindHostBlockingRule(api);
  return r == nullptr ? kNever : r->blocks;
}

BlockKind HostBlockKind(const RankTrace& t, uint32_t row) {
  const EventTable& e = t.events;
  if (row >= e.size() || (e.kind[row] != EventKind::kRuntime && e.kind[row] != EventKind::kDriver))
    return BK::kNone;
  std::string_view api = t.strings.Get(e.name[row]);
  const HostBlockingRule* r = FindHostBlockingRule(api);
  if (r == nullptr || r->blocks == kNever) return BK::kNone;
  const uint32_t gpu = t.links.launched.empty() ? kNoIndex : t.links.launched[row];
  const bool copy = gpu != kNoIndex && e.kind[gpu] == EventKind::kMemcpy;
  const std::string_view copy_name = copy ? t.strings.Get(e.name[gpu]) : std::string_view();
  if (r->blocks == kPageable) {
    return copy && MemoryKindIs(copy_name, "Pageable") ? BK::kPageableCopy : BK::kNone;
  }
  // CUDA queues a synchronous device-to-device copy without waiting on the host; HIP's blocks.
  if (r->kind == BK::kBlockingCopy && api.substr(0, 2) == "cu" && copy &&
      MemoryKindIs(copy_name, "DtoD")) {
    return BK::kNone;
  }
  return r->kind;
}

std::string_view BlockKindName(BlockKind kind) {
  switch (kind) {
    case BK::kExplicitSync:
      return "explicit_sync";
    case BK::kBlockingCopy:
      return "blocking_copy";
    case BK::kPageableCopy:
      return "pageable_copy";
    case BK::kAllocation:
      return "allocation";
    case BK::kNone:
      break;
  }
  return "none";
}

std::string_view HostBlockingName(HostBlocking block) {
  switch (block) {
    case kAlways:
      return "always";
    case kPageable:
      return "pageable";
    case kNever:
      break;
  }
  return "never";
}

}  // namespace vigil::trace
