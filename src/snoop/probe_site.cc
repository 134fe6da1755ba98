// SPDX-License-Identifier: Apache-2.0
#include "snoop/probe_site.h"

#include <unistd.h>

#include <cstring>

namespace vigil::snoop {

uint64_t ProbeSiteOffset(int fd, uint64_t function_offset) {
  constexpr unsigned char kEndbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
  unsigned char head[sizeof(kEndbr64) + 2] = {};
  ssize_t n = pread(fd, head, sizeof(head), static_cast<off_t>(function_offset));
  if (n < static_cast<ssize_t>(sizeof(kEndbr64) + 1) ||
      std::memcmp(head, kEndbr64, sizeof(kEndbr64)) != 0) {
    return function_offset;
  }
  // push %r64 is 50+r, or 41 50+r for r8-r15.
  const unsigned char* next = head + sizeof(kEndbr64);
  auto is_push = [](unsigned char b) { return b >= 0x50 && b <= 0x57; };
  bool push = is_push(next[0]) || (n == sizeof(head) && next[0] == 0x41 && is_push(next[1]));
  return push ? function_offset + sizeof(kEndbr64) : function_offset;
}

}  // namespace vigil::snoop
