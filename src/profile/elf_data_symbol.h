// SPDX-License-Identifier: Apache-2.0
// Data (object) symbols of an ELF file, which ElfImage leaves out (it keeps functions): what a
// reader of another process's globals needs, such as CPython's _PyRuntime and Py_Version. Also
// the file's load base, to turn a symbol value into an address in a process. Read with libelf
// on each call (a few per attached process). Stateless.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace vigil {

struct ElfDataSymbol {
  uint64_t value = 0;  // st_value.
  uint64_t size = 0;
};

// The symbol `name` in .dynsym or .symtab (any type). NotFound when absent.
StatusOr<ElfDataSymbol> FindElfDataSymbol(const std::string& path, std::string_view name);

struct ElfLoadInfo {
  bool is_dyn = false;       // ET_DYN: the process adds a load bias.
  uint64_t first_vaddr = 0;  // p_vaddr of the PT_LOAD with offset 0, page aligned.
};
StatusOr<ElfLoadInfo> ReadElfLoadInfo(const std::string& path);

}  // namespace vigil
