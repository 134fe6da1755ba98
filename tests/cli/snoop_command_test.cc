// SPDX-License-Identifier: Apache-2.0
// `vigil snoop` as a user runs it, on the built binary with the fake CUDA workload:
// - on a pseudo-terminal (forkpty) with `-- COMMAND`: the live view is drawn on the alternate
//   screen, the screen is restored, then the summary with the workload's exact counts and the
//   command's exit status;
// - without a terminal with --pid, ended by SIGINT: the summary, --json and --chrome-trace hold
//   the same exact counts;
// - as a user without privileges: one line saying what is needed, exit status 1.
// Root only where probes are loaded (CI runs as root).
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../snoop/workload_plan.h"

namespace {

namespace plan = vigil::snoop::plan;

const std::string kVigil = std::string(VIGIL_BIN_DIR) + "/vigil";
const std::string kWorkload = SNOOP_WORKLOAD;
const std::string kSyncEnv = "FAKE_CUDA_SYNC_US=" + std::to_string(plan::kSyncMicros);
constexpr auto kDeadline = std::chrono::seconds(60);

[[noreturn]] void Exec(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(kVigil.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  putenv(const_cast<char*>(kSyncEnv.c_str()));
  ::execv(kVigil.c_str(), argv.data());
  ::_exit(127);
}

// Exit code of a reaped child, 128 + N for signal N, -1 when it did not end by the deadline.
int Wait(pid_t pid) {
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (r < 0) return -1;
    ::poll(nullptr, 0, 10);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

// Appends what `fd` has to *out until it holds `want` (after offset `from`), EOF, or the
// deadline. True when `want` was seen.
bool ReadUntil(int fd, const std::string& want, std::string* out, size_t from = 0) {
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (out->find(want, from) == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out->find(want, from) != std::string::npos;  // EIO: the child is gone.
    out->append(buf, static_cast<size_t>(n));
  }
  return true;
}

void ReadToEnd(int fd, std::string* out) { ReadUntil(fd, std::string(1, '\0'), out); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The summary lines every run of the "all" scenario must print (counts from workload_plan.h).
void ExpectExactSummary(const std::string& out) {
  EXPECT_NE(out.find("pid "), std::string::npos) << out;
  EXPECT_NE(out.find(" snoop_workload"), std::string::npos) << out;
  EXPECT_NE(out.find("  launches: " + std::to_string(plan::kLaunchesTotal) + " (" +
                     std::to_string(plan::kRuntimeGraphLaunches + plan::kDriverGraphLaunches) +
                     " graph launches)\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("    " + std::to_string(plan::kGemmLaunches) + "  kernels::gemm_bf16(float*)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  syncs: " + std::to_string(plan::kSyncsTotal) + " calls, "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  memory (driver): " + std::to_string(plan::kAllDevicesAllocations) +
                     " allocations, " + std::to_string(plan::kAllDevicesFrees) + " frees"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("    device 1: " + std::to_string(plan::kDevice1Allocations + 1) +
                     " allocations, " + std::to_string(plan::kDevice1Frees) + " free, "),
            std::string::npos)
      << out;
}

class SnoopCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kVigil)) GTEST_SKIP() << kVigil << " is not built";
  }
  void NeedRoot() {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to load eBPF uprobes (CI runs as root)";
  }
};

TEST_F(SnoopCommandTest, LiveViewOnATerminalThenTheSummaryAndTheCommandsStatus) {
  NeedRoot();
  int master = -1;
  winsize ws{};
  ws.ws_row = 40;
  ws.ws_col = 120;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, &ws);
  ASSERT_GE(pid, 0);
  if (pid == 0) Exec({"snoop", "--", kWorkload});
  std::string out;

