// SPDX-License-Identifier: Apache-2.0
#include "gpu/process_list.h"

#include <cstring>

namespace vigil {
namespace {

constexpr uint32_t kMaxPid = 4194304;  // PID_MAX_LIMIT on 64-bit Linux.
constexpr unsigned kNoInstance = 0xFFFFFFFFu;

uint32_t Load32(std::span<const uint8_t> b, size_t off) {
  uint32_t v;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}
uint64_t Load64(std::span<const uint8_t> b, size_t off) {
  uint64_t v;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}

// One past the last byte the library wrote (bytes differing from the sentinel).
size_t WrittenEnd(std::span<const uint8_t> buffer) {
  for (size_t i = buffer.size(); i > 0; --i) {
    if (buffer[i - 1] != kProcessBufferSentinel) return i;
  }
  return 0;
}

// `exact`: the written region ends exactly at count x stride (struct copies, or v2+ entries
// whose instance ids are always written). Otherwise it must at least reach the last entry's
// usedGpuMemory and not pass count x stride.
bool Explains(std::span<const uint8_t> buffer, unsigned count, size_t stride, size_t written,
              bool exact) {
  const size_t end = count * stride;
  if (end > buffer.size()) return false;
  for (unsigned i = 0; i < count; ++i) {
    const uint32_t pid = Load32(buffer, i * stride);
    if (pid == 0 || pid > kMaxPid) return false;
  }
  if (exact) return written == end;
  return written <= end && written >= (count - 1) * stride + 9;
}

}  // namespace

std::optional<size_t> ProbeProcessStride(std::span<const uint8_t> buffer, unsigned count,
                                         size_t expected) {
  if (count == 0) return expected;
  const size_t written = WrittenEnd(buffer);
  const size_t order[] = {expected, 24, 32, 16};
  for (bool exact : {true, false}) {
    for (size_t stride : order) {
      if (Explains(buffer, count, stride, written, exact)) return stride;
    }
  }
  return std::nullopt;
}

std::vector<GpuProcess> DecodeProcesses(std::span<const uint8_t> buffer, unsigned count,
                                        size_t stride) {
  std::vector<GpuProcess> out;
  out.reserve(count);
  for (unsigned i = 0; i < count && (i + 1) * stride <= buffer.size(); ++i) {
    const size_t off = i * stride;
    GpuProcess p;
    p.pid = static_cast<int>(Load32(buffer, off));
    p.used_memory_bytes = Load64(buffer, off + 8);
    if (p.used_memory_bytes == ~uint64_t{0}) p.used_memory_bytes = 0;  // NVML_VALUE_NOT_AVAILABLE
    if (stride >= 24) {
      const uint32_t gi = Load32(buffer, off + 16);
      const uint32_t ci = Load32(buffer, off + 20);
      if (gi != kNoInstance) p.gpu_instance_id = gi;
      if (ci != kNoInstance) p.compute_instance_id = ci;
    }
    out.push_back(p);
  }
  return out;
}

}  // namespace vigil
