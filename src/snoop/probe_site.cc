// SPDX-License-Identifier: Apache-2.0
#include "snoop/probe_site.h"

#include <unistd.h>

#include <cstring>

namespace vigil::snoop {

uint64_t ProbeSiteOffset(int fd, uint64_t function_offset) {
  constexpr unsigned char kEndbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
  unsigned char head[sizeof(kEndbr64)] = {};
  ssize_t n = pread(fd, head, sizeof(head), static_cast<off_t>(function_offset));
  if (n == static_cast<ssize_t>(sizeof(head)) && std::memcmp(head, kEndbr64, sizeof(head)) == 0) {
    return function_offset + sizeof(kEndbr64);
  }
  return function_offset;
}

}  // namespace vigil::snoop
