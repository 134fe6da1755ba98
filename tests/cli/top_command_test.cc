// SPDX-License-Identifier: Apache-2.0
// `vigil top` and `vigil metrics` on a pseudo-terminal (forkpty) against the real vigild:
// - with the fake libnvidia-ml.so.1 (tests/fakes) the TEMP column shows the die temperature the
//   fake's script sets (it once always said "-"); the script puts this test on the GPU, so it
//   shows up as a GPU process with its GPU memory and SM share (nvmlDeviceGetProcessUtilization)
//   and as a process of interest with CPU and RSS;
// - the keys: `?` shows the help, `m` re-sorts (shown on the key line), `q` quits and restores
//   the terminal; at 60 and 80 columns no line is wider than the terminal;
// - with no GPU backend a line says there is none;
// - `vigil metrics` fits 60 and 100 columns, and --wide or a pipe prints whole rows.
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "vigild_process.h"

namespace vigil::testing {
namespace {

constexpr auto kDeadline = std::chrono::seconds(60);

constexpr const char* kScript = R"(gpus 1
driver 550.54.15
gpu 0 name NVIDIA H100 80GB HBM3
gpu 0 uuid GPU-aaaaaaaa-0000-0000-0000-000000000000
gpu 0 util 90
gpu 0 mem_total 85899345920
gpu 0 mem_used 42949672960
gpu 0 power_mw 500000
gpu 0 temp 67
gpu 0 mem_temp 73
gpu 0 procs PID:1073741824:37
)";

struct Pty {
  int master = -1;
  pid_t pid = -1;
  std::string out;
};

// Starts `vigil ARGS...` on a new pseudo-terminal `cols` wide.
Pty Start(const std::vector<std::string>& args, int cols) {
  Pty p;
  winsize ws{};
  ws.ws_row = 50;
  ws.ws_col = static_cast<unsigned short>(cols);
  p.pid = ::forkpty(&p.master, nullptr, nullptr, &ws);
  if (p.pid == 0) {
    const std::string vigil = std::string(VIGIL_BIN_DIR) + "/vigil";
    std::vector<char*> argv = {const_cast<char*>(vigil.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(vigil.c_str(), argv.data());
    ::_exit(127);
  }
  return p;
}

// Appends the terminal's output until `want` appears after `from`, EOF or the deadline.
bool ReadUntil(Pty& p, const std::string& want, size_t from = 0) {
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (p.out.find(want, from) == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{p.master, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(p.master, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return p.out.find(want, from) != std::string::npos;
    p.out.append(buf, static_cast<size_t>(n));
  }
  return true;
}

// Exit code of the child after EOF on its terminal; SIGKILLed past the deadline (-1).
int Finish(Pty& p) {
  ReadUntil(p, std::string(1, '\0'));
  ::close(p.master);
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(p.pid, &status, WNOHANG) == p.pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    ::poll(nullptr, 0, 10);
  }
  ::kill(p.pid, SIGKILL);
  ::waitpid(p.pid, nullptr, 0);
  return -1;
}

// The last frame drawn (after the last clear-screen), without the terminal's carriage returns.
std::string LastFrame(const std::string& out, size_t end = std::string::npos) {
  const size_t clear = out.rfind("\x1b[2J", end);
  std::string frame;
  for (size_t i = clear == std::string::npos ? 0 : clear + 4; i < std::min(end, out.size()); ++i) {
    if (out[i] != '\r') frame += out[i];
  }
  return frame;
}

size_t WidestLine(const std::string& text) {
  size_t widest = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    // Escapes drawn at the end of the view are not columns.
    const std::string line = text.substr(start, end - start);
    if (line.find('\x1b') == std::string::npos) widest = std::max(widest, line.size());
    start = end + 1;
  }
  return widest;
}

class TopCommandTest : public ::testing::Test {
 protected:
  void StartWithFakeNvml() {
    const std::string script = daemon_.dir() + "/nvml.script";
    // The GPU's process is this test: the daemon then watches it as a process of interest.
    std::string text = kScript;
    text.replace(text.find("PID"), 3, std::to_string(::getpid()));
    ASSERT_TRUE(WriteFileAtomic(script, text).ok());
    setenv("FAKE_NVML_SCRIPT", script.c_str(), 1);
    ASSERT_TRUE(daemon_.Spawn({"--interval", "1s", "--gpu-backend", "nvml", "--nvml-library",
                               std::string(VIGIL_FAKE_NVML_DIR) + "/libnvidia-ml.so.1"}));
    ASSERT_TRUE(daemon_.WaitHealthy()) << daemon_.Log();
    const auto deadline = std::chrono::steady_clock::now() + kDeadline;
    // The first GPU tick, and the first process tick after it (the GPU collector watches the pid).
    while (daemon_.Get("/metrics").body.find("vigil_process_resident_memory_bytes{") ==
           std::string::npos) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << daemon_.Log();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  VigildProcess daemon_;
};

TEST_F(TopCommandTest, FakeNvmlTemperatureAndGpuProcessOnALiveTerminal) {
  StartWithFakeNvml();
  Pty p = Start({"top", "--interval", "1s", "--host", daemon_.rpc_target()}, 120);
  ASSERT_TRUE(ReadUntil(p, "keys: c cpu")) << p.out;
  std::string frame = LastFrame(p.out);
  EXPECT_NE(frame.find("67 C"), std::string::npos) << frame;  // The die, not "-".
  EXPECT_EQ(frame.find("73 C"), std::string::npos) << frame;  // Not the memory sensor.
  // The GPU's process with its GPU memory, and as a process of interest with CPU and RSS.
  const std::string pid = std::to_string(::getpid());
  const size_t gpu_procs = frame.find("GPU MEM");
  ASSERT_NE(gpu_procs, std::string::npos) << frame;
  EXPECT_NE(frame.find(pid, gpu_procs), std::string::npos) << frame;
  EXPECT_NE(frame.find("1.0 GiB  37.0%", gpu_procs), std::string::npos) << frame;  // SM share.
  const size_t procs = frame.find("PID  USER");
  ASSERT_NE(procs, std::string::npos) << frame;
  const size_t row = frame.find(pid, procs);
  ASSERT_LT(row, gpu_procs) << frame;
  const std::string line = frame.substr(row, frame.find('\n', row) - row);
  // RSS of this test binary, within a factor of two of what its own statm says now.
  const size_t mib = line.find(" MiB");
  ASSERT_NE(mib, std::string::npos) << line;
  const double shown = std::stod(line.substr(line.rfind(' ', mib - 1) + 1)) * (1 << 20);
  long pages = 0;
  long resident = 0;
  FILE* statm = std::fopen("/proc/self/statm", "r");
  ASSERT_NE(statm, nullptr);
  ASSERT_EQ(std::fscanf(statm, "%ld %ld", &pages, &resident), 2);
  std::fclose(statm);
  const double actual = static_cast<double>(resident) * static_cast<double>(::getpagesize());
  EXPECT_GT(shown, actual / 2) << line;
  EXPECT_LT(shown, actual * 2) << line;
  EXPECT_NE(line.find("gpu"), std::string::npos) << line;  // Why it is watched.
  EXPECT_NE(frame.find("sort: cpu"), std::string::npos) << frame;

  size_t mark = p.out.size();
  ASSERT_EQ(::write(p.master, "?", 1), 1);
  ASSERT_TRUE(ReadUntil(p, "q  quit", mark)) << p.out.substr(mark);
  mark = p.out.size();
  ASSERT_EQ(::write(p.master, "m", 1), 1);
  ASSERT_TRUE(ReadUntil(p, "sort: mem", mark)) << p.out.substr(mark);
  EXPECT_EQ(LastFrame(p.out).find("q  quit"), std::string::npos) << "help not closed";
  ASSERT_EQ(::write(p.master, "q", 1), 1);
  const int code = Finish(p);
  EXPECT_EQ(code, 0) << p.out;
  const size_t leave = p.out.rfind("\x1b[?1049l");
  ASSERT_NE(leave, std::string::npos) << "the terminal was not restored";
  EXPECT_GT(leave, p.out.rfind("\x1b[2J"));
}

TEST_F(TopCommandTest, NarrowTerminalsGetLinesThatFit) {
  StartWithFakeNvml();
  for (int cols : {60, 80}) {
    Pty p = Start({"top", "--host", daemon_.rpc_target()}, cols);
    ASSERT_TRUE(ReadUntil(p, "q quit")) << p.out;
    ASSERT_TRUE(ReadUntil(p, "\n", p.out.rfind("q quit"))) << p.out;
    const std::string frame = LastFrame(p.out);
    EXPECT_LE(WidestLine(frame), static_cast<size_t>(cols)) << cols << "\n" << frame;
    EXPECT_NE(frame.find("67 C"), std::string::npos) << cols << "\n" << frame;
    EXPECT_NE(frame.find("GPU MEM"), std::string::npos) << cols << "\n" << frame;
    ASSERT_EQ(::write(p.master, "q", 1), 1);
    EXPECT_EQ(Finish(p), 0) << p.out;
  }
}

TEST_F(TopCommandTest, SaysSoWhenTheHostHasNoGpu) {
  ASSERT_TRUE(daemon_.Spawn({"--interval", "1s", "--gpu-backend", "none"}));
  ASSERT_TRUE(daemon_.WaitHealthy()) << daemon_.Log();
  std::string out;
  EXPECT_EQ(RunVigilCli("top --once --host " + daemon_.rpc_target(), &out), 0) << out;
  EXPECT_NE(out.find("GPU     none reported by this host"), std::string::npos) << out;
}

TEST_F(TopCommandTest, MetricsFitTheTerminalUnlessWideOrPiped) {
  StartWithFakeNvml();
  const std::string selector = "vigil_gpu_memory_used_bytes";
  for (int cols : {60, 100}) {
    Pty p = Start({"metrics", selector, "--host", daemon_.rpc_target()}, cols);
    EXPECT_EQ(Finish(p), 0) << p.out;
    const std::string text = LastFrame(p.out);
    EXPECT_LE(WidestLine(text), static_cast<size_t>(cols)) << text;
    EXPECT_NE(text.find("vigil_gpu_memory_used_bytes{"), std::string::npos) << text;
    EXPECT_NE(text.find("42949672960"), std::string::npos) << text;
    EXPECT_NE(text.find("--wide prints them whole"), std::string::npos) << text;
  }
  Pty wide = Start({"metrics", selector, "--wide", "--host", daemon_.rpc_target()}, 60);
  EXPECT_EQ(Finish(wide), 0) << wide.out;
  EXPECT_NE(wide.out.find("GPU-aaaaaaaa-0000-0000-0000-000000000000"), std::string::npos)
      << wide.out;
  std::string piped;
  EXPECT_EQ(RunVigilCli("metrics " + selector + " --host " + daemon_.rpc_target(), &piped), 0);
  EXPECT_NE(piped.find("GPU-aaaaaaaa-0000-0000-0000-000000000000"), std::string::npos) << piped;
  EXPECT_EQ(piped.find("--wide"), std::string::npos) << piped;
}

}  // namespace
}  // namespace vigil::testing
