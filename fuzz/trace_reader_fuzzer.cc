// SPDX-License-Identifier: Apache-2.0
// Fuzzes the Kineto trace reader (trace/reader/kineto_reader.h) on what `vigil analyze` and the
// fleet's analyses read: the input is a trace file, plain JSON or gzip (recognised by its magic
// bytes, as the reader does). It is read from an in-memory file twice: once with a small text
// window (so events straddle window edges and the window must grow) keeping every optional row
// kind, once with the defaults and gzip inflated on a second thread. A cut-off or corrupt trace is
// not an error for the reader; any answer is fine as long as nothing crashes or leaks.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/gzip.h"
#include "base/logging.h"
#include "fuzz/fuzz_input.h"
#include "trace/reader/kineto_reader.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  vigil::InitLogging(vigil::LogLevel::kOff);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int fd = memfd_create("trace.json", MFD_CLOEXEC);
  VIGIL_FUZZ_CHECK(fd >= 0);
  size_t off = 0;
  while (off < size) {
    const ssize_t n = write(fd, data + off, size - off);
    VIGIL_FUZZ_CHECK(n > 0);
    off += static_cast<size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  const bool gzip = vigil::IsGzip(std::string_view(reinterpret_cast<const char*>(data), size));

  vigil::trace::ReadOptions small;
  small.window_bytes = 256;
  small.background_inflate = false;
  small.keep_python_functions = true;
  small.keep_flows = true;
  [[maybe_unused]] auto first = vigil::trace::ReadTraceFile(path, small);

  vigil::trace::ReadOptions defaults;
  defaults.background_inflate = gzip;
  [[maybe_unused]] auto second = vigil::trace::ReadTraceFile(path, defaults);
  close(fd);
  return 0;
}
