// SPDX-License-Identifier: Apache-2.0
#include "base/secret_file.h"

#include <fmt/format.h>

#include "base/logging.h"

namespace vigil {

std::string SecretModeExposure(mode_t mode) {
  const bool group_reads = (mode & S_IRGRP) != 0;
  const bool others_read = (mode & S_IROTH) != 0;
  const bool others_write = (mode & (S_IWGRP | S_IWOTH)) != 0;
  if (!group_reads && !others_read && !others_write) {
    return "";
  }
  std::string what;
  if (group_reads || others_read) {
    what = group_reads && others_read ? "readable by group and others"
           : group_reads              ? "readable by group"
                                      : "readable by others";
  }
  if (others_write) {
    what += what.empty() ? "writable by group or others" : ", writable by group or others";
  }
  return fmt::format("mode {:04o}: {}", mode & 07777, what);
}

Status CheckSecretFile(const std::string& path, std::string_view flag, bool strict) {
  struct stat st {};
  if (path.empty() || stat(path.c_str(), &st) != 0) {
    return OkStatus();
  }
  const std::string exposure = SecretModeExposure(st.st_mode);
  if (exposure.empty()) {
    return OkStatus();
  }
  if (strict) {
    return PermissionDeniedError(
        fmt::format("{} {} is {}; refusing it under --strict-permissions (chmod 600 {})", flag,
                    path, exposure, path));
  }
  VIGIL_LOG_WARN(
      "secret file is open to more than its owner: flag={} path={} {} (chmod 600 it; "
      "--strict-permissions refuses such files)",
      flag, path, exposure);
  return OkStatus();
}

}  // namespace vigil
