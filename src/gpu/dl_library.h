// SPDX-License-Identifier: Apache-2.0
// RAII owner of a dlopen() handle. Vendor GPU libraries are loaded at run time so one binary runs
// on hosts with and without them; a name without '/' goes through the normal loader search
// (LD_LIBRARY_PATH, ld.so.cache), a path is opened as given. Owner: gpu. Thread-compatible.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace vigil {

class DlLibrary {
 public:
  DlLibrary() = default;
  ~DlLibrary();
  DlLibrary(DlLibrary&& other) noexcept;
  DlLibrary& operator=(DlLibrary&& other) noexcept;
  DlLibrary(const DlLibrary&) = delete;
  DlLibrary& operator=(const DlLibrary&) = delete;

  // NotFound with dlerror()'s text when the library cannot be loaded.
  static StatusOr<DlLibrary> Open(const std::string& name_or_path);
  // nullptr when the symbol is absent.
  void* Symbol(const char* name) const;
  bool loaded() const { return handle_ != nullptr; }
  const std::string& name() const { return name_; }

 private:
  void* handle_ = nullptr;
  std::string name_;
};

}  // namespace vigil
