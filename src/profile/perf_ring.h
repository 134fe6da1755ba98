// SPDX-License-Identifier: Apache-2.0
// One perf_event file descriptor and its mmap'd ring buffer: the metadata page plus 2^n data
// pages that the kernel fills with records. ForEachRecord copies each record out (records wrap
// at the end of the ring) and then moves data_tail, so the kernel can reuse the space. Records
// larger than the ring, or with a zero size, mean a corrupt ring: the reader stops and reports
// DataLoss. Owned by one sampler thread; the kernel is the only writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "base/file_util.h"
#include "base/status.h"

namespace vigil {

class PerfRing {
 public:
  // Maps 1 + data_pages pages of `fd` (data_pages a power of two).
  static StatusOr<PerfRing> Map(ScopedFd fd, int data_pages);
  PerfRing(PerfRing&& other) noexcept;
  PerfRing& operator=(PerfRing&& other) = delete;
  PerfRing(const PerfRing&) = delete;
  PerfRing& operator=(const PerfRing&) = delete;
  ~PerfRing();

  int fd() const { return fd_.get(); }
  Status Enable();
  Status Disable();
  // Calls `on_record(type, bytes)` for each complete record (bytes include the 8-byte header).
  Status ForEachRecord(const std::function<void(uint32_t, std::span<const uint8_t>)>& on_record);

 private:
  PerfRing(ScopedFd fd, void* base, size_t length, size_t data_size)
      : fd_(std::move(fd)), base_(base), length_(length), data_size_(data_size) {}
  ScopedFd fd_;
  void* base_ = nullptr;
  size_t length_ = 0;
  size_t data_size_ = 0;
  std::vector<uint8_t> record_;
};

}  // namespace vigil
