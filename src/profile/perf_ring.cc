// SPDX-License-Identifier: Apache-2.0
#include "profile/perf_ring.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

namespace vigil {

StatusOr<PerfRing> PerfRing::Map(ScopedFd fd, int data_pages) {
  if (data_pages <= 0 || (data_pages & (data_pages - 1)) != 0) {
    return InvalidArgumentError("perf ring: data pages must be a power of two");
  }
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t length = page * (1 + static_cast<size_t>(data_pages));
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (base == MAP_FAILED) {
    return ErrnoStatus(errno, "mmap perf ring");
  }
  return PerfRing(std::move(fd), base, length, page * static_cast<size_t>(data_pages));
}

PerfRing::PerfRing(PerfRing&& other) noexcept
    : fd_(std::move(other.fd_)),
      base_(std::exchange(other.base_, nullptr)),
      length_(other.length_),
      data_size_(other.data_size_) {}

PerfRing::~PerfRing() {
  if (base_ != nullptr) {
    munmap(base_, length_);
  }
}

Status PerfRing::Enable() {
  if (ioctl(fd_.get(), PERF_EVENT_IOC_ENABLE, 0) != 0) {
    return ErrnoStatus(errno, "PERF_EVENT_IOC_ENABLE");
  }
  return OkStatus();
}

Status PerfRing::Disable() {
  if (ioctl(fd_.get(), PERF_EVENT_IOC_DISABLE, 0) != 0) {
    return ErrnoStatus(errno, "PERF_EVENT_IOC_DISABLE");
  }
  return OkStatus();
}

Status PerfRing::ForEachRecord(
    const std::function<void(uint32_t, std::span<const uint8_t>)>& on_record) {
  auto* meta = static_cast<perf_event_mmap_page*>(base_);
  const uint8_t* data =
      static_cast<const uint8_t*>(base_) + static_cast<size_t>(sysconf(_SC_PAGESIZE));
  // data_head is written by the kernel: read it with acquire semantics before the data.
  const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail;
  Status result = OkStatus();
  while (tail < head) {
    if (head - tail < sizeof(perf_event_header)) {
      result = DataLossError("perf ring: truncated record header");
      break;
    }
    perf_event_header header{};
    const size_t start = tail % data_size_;
    for (size_t i = 0; i < sizeof(header); ++i) {
      reinterpret_cast<uint8_t*>(&header)[i] = data[(start + i) % data_size_];
    }
    if (header.size < sizeof(header) || header.size > data_size_ || header.size > head - tail) {
      result = DataLossError("perf ring: record of bad size");
      tail = head;
      break;
    }
    record_.resize(header.size);
    const size_t first = std::min<size_t>(header.size, data_size_ - start);
    std::memcpy(record_.data(), data + start, first);
    std::memcpy(record_.data() + first, data, header.size - first);
    tail += header.size;
    // Give the space back before handling the record: handling (unwinding) may be slow, and
    // the kernel can keep writing meanwhile.
    __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
    on_record(header.type, std::span<const uint8_t>(record_.data(), record_.size()));
  }
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
  return result;
}

}  // namespace vigil
