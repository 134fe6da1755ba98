// SPDX-License-Identifier: Apache-2.0
// A scratch directory for harnesses whose code under test touches files (trace directories, a
// trace file to read): made once per process under $TMPDIR, emptied between inputs so one input
// cannot leave state for the next, removed at exit. Not thread-safe; one per harness.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace vigil::fuzz {

class FuzzTempDir {
 public:
  FuzzTempDir() {
    const char* tmp = getenv("TMPDIR");
    std::string tmpl =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/vigil-fuzz-XXXXXX";
    if (mkdtemp(tmpl.data()) != nullptr) {
      path_ = tmpl;
    }
  }
  ~FuzzTempDir() {
    std::error_code ec;
    if (!path_.empty()) {
      std::filesystem::remove_all(path_, ec);
    }
  }
  FuzzTempDir(const FuzzTempDir&) = delete;
  FuzzTempDir& operator=(const FuzzTempDir&) = delete;

  const std::string& path() const { return path_; }

  // Removes everything inside the directory, keeping the directory itself.
  void Clear() const {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(path_, ec)) {
      std::filesystem::remove_all(entry.path(), ec);
    }
  }

 private:
  std::string path_;
};

}  // namespace vigil::fuzz
