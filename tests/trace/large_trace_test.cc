// SPDX-License-Identifier: Apache-2.0
// A multi-GB synthetic trace, generated on the fly into a pipe (nothing of that size on disk),
// read and analysed by a child process whose peak RSS must stay bounded: a few MB of streaming
// window and the rows, whatever the size of the trace. Every event must be counted and the
// analysis numbers must be exact.
//
// Two builds of this file: trace_large_integrationtest (256 MB, in `make test`, under the
// sanitizers) and, in builds without sanitizers only, trace_multigb_integrationtest with
// VIGIL_MULTI_GB_TRACE (2.2 GB, label `large`: `ctest -L large`).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "trace/analyzer.h"
#include "trace/reader/kineto_reader.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

#if defined(VIGIL_MULTI_GB_TRACE)
constexpr uint64_t kTargetBytes = 2200ULL << 20;
#else
constexpr uint64_t kTargetBytes = 256ULL << 20;
#endif
// Peak RSS growth allowed to the reading process, the same for any trace size: streaming keeps
// a bounded window, and the sparse trace has few rows (one per 64 KiB).
constexpr int64_t kMaxGrowthKb = 48 << 10;
constexpr int kKernelNames = 50;
constexpr int64_t kKernelDurNs = 5000;
constexpr int64_t kKernelPeriodNs = 10000;

int64_t StatusKb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(key);
  while (std::getline(in, line)) {
    if (line.compare(0, n, key) == 0) return std::atoll(line.c_str() + n);
  }
  return -1;
}

bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool ReadAll(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// What the child reports back through a pipe.
struct ChildResult {
  int ok = 0;
  int truncated = 0;
  uint64_t rows = 0;
  uint64_t bytes_read = 0;
  uint64_t gpu_rows = 0;
  int64_t busy_ns = 0;  // GPU span minus idle
  int64_t span_ns = 0;
  uint64_t distinct_kernels = 0;
  int64_t rss_start_kb = 0;
  int64_t hwm_end_kb = 0;
};

// Runs in the child: read + link + analyse the trace from the pipe, report, exit.
[[noreturn]] void ChildMain(const std::string& fifo, int result_fd) {
  ChildResult r;
  r.rss_start_kb = StatusKb("VmRSS:");
  ReadOptions options;
  options.threads = 1;
  auto traces = ReadTraces(fifo, options);
  if (traces.ok() && traces->size() == 1) {
    Report report = Analyze(*traces, AnalysisConfig());
    const RankTrace& t = (*traces)[0];
    r.ok = 1;
    r.truncated = t.quality.truncated ? 1 : 0;
    r.rows = t.events.size();
    r.bytes_read = t.quality.bytes_read;
    r.gpu_rows = t.links.gpu.size();
    const TemporalBreakdown& tb = report.ranks[0].temporal;
    r.span_ns = tb.kernel_time * report.ranks[0].unit_ns;
    r.busy_ns = (tb.kernel_time - tb.idle) * report.ranks[0].unit_ns;
    r.distinct_kernels = report.ranks[0].kernels.kernels.size();
  } else {
    std::fprintf(stderr, "child: %s\n",
                 traces.ok() ? "wrong rank count" : traces.status().ToString().c_str());
  }
  r.hwm_end_kb = StatusKb("VmHWM:");
  bool sent = WriteAll(result_fd, reinterpret_cast<const char*>(&r), sizeof(r));
  ::_exit(sent ? 0 : 1);
}

// Writes the sparse trace: each kernel event is followed by 64 KiB of whitespace.
bool WriteSparseTrace(int fd, uint64_t* events) {
  const std::string padding(64 * 1024, ' ');
  std::string head = R"({"schemaVersion": 1, "traceEvents": [)";
  uint64_t written = 0;
  if (!WriteAll(fd, head.data(), head.size())) return false;
  for (uint64_t i = 0; written < kTargetBytes; ++i) {
    std::string ev =
        (i ? "," : "") + testing::XEvent("kernel", "k" + std::to_string(i % kKernelNames),
                                         i * (kKernelPeriodNs / 1000.0), kKernelDurNs / 1000.0, 0,
                                         7, R"("stream": 7, "correlation": )" + std::to_string(i));
    if (!WriteAll(fd, ev.data(), ev.size()) || !WriteAll(fd, padding.data(), padding.size())) {
      return false;
    }
    written += ev.size() + padding.size();
    ++*events;
  }
  std::string tail = "]}";
  return WriteAll(fd, tail.data(), tail.size());
}

void RunSparseTrace() {
  testing::TempDir dir;
  std::string fifo = dir.path() + "/big.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  int result_pipe[2];
  ASSERT_EQ(::pipe(result_pipe), 0);
  // Fork before any thread exists here, so the child is a clean copy.
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(result_pipe[0]);
    ChildMain(fifo, result_pipe[1]);
  }
  ::close(result_pipe[1]);
  int fd = ::open(fifo.c_str(), O_WRONLY);  // waits for the child to open it
  ASSERT_GE(fd, 0);
  uint64_t events_written = 0;
  bool wrote = WriteSparseTrace(fd, &events_written);
  ::close(fd);
  ChildResult r;
  bool got = ReadAll(result_pipe[0], reinterpret_cast<char*>(&r), sizeof(r));
  ::close(result_pipe[0]);
  int status = 0;
  struct rusage usage {};
  ASSERT_EQ(::wait4(child, &status, 0, &usage), child);
  ASSERT_TRUE(wrote);
  ASSERT_TRUE(got) << "the child died before reporting (status " << status << ")";
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(r.ok, 1);

  // The numbers: every event read, every kernel linked and timed exactly.
  EXPECT_EQ(r.truncated, 0);
  EXPECT_EQ(r.rows, events_written);
  EXPECT_EQ(r.gpu_rows, events_written);
  EXPECT_GE(r.bytes_read, kTargetBytes);
  const int64_t n = static_cast<int64_t>(events_written);
  EXPECT_EQ(r.busy_ns, n * kKernelDurNs);
  EXPECT_EQ(r.span_ns, (n - 1) * kKernelPeriodNs + kKernelDurNs);
  EXPECT_EQ(r.distinct_kernels, static_cast<uint64_t>(kKernelNames));

  // Memory: bounded growth, whatever the trace size.
  const int64_t grown_kb = r.hwm_end_kb - r.rss_start_kb;
  std::printf("%llu MB of trace, %llu events: peak RSS grew %lld kB (child ru_maxrss %ld kB)\n",
              static_cast<unsigned long long>(kTargetBytes >> 20),
              static_cast<unsigned long long>(events_written), static_cast<long long>(grown_kb),
              usage.ru_maxrss);
  EXPECT_LT(grown_kb, kMaxGrowthKb)
      << "peak RSS of the reading process grew " << grown_kb << " kB over " << (kTargetBytes >> 20)
      << " MB of trace (ru_maxrss " << usage.ru_maxrss << " kB)";
  EXPECT_LT(grown_kb * 1024, static_cast<int64_t>(kTargetBytes / 4));
}

#if defined(VIGIL_MULTI_GB_TRACE)
TEST(LargeTraceTest, MultiGigabyteSparseTraceReadWithBoundedMemory) { RunSparseTrace(); }
#else
TEST(LargeTraceTest, SparseTraceReadWithBoundedMemory) { RunSparseTrace(); }
#endif

}  // namespace
}  // namespace vigil::trace
