// SPDX-License-Identifier: Apache-2.0
#include "gpu/dl_library.h"

#include <dlfcn.h>

#include <utility>

namespace vigil {

DlLibrary::~DlLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

DlLibrary::DlLibrary(DlLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), name_(std::move(other.name_)) {}

DlLibrary& DlLibrary::operator=(DlLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    name_ = std::move(other.name_);
  }
  return *this;
}

StatusOr<DlLibrary> DlLibrary::Open(const std::string& name_or_path) {
  dlerror();
  void* handle = dlopen(name_or_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return NotFoundError("dlopen " + name_or_path + ": " + (err ? err : "unknown error"));
  }
  DlLibrary lib;
  lib.handle_ = handle;
  lib.name_ = name_or_path;
  return lib;
}

void* DlLibrary::Symbol(const char* name) const {
  if (handle_ == nullptr) return nullptr;
  return dlsym(handle_, name);
}

}  // namespace vigil
