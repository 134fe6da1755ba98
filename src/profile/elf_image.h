// SPDX-License-Identifier: Apache-2.0
// One ELF file's symbols, as a symboliser and a uprobe attacher need them: function symbols
// from .symtab and .dynsym (and from the MiniDebugInfo in .gnu_debugdata, which Debian and
// Fedora ship in place of .symtab), the build id, and the loadable segments that map a file
// offset to a virtual address. Read with Debian's libelf; the file is closed after loading.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace vigil {

struct ElfSymbol {
  std::string name;      // Mangled, as stored.
  uint64_t address = 0;  // st_value: virtual address in the file's own layout.
  uint64_t size = 0;
};

struct ElfSegment {
  uint64_t file_offset = 0;
  uint64_t address = 0;  // p_vaddr
  uint64_t file_size = 0;
  bool executable = false;
};

class ElfImage {
 public:
  // Loads the function symbols of `path`. With `look_for_debug_file`, also merges the symbols of
  // a separate debug file found by build id under `debug_root` (/usr/lib/debug/.build-id/xx/
  // rest.debug) or by .gnu_debuglink beside the file and under debug_root.
  static StatusOr<ElfImage> Load(const std::string& path, bool look_for_debug_file = true,
                                 std::string_view debug_root = "/usr/lib/debug");

  const std::string& path() const { return path_; }
  // Hex of the NT_GNU_BUILD_ID note, "" if none.
  const std::string& build_id() const { return build_id_; }
  bool is_shared_object() const { return is_dyn_; }  // ET_DYN (PIE executables too).
  // Where the symbols came from, e.g. {".symtab", ".dynsym", ".gnu_debugdata", "debug file"}.
  const std::vector<std::string>& symbol_sources() const { return symbol_sources_; }
  // Sorted by address, duplicates (same address, .symtab and .dynsym) folded.
  const std::vector<ElfSymbol>& symbols() const { return symbols_; }
  const std::vector<ElfSegment>& segments() const { return segments_; }

  // The function symbol named exactly `name` (mangled name for C++), if any. Versioned dynsym
  // names ("cudaMalloc@@libcudart.so.12") match their plain name.
  std::optional<ElfSymbol> FindSymbol(std::string_view name) const;
  // The function symbol containing `address` (a virtual address in the file's layout); a
  // symbol of size 0 covers up to the next symbol.
  const ElfSymbol* SymbolAt(uint64_t address) const;
  // Virtual address <-> file offset through the PT_LOAD segments. std::nullopt outside them.
  std::optional<uint64_t> AddressOfFileOffset(uint64_t offset) const;
  std::optional<uint64_t> FileOffsetOfAddress(uint64_t address) const;

 private:
  std::string path_;
  std::string build_id_;
  bool is_dyn_ = false;
  std::vector<std::string> symbol_sources_;
  std::vector<ElfSymbol> symbols_;
  std::vector<ElfSegment> segments_;
  friend class ElfImageLoader;
};

// Whether `path` defines every function in `names` (exact symbol names) in .dynsym or .symtab:
// a cheap question (no symbol table is kept or sorted) for asking it of many files, as a scan for
// statically linked CUDA runtimes does of every new executable. False when unreadable.
bool ElfDefinesFunctions(const std::string& path, const std::vector<std::string_view>& names);

// C++ names demangled (abi::__cxa_demangle); anything else returned as is.
std::string Demangle(std::string_view name);

}  // namespace vigil
