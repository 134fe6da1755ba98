// SPDX-License-Identifier: Apache-2.0
// Test helpers: write small traces (plain or gzip) to a temporary directory and locate the
// vendored sample traces. Test-only; not part of the library.
// Owner: trace.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vigil::trace::testing {

// A fresh directory under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string Write(std::string_view name, std::string_view contents, bool gzip = false) const;

 private:
  std::string path_;
};

// tests/data/traces/<name>.
std::string SampleTrace(std::string_view name);

// A Kineto JSON document from event objects (each a JSON object text) and extra top-level keys.
std::string MakeTrace(const std::vector<std::string>& events, std::string_view extra_keys = "");

// One complete event: X phase with the given fields; `args` is a JSON object body without braces.
std::string XEvent(std::string_view cat, std::string_view name, double ts_us, double dur_us,
                   int pid, int tid, std::string_view args = "");

// Builds a synthetic Kineto trace event by event (times in microseconds).
class TraceBuilder {
 public:
  TraceBuilder& Cpu(std::string_view cat, std::string_view name, double ts, double dur, int tid = 1,
                    std::string_view args = "");
  // A runtime call with a correlation id (cuda_runtime category).
  TraceBuilder& Launch(std::string_view name, double ts, double dur, int64_t corr, int tid = 1);
  // GPU work with a correlation id on a stream.
  TraceBuilder& Gpu(std::string_view cat, std::string_view name, double ts, double dur,
                    int64_t corr, int64_t stream = 7, std::string_view extra_args = "");
  TraceBuilder& Memory(double ts, int64_t allocated, int64_t reserved, int device = 0);
  // A top-level key, e.g. R"("distributedInfo": {"rank": 1})".
  TraceBuilder& TopLevel(std::string_view key_and_value);
  std::string Json() const;

 private:
  std::vector<std::string> events_;
  std::string top_;
};

}  // namespace vigil::trace::testing
