// SPDX-License-Identifier: Apache-2.0
#include "profile/remote_memory.h"

#include <sys/uio.h>

#include <cerrno>

#include <fmt/format.h>

namespace vigil {

Status RemoteMemory::Read(uint64_t address, void* out, size_t size) const {
  if (size == 0) {
    return OkStatus();
  }
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};  // NOLINT(performance-no-int-to-ptr)
  const ssize_t n = process_vm_readv(pid_, &local, 1, &remote, 1, 0);
  if (n < 0) {
    return ErrnoStatus(errno, fmt::format("read {} bytes at {:#x} in pid {}", size, address, pid_));
  }
  if (static_cast<size_t>(n) != size) {
    return DataLossError(fmt::format("short read at {:#x} in pid {}", address, pid_));
  }
  return OkStatus();
}

}  // namespace vigil
