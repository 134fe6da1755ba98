// SPDX-License-Identifier: Apache-2.0
// What sampling costs the sampled: a forked busy process counts work chunks in shared memory
// while it is left alone, sampled by vigil's sampler (frame pointers, DWARF stack copies) and
// by Debian's `perf record` (-g and --call-graph dwarf) at the same frequency, in alternating
// rounds of the same length. Prints the work rate per wall second and per second of the
// target's own CPU time (which includes the sampling interrupts charged to it), the slowdown
// against the unsampled rounds, and the sampler's own CPU. Then symbolisation throughput:
// samples captured once, turned into stacks again and again by a fresh StackBuilder.
//   profile_overhead [--seconds S] [--rounds N] [--frequency HZ]
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "profile/dwarf_unwinder.h"
#include "profile/perf_sampler.h"
#include "profile/profile.h"
#include "profile/profile_session.h"
#include "profile/stack_builder.h"
#include "profile/symbolizer.h"

namespace {

volatile uint64_t g_sink = 0;

__attribute__((noinline)) void WorkChunk() {
  for (int i = 0; i < 200000; ++i) {
    g_sink = g_sink * 2862933555777941757ULL + static_cast<uint64_t>(i);
  }
}

__attribute__((noinline)) void Worker(std::atomic<uint64_t>* chunks) {
  for (;;) {
    WorkChunk();
    chunks->fetch_add(1, std::memory_order_relaxed);
  }
}

double CpuSecondsOf(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) return 0;
  std::vector<std::string> f;
  size_t pos = paren + 2;
  while (pos < text.size()) {
    size_t next = text.find(' ', pos);
    if (next == std::string::npos) next = text.size();
    f.push_back(text.substr(pos, next - pos));
    pos = next + 1;
  }
  // f[0] is field 3 (state): utime is field 14, stime 15.
  return (std::stod(f[11]) + std::stod(f[12])) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double SelfCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Round {
  double chunks_per_s = 0;
  double chunks_per_cpu_s = 0;
  double sampler_cpu = 0;  // Sampler CPU seconds per wall second.
  uint64_t samples = 0;
};

bool HavePerf() { return access("/usr/bin/perf", X_OK) == 0; }

// Runs `perf record` on `pid` for `seconds`; returns its CPU seconds (children rusage).
double RunPerf(int pid, double seconds, int hz, bool dwarf, uint64_t* samples) {
  const std::string out = "/tmp/vigil-bench-perf-" + std::to_string(getpid()) + ".data";
  const std::string cmd = "/usr/bin/perf record -q -F " + std::to_string(hz) +
                          (dwarf ? " --call-graph dwarf" : " -g") + " -p " + std::to_string(pid) +
                          " -o " + out + " -- sleep " + std::to_string(seconds) +
                          " >/dev/null 2>&1";
  rusage before{}, after{};
  getrusage(RUSAGE_CHILDREN, &before);
  if (std::system(cmd.c_str()) != 0) {
    std::fprintf(stderr, "perf record failed\n");
  }
  getrusage(RUSAGE_CHILDREN, &after);
  *samples = 0;
  if (FILE* p = popen(("/usr/bin/perf report -i " + out +
                       " --stats 2>/dev/null | grep -m1 'SAMPLE events' | awk '{print $3}'")
                          .c_str(),
                      "r")) {
    unsigned long long n = 0;
    if (std::fscanf(p, "%llu", &n) == 1) *samples = n;
    pclose(p);
  }
  unlink(out.c_str());
  auto secs = [](const rusage& u) {
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  return secs(after) - secs(before);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  int rounds = 3, hz = 99;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--seconds") == 0) seconds = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--frequency") == 0) hz = std::atoi(argv[i + 1]);
  }
  auto* chunks = static_cast<std::atomic<uint64_t>*>(
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  new (chunks) std::atomic<uint64_t>(0);
  const pid_t child = fork();
  if (child == 0) {
    Worker(chunks);
  }
  usleep(200000);
  std::vector<std::string> modes = {"none", "vigil-fp", "vigil-dwarf"};
  if (HavePerf()) {
    modes.push_back("perf-fp");
    modes.push_back("perf-dwarf");
  } else {
    std::printf("perf not installed (Debian package linux-perf): perf rows skipped\n");
  }
  std::map<std::string, std::vector<Round>> results;
  std::vector<vigil::RawSample> captured_fp, captured_dwarf;
  for (int r = 0; r < rounds; ++r) {
    for (const std::string& mode : modes) {
      const uint64_t c0 = chunks->load();
      const double cpu0 = CpuSecondsOf(child), self0 = SelfCpuSeconds();
      const auto t0 = std::chrono::steady_clock::now();
      Round round;
      double perf_cpu = 0;
      if (mode == "none") {
        usleep(static_cast<useconds_t>(seconds * 1e6));
      } else if (mode.rfind("vigil", 0) == 0) {
        vigil::ProfileSessionOptions o;
        o.pids = {child};
        o.duration = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
        o.frequency_hz = hz;
        o.unwind =
            mode == "vigil-dwarf" ? vigil::UnwindMode::kDwarf : vigil::UnwindMode::kFramePointers;
        auto result = vigil::RunProfileSession(o);
        if (!result.ok()) {
          std::fprintf(stderr, "%s: %s\n", mode.c_str(), result.status().message().c_str());
          return 1;
        }
        round.samples = result->samples;
      } else {
        perf_cpu = RunPerf(child, seconds, hz, mode == "perf-dwarf", &round.samples);
      }
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double done = static_cast<double>(chunks->load() - c0);
      round.chunks_per_s = done / wall;
      round.chunks_per_cpu_s = done / std::max(1e-9, CpuSecondsOf(child) - cpu0);
      round.sampler_cpu = (SelfCpuSeconds() - self0 + perf_cpu) / wall;
      results[mode].push_back(round);
    }
  }
  // Capture samples once for the symbolisation throughput.
  for (bool dwarf : {false, true}) {
    vigil::SamplerOptions so;
    so.pids = {child};
    so.frequency_hz = 999;
    so.copy_user_stack = dwarf;
    auto sampler = vigil::PerfSampler::Start(so);
    if (!sampler.ok()) return 1;
    auto& into = dwarf ? captured_dwarf : captured_fp;
    (void)(*sampler)->Run(std::chrono::steady_clock::now() + std::chrono::seconds(2),
                          [&](const vigil::RawSample& s) { into.push_back(s); });
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);

  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
  };
  auto stat = [&](const std::string& mode, double Round::*field) {
    std::vector<double> v;
    for (const Round& r : results[mode]) v.push_back(r.*field);
    return median(v);
  };
  const double base_wall = stat("none", &Round::chunks_per_s);
  const double base_cpu = stat("none", &Round::chunks_per_cpu_s);
  std::printf("busy process at %d Hz, %d rounds of %.1f s each (medians)\n", hz, rounds, seconds);
  std::printf("%-12s %12s %9s %14s %9s %12s %8s\n", "sampler", "chunks/s", "slowdown",
              "chunks/cpu-s", "slowdown", "sampler-cpu", "samples");
  for (const std::string& mode : modes) {
    const double w = stat(mode, &Round::chunks_per_s), c = stat(mode, &Round::chunks_per_cpu_s);
    std::vector<double> samples;
    for (const Round& r : results[mode]) samples.push_back(static_cast<double>(r.samples));
    std::printf("%-12s %12.1f %8.2f%% %14.1f %8.2f%% %11.2f%% %8.0f\n", mode.c_str(), w,
                100.0 * (1 - w / base_wall), c, 100.0 * (1 - c / base_cpu),
                100.0 * stat(mode, &Round::sampler_cpu), median(samples));
  }
  // Symbolisation: each captured sample turned into frames by a fresh builder (cold caches
  // once, then warm), DWARF samples unwound too.
  for (bool dwarf : {false, true}) {
    const auto& samples = dwarf ? captured_dwarf : captured_fp;
    if (samples.empty()) continue;
    // The process is gone: symbolise against a live copy of the same program instead.
    const pid_t again = fork();
    if (again == 0) Worker(chunks);
    usleep(100000);
    std::vector<vigil::RawSample> remapped = samples;
    for (auto& s : remapped) s.pid = s.tid = again;
    vigil::Symbolizer symbolizer;
    vigil::DwarfUnwinder unwinder;
    vigil::StackBuilderOptions bo;
    bo.python = false;
    vigil::StackBuilder builder(bo, &symbolizer, dwarf ? &unwinder : nullptr);
    vigil::Profile profile;
    const auto t0 = std::chrono::steady_clock::now();
    builder.Add(remapped.front(), &profile);
    const double cold =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int passes = 5;
    const auto t1 = std::chrono::steady_clock::now();
    for (int p = 0; p < passes; ++p) {
      for (const auto& s : remapped) builder.Add(s, &profile);
    }
    const double warm =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    std::printf("stacks built (%s): %.0f samples/s warm (%zu samples x %d), first sample %.1f ms\n",
                dwarf ? "dwarf unwind + symbolise" : "frame pointers, symbolise",
                static_cast<double>(remapped.size() * passes) / warm, remapped.size(), passes,
                cold * 1000);
    kill(again, SIGKILL);
    waitpid(again, nullptr, 0);
  }
  return 0;
}
