// SPDX-License-Identifier: Apache-2.0
// What Python frames add to vigil snoop's per-call cost: Debian's CPython 3.11 makes cudaMalloc
// + cudaFree pairs on the fake CUDA runtime through ctypes (snoop_python_calls.py) from 1 or 30
// nested Python frames, untraced, traced with native stacks only, and traced with Python
// frames (the BPF program walks the thread's frame chain at each allocation's return). Each
// pair is one stack taken; ns_per_call is the calling thread's CPU time per pair, and
// added_ns its excess over the untraced run at the same depth. Needs root and
// /usr/bin/python3.11; skips otherwise.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <utility>

#include <benchmark/benchmark.h>

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
  caller.Measure(kPairs / 10, depth);  // Warm up (and let the session see the thread).
  if (session) (void)session->Poll(std::chrono::milliseconds(0));
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
