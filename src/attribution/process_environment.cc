// SPDX-License-Identifier: Apache-2.0
#include "attribution/process_environment.h"

#include "attribution/proc_pid_files.h"
#include "base/file_util.h"
#include "base/status.h"

namespace vigil {
namespace {

constexpr size_t kMaxEnvironBytes = 1 << 20;

}  // namespace

std::map<std::string, std::string> ReadAllowedEnvironment(
    const std::string& proc_root, int pid, const std::vector<std::string>& allow_list) {
  if (allow_list.empty() || pid <= 0) {
    return {};
  }
  StatusOr<std::string> text = ReadSmallFile(
      JoinPath(JoinPath(proc_root, std::to_string(pid)), "environ"), kMaxEnvironBytes);
  if (!text.ok()) {
    return {};  // Not an error: the environment is simply unknown.
  }
  return ParseEnviron(*text, allow_list);
}

}  // namespace vigil