  // The workload talks on the same terminal: "ready", then a frame of the live view.
  ASSERT_TRUE(ReadUntil(master, "ready ", &out)) << out;
  ASSERT_TRUE(ReadUntil(master, "LAUNCH/s  TOTAL  PID  KERNEL", &out)) << out;
  const size_t before_run = out.size();
  ASSERT_EQ(::write(master, "run\n", 4), 4);
  ASSERT_TRUE(ReadUntil(master, "done", &out, before_run)) << out;
  // A frame after the run shows the most launched kernel with its total.
  const std::string gemm_row = "  " + std::to_string(plan::kGemmLaunches) + "  ";
  ASSERT_TRUE(ReadUntil(master, "kernels::gemm_bf16(float*)", &out, before_run)) << out;
  ASSERT_EQ(::write(master, "exit\n", 5), 5);
  ReadToEnd(master, &out);
  ::close(master);
  const int code = Wait(pid);

  EXPECT_EQ(code, 0) << out;
  const size_t enter = out.find("\x1b[?1049h");
  const size_t leave = out.rfind("\x1b[?1049l");
  ASSERT_NE(enter, std::string::npos) << "no alternate screen";
  ASSERT_NE(leave, std::string::npos) << "the terminal was not restored";
  EXPECT_LT(enter, leave);
  EXPECT_NE(out.find("\x1b[?25h", leave - 6), std::string::npos) << "cursor left hidden";
  // The terminal turns each "\n" into "\r\n".
  std::string after;
  for (size_t i = leave; i < out.size(); ++i) {
    if (out[i] != '\r') after += out[i];
  }
  EXPECT_EQ(after.find("LAUNCH/s"), std::string::npos) << "a frame after the screen was restored";
  ExpectExactSummary(after);
  EXPECT_NE(after.find("command exited with status 0"), std::string::npos) << after;
  EXPECT_NE(out.find(gemm_row), std::string::npos);
}

