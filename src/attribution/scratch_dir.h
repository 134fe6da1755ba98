// SPDX-License-Identifier: Apache-2.0
// For tests: a private temporary directory under /tmp (short enough for a unix socket path),
// removed with everything in it when the object goes. Unique per test, so tests run in parallel.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace vigil {

class ScratchDir {
 public:
  ScratchDir() {
    char templ[] = "/tmp/vigil-attr-XXXXXX";
    const char* made = mkdtemp(templ);
    path_ = made != nullptr ? made : "";
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }
  // Writes `name` (mode 0755 when `executable`) and returns its path.
  std::string Write(const std::string& name, const std::string& text,
                    bool executable = false) const {
    const std::string file = Sub(name);
    std::filesystem::create_directories(std::filesystem::path(file).parent_path());
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
    chmod(file.c_str(), executable ? 0755 : 0644);
    return file;
  }

 private:
  std::string path_;
};

}  // namespace vigil
