// SPDX-License-Identifier: Apache-2.0
// Reads another process's memory with process_vm_readv (no ptrace stop: the target keeps
// running, so a read may see a structure mid-update; callers validate what they read, as
// py-spy does). Needs the same rights as ptrace attach (root, or same user with
// ptrace_scope 0). Every read is bounded by the caller's size. Thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"

namespace vigil {

class RemoteMemory {
 public:
  explicit RemoteMemory(int pid) : pid_(pid) {}
  int pid() const { return pid_; }

  // Reads exactly `size` bytes at `address`; DataLoss on a short read, the errno otherwise.
  Status Read(uint64_t address, void* out, size_t size) const;
  template <typename T>
  StatusOr<T> ReadValue(uint64_t address) const {
    T value{};
    VIGIL_RETURN_IF_ERROR(Read(address, &value, sizeof(T)));
    return value;
  }
  uint64_t ReadPointerOr(uint64_t address, uint64_t fallback) const {
    StatusOr<uint64_t> value = ReadValue<uint64_t>(address);
    return value.ok() ? *value : fallback;
  }

 private:
  int pid_;
};

}  // namespace vigil
