// SPDX-License-Identifier: Apache-2.0
// Builders of snoop_summary.h values for tests: each sets the fields it names and leaves the
// rest default, so tests keep compiling when the model gains a field. Test-only.
#pragma once

#include <string>
#include <vector>

#include "snoop/snoop_summary.h"

namespace vigil::snoop::test_util {

inline KernelLaunches Kernel(std::string name, uint64_t count) {
  KernelLaunches k;
  k.name = std::move(name);
  k.count = count;
  return k;
}

inline ApiCalls Api(std::string api, uint64_t count, double seconds) {
  ApiCalls a;
  a.api = std::move(api);
  a.count = count;
  a.seconds = seconds;
  return a;
}

inline SyncStack SyncAt(std::vector<std::string> frames, std::string api, uint64_t count,
                        double seconds) {
  SyncStack s;
  s.stack.frames = std::move(frames);
  s.api = std::move(api);
  s.count = count;
  s.seconds = seconds;
  return s;
}

inline LeakGroup Leak(uint64_t bytes, uint64_t count, std::string api,
                      std::vector<std::string> frames) {
  LeakGroup l;
  l.bytes = bytes;
  l.count = count;
  l.api = std::move(api);
  l.stack.frames = std::move(frames);
  return l;
}

inline CopyKind Copy(std::string kind, uint64_t count, uint64_t bytes) {
  CopyKind c;
  c.kind = std::move(kind);
  c.count = count;
  c.bytes = bytes;
  return c;
}

inline SizeBucket Bucket(uint64_t upper_bytes, uint64_t count) {
  SizeBucket b;
  b.upper_bytes = upper_bytes;
  b.count = count;
  return b;
}

}  // namespace vigil::snoop::test_util