TEST_F(SnoopCommandTest, SigintEndsAPidSessionWithTheSummaryJsonAndChromeTrace) {
  NeedRoot();
  // The workload, in its dialogue mode, on pipes.
  int to_workload[2];
  int from_workload[2];
  ASSERT_EQ(::pipe2(to_workload, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(from_workload, O_CLOEXEC), 0);
  pid_t workload = ::fork();
  ASSERT_GE(workload, 0);
  if (workload == 0) {
    ::dup2(to_workload[0], 0);
    ::dup2(from_workload[1], 1);
    putenv(const_cast<char*>(kSyncEnv.c_str()));
    ::execl(kWorkload.c_str(), kWorkload.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(to_workload[0]);
  ::close(from_workload[1]);
  std::string workload_out;
  ASSERT_TRUE(ReadUntil(from_workload[0], "ready ", &workload_out));
  char dir[] = "/tmp/vigil-snoop-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string json = std::string(dir) + "/summary.json";
  const std::string trace = std::string(dir) + "/calls.json";
  // vigil snoop --pid, stdout and stderr on pipes (no terminal).
  int out_pipe[2];
  int err_pipe[2];
  ASSERT_EQ(::pipe2(out_pipe, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(err_pipe, O_CLOEXEC), 0);
  pid_t vigil = ::fork();
  ASSERT_GE(vigil, 0);
  if (vigil == 0) {
    ::setsid();
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    Exec({"snoop", "--pid", std::to_string(workload), "--json", json, "--chrome-trace", trace});
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  std::string err;
  ASSERT_TRUE(ReadUntil(err_pipe[0], "Ctrl-C to stop", &err)) << err;

  ASSERT_EQ(::write(to_workload[1], "run\n", 4), 4);
  ASSERT_TRUE(ReadUntil(from_workload[0], "done", &workload_out));
  ::kill(vigil, SIGINT);
  std::string out;
  ReadToEnd(out_pipe[0], &out);
  ReadToEnd(err_pipe[0], &err);
  const int code = Wait(vigil);
  ASSERT_EQ(::write(to_workload[1], "exit\n", 5), 5);
  const int workload_code = Wait(workload);
  for (int fd : {to_workload[1], from_workload[0], out_pipe[0], err_pipe[0]}) ::close(fd);

  EXPECT_EQ(code, 0) << err;
  EXPECT_EQ(workload_code, 0) << "the workload runs on once the probes are gone";
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << "escapes without a terminal";
  ExpectExactSummary(out);
  nlohmann::json doc = nlohmann::json::parse(ReadFile(json), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << ReadFile(json);
  ASSERT_EQ(doc["processes"].size(), 1u);
  const nlohmann::json& p = doc["processes"][0];
  EXPECT_EQ(p["pid"], workload);
  EXPECT_EQ(p["launches"]["total"], plan::kLaunchesTotal);
  EXPECT_EQ(p["launches"]["by_kernel"][0]["name"], "kernels::gemm_bf16(float*)");
  EXPECT_EQ(p["launches"]["by_kernel"][0]["count"], plan::kGemmLaunches);
  EXPECT_EQ(p["syncs"]["count"], plan::kSyncsTotal);
  EXPECT_EQ(p["memory"]["allocations"], plan::kAllDevicesAllocations);
  EXPECT_EQ(p["memory"]["frees"], plan::kAllDevicesFrees);
  EXPECT_EQ(p["memory"]["outstanding_bytes"], plan::kAllDevicesOutstanding);
  ASSERT_EQ(p["memory"]["by_device"].size(), 2u);
  EXPECT_EQ(p["memory"]["by_device"][0]["device"], 0);
  EXPECT_EQ(p["memory"]["by_device"][0]["outstanding_bytes"], plan::kDeviceOutstanding);
  EXPECT_EQ(p["memory"]["by_device"][0]["peak_bytes"], plan::kDevicePeak);
  EXPECT_EQ(p["memory"]["by_device"][1]["device"], 1);
  EXPECT_EQ(p["memory"]["by_device"][1]["outstanding_bytes"],
            plan::kDevice1Outstanding + plan::kSegmentBytes);
  EXPECT_EQ(p["framework_memory"]["allocations"],
            plan::kFrameworkAllocations + plan::kFrameworkDevice1Allocations);
  EXPECT_EQ(p["framework_memory"]["by_device"][1]["outstanding_bytes"],
            plan::kFrameworkDevice1Outstanding);
  EXPECT_EQ(p["framework_gap_bytes"], plan::kFrameworkGap);
  EXPECT_EQ(p["framework_gap_by_device"][0]["bytes"], plan::kFrameworkGapDevice0);
  EXPECT_EQ(p["framework_gap_by_device"][1]["bytes"], plan::kFrameworkGapDevice1);
  nlohmann::json calls = nlohmann::json::parse(ReadFile(trace), nullptr, false);
  ASSERT_FALSE(calls.is_discarded());
  int launches = 0;
  int syncs = 0;
  for (const nlohmann::json& e : calls["traceEvents"]) {
    if (e["ph"] != "X") continue;
    EXPECT_EQ(e["pid"], workload);
    launches += e["cat"] == "cuda_launch";
    syncs += e["cat"] == "cuda_sync";
  }
  EXPECT_EQ(launches, plan::kLaunchesTotal);
  EXPECT_EQ(syncs, plan::kSyncsTotal);
  std::filesystem::remove_all(dir);
}

// `vigil snoop ARGS --pid W` on pipes for the workload W (in its dialogue mode, idle): the exit
// code and stdout once `end` (a signal, or 0 to let --duration end it) has been applied.
struct IdleRun {
  int code = -1;
  std::string out;
  std::string err;
};

IdleRun RunOnIdleWorkload(std::vector<std::string> args, int end) {
  IdleRun r;
  int to_workload[2];
  int from_workload[2];
  if (::pipe2(to_workload, O_CLOEXEC) != 0 || ::pipe2(from_workload, O_CLOEXEC) != 0) return r;
  pid_t workload = ::fork();
  if (workload == 0) {
    ::dup2(to_workload[0], 0);
    ::dup2(from_workload[1], 1);
    ::execl(kWorkload.c_str(), kWorkload.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(to_workload[0]);
  ::close(from_workload[1]);
  std::string ready;
  int out_pipe[2];
  int err_pipe[2];
  if (ReadUntil(from_workload[0], "ready ", &ready) && ::pipe2(out_pipe, O_CLOEXEC) == 0 &&
      ::pipe2(err_pipe, O_CLOEXEC) == 0) {
    args.push_back("--pid");
    args.push_back(std::to_string(workload));
    pid_t vigil = ::fork();
    if (vigil == 0) {
      ::setsid();
      ::dup2(out_pipe[1], 1);
      ::dup2(err_pipe[1], 2);
      Exec(args);
    }
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    if (ReadUntil(err_pipe[0], "Ctrl-C to stop", &r.err) && end != 0) ::kill(vigil, end);
    ReadToEnd(out_pipe[0], &r.out);
    ReadToEnd(err_pipe[0], &r.err);
    r.code = Wait(vigil);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
  }
  (void)!::write(to_workload[1], "exit\n", 5);
  Wait(workload);
  ::close(to_workload[1]);
  ::close(from_workload[0]);
  return r;
}

TEST_F(SnoopCommandTest, SigtermEndsTheSessionCleanlyWithTheSummary) {
  NeedRoot();

  IdleRun r = RunOnIdleWorkload({"snoop"}, SIGTERM);

  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  launches: 0\n"), std::string::npos) << r.out;
}

TEST_F(SnoopCommandTest, DurationEndsTheSessionByItself) {
  NeedRoot();
  const auto start = std::chrono::steady_clock::now();

  IdleRun r = RunOnIdleWorkload({"snoop", "--duration", "1s"}, 0);

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(" snoop_workload\n"), std::string::npos) << r.out;
  EXPECT_GE(seconds, 1.0);
  EXPECT_LT(seconds, 30.0);
}

TEST_F(SnoopCommandTest, WithoutPrivilegesOneLineAndExitStatus1) {
  // A copy of the CLI the unprivileged user can reach: the build tree may sit in a directory
  // only root can enter (a private temporary clone).
  char tmpl[] = "/tmp/vigil-snoop-nobody-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const std::string vigil = dir + "/vigil";
  std::filesystem::copy_file(kVigil, vigil);
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(vigil.c_str(), 0755), 0);
  int err_pipe[2];
  ASSERT_EQ(::pipe2(err_pipe, O_CLOEXEC), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(err_pipe[1], 2);
    if (geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(126);
    const char* argv[] = {vigil.c_str(), "snoop", "--pid", "1", nullptr};
    ::execv(vigil.c_str(), const_cast<char**>(argv));
    ::_exit(127);
  }
  ::close(err_pipe[1]);
  std::string err;
  ReadToEnd(err_pipe[0], &err);
  ::close(err_pipe[0]);

  EXPECT_EQ(Wait(pid), 1) << err;
  ASSERT_FALSE(err.empty());
  EXPECT_EQ(err.find('\n'), err.size() - 1) << "one line: " << err;
  EXPECT_EQ(err.rfind("vigil snoop", 0), 0u) << err;
  EXPECT_NE(err.find("CAP_BPF"), std::string::npos) << err;
  EXPECT_NE(err.find("root"), std::string::npos) << err;
  std::filesystem::remove_all(dir);
}

TEST_F(SnoopCommandTest, UsageErrorsExit2) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"snoop"},
        std::vector<std::string>{"snoop", "--pid", "1", "--", "true"},
        std::vector<std::string>{"snoop", "--pid", "1", "--duration", "soon"}}) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
      ::dup2(null, 2);
      Exec(args);
    }
    EXPECT_EQ(Wait(pid), 2) << args.size();
  }
}

}  // namespace
