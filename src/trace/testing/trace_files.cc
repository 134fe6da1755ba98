// SPDX-License-Identifier: Apache-2.0
#include "trace/testing/trace_files.h"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <zlib.h>

namespace vigil::trace::testing {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "vigil-trace-XXXXXX").string();
  char* p = ::mkdtemp(tmpl.data());
  path_ = p != nullptr ? std::string(p) : std::string("/tmp");
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::Write(std::string_view name, std::string_view contents, bool gzip) const {
  std::string file = path_ + "/" + std::string(name);
  if (gzip) {
    gzFile gz = gzopen(file.c_str(), "wb");
    if (gz != nullptr) {
      gzwrite(gz, contents.data(), static_cast<unsigned>(contents.size()));
      gzclose(gz);
    }
  } else {
    std::ofstream out(file, std::ios::binary);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  }
  return file;
}

std::string SampleTrace(std::string_view name) {
  return std::string(VIGIL_TEST_DATA_DIR) + "/traces/" + std::string(name);
}

std::string MakeTrace(const std::vector<std::string>& events, std::string_view extra_keys) {
  std::string out = "{\n  \"schemaVersion\": 1,\n";
  if (!extra_keys.empty()) {
    out += std::string(extra_keys);
    out += ",\n";
  }
  out += "  \"traceEvents\": [\n";
  for (size_t i = 0; i < events.size(); ++i) {
    out += "    " + events[i];
    out += i + 1 < events.size() ? ",\n" : "\n";
  }
  out += "  ]\n}\n";
  return out;
}

std::string XEvent(std::string_view cat, std::string_view name, double ts_us, double dur_us,
                   int pid, int tid, std::string_view args) {
  return fmt::format(
      R"({{"ph": "X", "cat": "{}", "name": "{}", "pid": {}, "tid": {}, "ts": {:.3f}, "dur": {:.3f}, "args": {{{}}}}})",
      cat, name, pid, tid, ts_us, dur_us, dur_us >= 0 ? args : args);
}

TraceBuilder& TraceBuilder::Cpu(std::string_view cat, std::string_view name, double ts, double dur,
                                int tid, std::string_view args) {
  events_.push_back(XEvent(cat, name, ts, dur, 100, tid, args));
  return *this;
}

TraceBuilder& TraceBuilder::Launch(std::string_view name, double ts, double dur, int64_t corr,
                                   int tid) {
  events_.push_back(
      XEvent("cuda_runtime", name, ts, dur, 100, tid, fmt::format(R"("correlation": {})", corr)));
  return *this;
}

TraceBuilder& TraceBuilder::Gpu(std::string_view cat, std::string_view name, double ts, double dur,
                                int64_t corr, int64_t stream, std::string_view extra_args) {
  std::string args = fmt::format(R"("device": 0, "stream": {}, "correlation": {})", stream, corr);
  if (!extra_args.empty()) args += ", " + std::string(extra_args);
  events_.push_back(XEvent(cat, name, ts, dur, 0, static_cast<int>(stream), args));
  return *this;
}

TraceBuilder& TraceBuilder::Memory(double ts, int64_t allocated, int64_t reserved, int device) {
  events_.push_back(fmt::format(
      R"({{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 100, "tid": 1, "ts": {:.3f}, "args": {{"Total Reserved": {}, "Total Allocated": {}, "Bytes": 1, "Device Id": {}, "Device Type": 1}}}})",
      ts, reserved, allocated, device));
  return *this;
}

TraceBuilder& TraceBuilder::TopLevel(std::string_view key_and_value) {
  if (!top_.empty()) top_ += ",\n";
  top_ += "  " + std::string(key_and_value);
  return *this;
}

std::string TraceBuilder::Json() const { return MakeTrace(events_, top_); }

}  // namespace vigil::trace::testing
