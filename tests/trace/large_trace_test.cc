// SPDX-License-Identifier: Apache-2.0
// A multi-GB synthetic trace, generated on the fly into a pipe (nothing of that size on disk),
// read with bounded memory: the peak RSS grows by far less than the trace size and every event
// is counted. 2.2 GB normally; 256 MB under the sanitizers, which are ~10x slower.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "trace/analyzer.h"
#include "trace/reader/kineto_reader.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kTargetBytes = 256ULL << 20;
#else
constexpr uint64_t kTargetBytes = 2200ULL << 20;
#endif

int64_t PeakRssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return -1;
}

bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

TEST(LargeTraceTest, MultiGigabyteSparseTraceWithBoundedMemory) {
  testing::TempDir dir;
  std::string fifo = dir.path() + "/big.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Each event is followed by padding (mostly whitespace), so the trace is large but sparse.
  const std::string padding(64 * 1024, ' ');
  uint64_t events_written = 0;
  std::thread writer([&] {
    int fd = ::open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    std::string head = R"({"schemaVersion": 1, "traceEvents": [)";
    uint64_t written = 0;
    bool ok = WriteAll(fd, head.data(), head.size());
    for (uint64_t i = 0; ok && written < kTargetBytes; ++i) {
      std::string ev = (i ? "," : "") +
                       testing::XEvent("kernel", "k" + std::to_string(i % 50), i * 10.0, 5.0, 0, 7,
                                       R"("stream": 7, "correlation": )" + std::to_string(i));
      ok = WriteAll(fd, ev.data(), ev.size()) && WriteAll(fd, padding.data(), padding.size());
      written += ev.size() + padding.size();
      ++events_written;
    }
    std::string tail = "]}";
    if (ok) WriteAll(fd, tail.data(), tail.size());
    ::close(fd);
  });
  int64_t before = PeakRssKb();
  ReadOptions options;
  auto trace = ReadTraceFile(fifo, options);
  writer.join();
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_FALSE(trace->quality.truncated);
  EXPECT_EQ(trace->events.size(), events_written);
  EXPECT_GE(trace->quality.bytes_read, kTargetBytes);
  int64_t grown_kb = PeakRssKb() - before;
  // Memory stays far below the trace size (a window of a few MB plus the rows).
  EXPECT_LT(grown_kb * 1024, static_cast<int64_t>(kTargetBytes / 8))
      << "peak RSS grew " << grown_kb << " kB";
}

}  // namespace
}  // namespace vigil::trace
