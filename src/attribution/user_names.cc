// SPDX-License-Identifier: Apache-2.0
#include "attribution/user_names.h"

#include <pwd.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace vigil {

std::string UserNameForUid(int64_t uid) {
  if (uid < 0) {
    return "";
  }
  long hint = sysconf(_SC_GETPW_R_SIZE_MAX);  // NOLINT(google-runtime-int): sysconf's type.
  std::vector<char> buf(hint > 0 ? static_cast<size_t>(hint) : 4096);
  passwd pw{};
  passwd* result = nullptr;
  while (true) {
    int rc = getpwuid_r(static_cast<uid_t>(uid), &pw, buf.data(), buf.size(), &result);
    if (rc == ERANGE && buf.size() < (1u << 20)) {
      buf.resize(buf.size() * 2);
      continue;
    }
    if (rc == 0 && result != nullptr && result->pw_name != nullptr) {
      return result->pw_name;
    }
    return std::to_string(uid);
  }
}

}  // namespace vigil
