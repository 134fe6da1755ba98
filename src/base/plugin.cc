// SPDX-License-Identifier: Apache-2.0
#include "base/plugin.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <map>
#include <mutex>
#include <utility>

#include <fmt/format.h>

namespace vigil {

std::string PluginDirectory() {
  char exe[PATH_MAX] = {};
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  std::string dir = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string("./vigil");
  dir = dir.substr(0, dir.rfind('/') + 1);
  return dir + "../lib/vigil/";
}

StatusOr<void*> LoadPluginSymbol(const std::string& file, const std::string& symbol,
                                 const std::string& what) {
  static std::mutex mu;
  static std::map<std::pair<std::string, std::string>, StatusOr<void*>>* loaded =
      new std::map<std::pair<std::string, std::string>, StatusOr<void*>>();
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_pair(file, symbol);
  if (auto it = loaded->find(key); it != loaded->end()) return it->second;
  const std::string path = PluginDirectory() + file;
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  void* address = handle != nullptr ? dlsym(handle, symbol.c_str()) : nullptr;
  StatusOr<void*> answer = address;
  if (address == nullptr) {
    const char* why = dlerror();
    answer = FailedPreconditionError(fmt::format(
        "the {} plugin {} cannot be loaded ({}); it is built with vigil and must stay in "
        "lib/vigil/ beside its bin/",
        what, path, why != nullptr ? why : "no entry point " + symbol));
  }
  loaded->emplace(key, answer);
  return answer;
}

}  // namespace vigil
