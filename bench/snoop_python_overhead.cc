// SPDX-License-Identifier: Apache-2.0
// What Python frames add to vigil snoop's per-call cost: Debian's CPython 3.11 makes cudaMalloc
// + cudaFree pairs on the fake CUDA runtime through ctypes (snoop_python_calls.py) from 1 or 30
// nested Python frames, untraced, traced with native stacks only, and traced with Python
// frames (the BPF program walks the thread's frame chain at each allocation's return). Each
// pair is one stack taken; ns_per_call is the calling thread's CPU time per pair, and
// added_ns its excess over the untraced run at the same depth (most of it the uprobe traps,
// which a loaded machine makes noisy). return_prog_ns is the kernel's own run time of the
// return program per run (BPF_ENABLE_STATS, on only while this runs): what the stack and the
// Python walk cost, without the traps. Needs root and /usr/bin/python3.11; skips otherwise.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include <benchmark/benchmark.h>
#include <bpf/bpf.h>

#include "snoop/snoop_session.h"

namespace {

constexpr char kPython[] = "/usr/bin/python3.11";
constexpr int kPairs = 100'000;

// The Python side, over pipes; every read has a deadline.
class Caller {
 public:
  bool Start() {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) return false;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      execl(kPython, kPython, SNOOP_PYTHON_CALLS, FAKE_CUDART, static_cast<char*>(nullptr));
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_ = in[1];
    from_ = out[0];
    return pid_ > 0 && ReadLine().rfind("ready ", 0) == 0;
  }
  ~Caller() {
    if (to_ >= 0) close(to_);  // An empty line: the script ends.
    if (from_ >= 0) close(from_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  int pid() const { return pid_; }
  // CPU ns per pair for `n` pairs at `depth`; negative on failure.
  double Measure(int n, int depth) {
    std::string line = std::to_string(n) + " " + std::to_string(depth) + "\n";
    if (write(to_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) return -1;
    std::string reply = ReadLine();
    return reply.empty() ? -1 : std::stod(reply);
  }

 private:
  std::string ReadLine() {
    std::string line;
    char c = 0;
    while (true) {
      pollfd p{from_, POLLIN, 0};
      if (poll(&p, 1, 120'000) <= 0 || read(from_, &c, 1) != 1) return "";
      if (c == '\n') return line;
      line.push_back(c);
    }
  }
  int pid_ = -1;
  int to_ = -1;
  int from_ = -1;
};

std::map<int, double> g_untraced_ns;  // By depth.

// The newest loaded program called `name` (the session just started loaded it), or -1.
int NewestProgram(const char* name) {
  uint32_t id = 0;
  uint32_t newest = 0;
  while (bpf_prog_get_next_id(id, &id) == 0) {
    int fd = bpf_prog_get_fd_by_id(id);
    if (fd < 0) continue;
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && std::strcmp(info.name, name) == 0) {
      newest = id;
    }
    close(fd);
  }
  return newest == 0 ? -1 : bpf_prog_get_fd_by_id(newest);
}

// (run time ns, runs) of program `fd` so far.
std::pair<uint64_t, uint64_t> RunStats(int fd) {
  bpf_prog_info info{};
  uint32_t len = sizeof(info);
  if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) != 0) return {0, 0};
  return {info.run_time_ns, info.run_cnt};
}

// mode 0: untraced; 1: traced, native stacks only; 2: traced with Python frames.
void BM_PythonMallocFree(benchmark::State& state) {
  const int mode = static_cast<int>(state.range(0));
  const int depth = static_cast<int>(state.range(1));
  if (access(kPython, X_OK) != 0) {
    state.SkipWithError("needs /usr/bin/python3.11 (Debian package python3.11)");
    return;
  }
  Caller caller;
  if (!caller.Start()) {
    state.SkipWithError("the Python caller did not start");
    return;
  }
  std::unique_ptr<vigil::snoop::SnoopSession> session;
  if (mode > 0) {
    vigil::snoop::SnoopOptions o;
    o.pids = {caller.pid()};
    o.event_budget_per_second = 0;  // Measure the probes, not the sampler.
    o.python_frames = mode == 2;
    auto s = vigil::snoop::SnoopSession::Start(o);
    if (!s.ok()) {
      state.SkipWithError(s.status().ToString().c_str());
      return;
    }
    session = std::move(*s);
  }
  int stats_fd = session ? bpf_enable_stats(BPF_STATS_RUN_TIME) : -1;
  int return_prog = session ? NewestProgram("vs_return") : -1;
  caller.Measure(kPairs / 10, depth);  // Warm up (and let the session see the thread).
  if (session) (void)session->Poll(std::chrono::milliseconds(0));
  const auto before = RunStats(return_prog);
  double total = 0;
  for (auto _ : state) {
    double ns = caller.Measure(kPairs, depth);
    if (ns < 0) {
      state.SkipWithError("the Python caller stopped answering");
      return;
    }
    state.SetIterationTime(ns * kPairs / 1e9);
    total += ns;
  }
  const auto after = RunStats(return_prog);
  if (after.second > before.second) {
    state.counters["return_prog_ns"] = static_cast<double>(after.first - before.first) /
                                       static_cast<double>(after.second - before.second);
  }
  if (return_prog >= 0) close(return_prog);
  if (stats_fd >= 0) close(stats_fd);
  const double ns = total / static_cast<double>(state.iterations());
  state.counters["ns_per_call"] = ns;
  if (mode == 0) {
    g_untraced_ns[depth] = ns;
  } else if (g_untraced_ns.count(depth)) {
    state.counters["added_ns"] = ns - g_untraced_ns[depth];
  }
  if (session) {
    vigil::snoop::SessionSummary s = session->Snapshot();
    state.counters["python_frames"] = s.python_frames ? 1 : 0;
  }
}
BENCHMARK(BM_PythonMallocFree)
    ->ArgNames({"mode", "depth"})
    ->ArgsProduct({{0, 1, 2}, {1, 30}})
    ->Iterations(5)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
