// SPDX-License-Identifier: Apache-2.0
// The `vigil analyze` progress bar as a user sees it: the built binary runs on a pseudo-terminal
// (forkpty) and the bytes it draws are checked: carriage-return frames whose percentage grows to
// 100%, then the line cleared. With stderr not a terminal nothing of the bar is written.
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

const std::string kVigil = std::string(VIGIL_BIN_DIR) + "/vigil";
const std::string kTrace = std::string(VIGIL_TEST_DATA_DIR) + "/traces/nccl_sampled_rank-0.json.gz";
const std::string kClear = "\r" + std::string(60, ' ') + "\r";

struct RunResult {
  int exit_code = -1;
  std::string out;  // the terminal's bytes, or stderr when not on a terminal
  double seconds = 0;
};

[[noreturn]] void Exec(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(kVigil.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(kVigil.c_str(), argv.data());
  ::_exit(127);
}

int Wait(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// stdin, stdout and stderr on one pseudo-terminal.
RunResult RunOnPty(const std::vector<std::string>& args) {
  RunResult r;
  auto start = std::chrono::steady_clock::now();
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) return r;
  if (pid == 0) Exec(args);
  char buf[4096];
  while (true) {
    ssize_t n = ::read(master, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EIO once the child closed the terminal
    r.out.append(buf, static_cast<size_t>(n));
  }
  ::close(master);
  r.exit_code = Wait(pid);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// stdout to /dev/null, stderr to a file: neither is a terminal.
RunResult RunWithoutTerminal(const std::vector<std::string>& args) {
  RunResult r;
  char path[] = "/tmp/vigil-progress-XXXXXX";
  int fd = ::mkstemp(path);
  if (fd < 0) return r;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();  // no controlling terminal either
    FILE* null = std::fopen("/dev/null", "w");
    if (null != nullptr) ::dup2(::fileno(null), 1);
    ::dup2(fd, 2);
    Exec(args);
  }
  r.exit_code = pid < 0 ? -1 : Wait(pid);
  std::FILE* f = std::fopen(path, "r");
  char buf[4096];
  size_t n = 0;
  while (f != nullptr && (n = std::fread(buf, 1, sizeof(buf), f)) > 0) r.out.append(buf, n);
  if (f != nullptr) std::fclose(f);
  ::close(fd);
  ::unlink(path);
  return r;
}

// Percentages of the frames drawn, in order.
std::vector<int> Frames(const std::string& out) {
  std::vector<int> pct;
  static const std::regex kFrame(R"(\rreading traces \[(#*) *\] +(\d+)%)");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), kFrame); it != std::sregex_iterator();
       ++it) {
    pct.push_back(std::atoi((*it)[2].str().c_str()));
    EXPECT_EQ((*it)[1].length(), static_cast<size_t>(pct.back() * 30 / 100)) << "bar length";
  }
  return pct;
}

void ExpectBarDrawnAndCleared(const std::string& out) {
  std::vector<int> pct = Frames(out);
  ASSERT_FALSE(pct.empty()) << "no progress bar in: " << out;
  for (size_t i = 1; i < pct.size(); ++i) EXPECT_GE(pct[i], pct[i - 1]) << "frame " << i;
  EXPECT_EQ(pct.back(), 100);
  // The line is cleared after the last frame, and nothing of the bar follows.
  size_t clear = out.rfind(kClear);
  ASSERT_NE(clear, std::string::npos) << "bar not cleared";
  EXPECT_GT(clear, out.rfind("reading traces"));
}

class AnalyzeProgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kVigil)) GTEST_SKIP() << kVigil << " is not built";
  }
};

TEST_F(AnalyzeProgressTest, AlwaysDrawsTheBarOnATerminalUpTo100PercentThenClearsIt) {
  RunResult r = RunOnPty({"analyze", kTrace, "--quiet", "--progress=always"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  ExpectBarDrawnAndCleared(r.out);
}

TEST_F(AnalyzeProgressTest, AutoStaysSilentOnATerminalForAReadUnderASecond) {
  RunResult r = RunOnPty({"analyze", kTrace, "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  if (r.seconds >= 1.0) GTEST_SKIP() << "the read took " << r.seconds << " s on this machine";
  EXPECT_EQ(r.out.find("reading traces"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\r'), std::string::npos);
}

TEST_F(AnalyzeProgressTest, NeverDrawsNothingOnATerminal) {
  RunResult r = RunOnPty({"analyze", kTrace, "--quiet", "--progress=never"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("reading traces"), std::string::npos) << r.out;
}

TEST_F(AnalyzeProgressTest, NothingOfTheBarWithoutATerminal) {
  RunResult r = RunWithoutTerminal({"analyze", kTrace, "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("reading traces"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\r'), std::string::npos);
}

// A read over a second: the bar appears on its own on a terminal, and still not without one.
TEST_F(AnalyzeProgressTest, LongReadShowsTheBarOnATerminalOnly) {
  const std::string big = std::string(VIGIL_SHARED_DIR) +
                          "/traces/HolisticTraceAnalysis/tests/data/mtia_trace_single_rank/"
                          "mtia_rank_0.json.gz";
  if (!std::filesystem::exists(big)) GTEST_SKIP() << "shared trace set absent: " << big;
  RunResult tty = RunOnPty({"analyze", big, "--quiet", "--threads", "1"});
  ASSERT_EQ(tty.exit_code, 0) << tty.out;
  RunResult plain = RunWithoutTerminal({"analyze", big, "--quiet", "--threads", "1"});
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  EXPECT_EQ(plain.out.find("reading traces"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find('\r'), std::string::npos);
  if (tty.out.find("reading traces") == std::string::npos) {
    // The run includes the analyses: it may pass a second while the read alone did not.
    GTEST_SKIP() << "the read took under a second here (whole run " << tty.seconds << " s)";
  }
  ExpectBarDrawnAndCleared(tty.out);
}

}  // namespace
