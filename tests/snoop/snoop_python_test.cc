// SPDX-License-Identifier: Apache-2.0
// Python frames in snoop's stacks: CPython calls the fake CUDA runtime through ctypes from
// known functions (cuda_from_python.py), and a real session must report the leak and sync
// stacks with those functions and the lines of their calls, in order, below the native frames
// of the call, and nothing of the sort when Python frames are off. Debian's 3.11, and 3.9,
// 3.10, 3.12 and 3.13 where installed (each frame layout the probes read). Needs root; skips
// otherwise, and for a version that is not installed.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "snoop/snoop_session.h"
#include "workload_process.h"

namespace vigil::snoop {
namespace {

using testing::WorkloadOptions;
using testing::WorkloadProcess;

constexpr int kSteps = 3;  // STEPS in the script.
constexpr uint64_t kLeakBytes = 1 << 20;

std::string Script() { return std::string(SNOOP_TEST_SOURCES) + "/cuda_from_python.py"; }

// The 1-based line of the script holding `marker`.
int LineOf(const std::string& marker) {
  std::ifstream in(Script());
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find(marker) != std::string::npos) return n;
  }
  return -1;
}

std::string PyFrame(const std::string& function, const std::string& marker) {
  return function + " (cuda_from_python.py:" + std::to_string(LineOf(marker)) + ")";
}

bool IsPython(const std::string& frame) { return frame.find(".py:") != std::string::npos; }

std::vector<std::string> PythonPart(const CallStack& s) {
  std::vector<std::string> out;
  std::copy_if(s.frames.begin(), s.frames.end(), std::back_inserter(out), IsPython);
  return out;
}

std::string Describe(const CallStack& s) {
  std::string out;
  for (const std::string& f : s.frames) out += "\n  " + f;
  return out;
}

// Root -> Python -> native leaf: the Python frames are one run, after the native frames of
// the call itself (innermost first).
void ExpectMerged(const CallStack& s, const std::vector<std::string>& python) {
  EXPECT_EQ(PythonPart(s), python) << Describe(s);
  auto first = std::find_if(s.frames.begin(), s.frames.end(), IsPython);
  ASSERT_NE(first, s.frames.end()) << Describe(s);
  EXPECT_NE(first, s.frames.begin()) << "no native frame of the call" << Describe(s);
  auto last = std::find_if(s.frames.rbegin(), s.frames.rend(), IsPython).base();
  EXPECT_EQ(static_cast<size_t>(last - first), python.size()) << Describe(s);
}

// CPython x.y: Debian's /usr/bin, else /usr/local/bin, else a pyenv build ($PYENV_ROOT or
// ~/.pyenv). "" when none is installed.
std::string FindPython(const std::string& version) {
  for (const std::string dir : {"/usr/bin", "/usr/local/bin"}) {
    if (access((dir + "/python" + version).c_str(), X_OK) == 0) return dir + "/python" + version;
  }
  const char* root = std::getenv("PYENV_ROOT");
  const char* home = std::getenv("HOME");
  const std::string versions =
      (root ? std::string(root) : std::string(home ? home : "/root") + "/.pyenv") + "/versions";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(versions, ec)) {
    const std::string bin = entry.path().string() + "/bin/python" + version;
    if (entry.path().filename().string().rfind(version + ".", 0) == 0 &&
        access(bin.c_str(), X_OK) == 0) {
      return bin;
    }
  }
  return "";
}

class SnoopPythonTest : public ::testing::Test {
 protected:
  void SetUp() override { Start("3.11"); }

  void Start(const std::string& version) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to load eBPF uprobes (CI runs as root)";
    const std::string python = FindPython(version);
    if (python.empty()) GTEST_SKIP() << "no CPython " << version << " installed";
    WorkloadOptions o;
    o.path = python;
    o.args = {Script(), std::string(FAKE_CUDA_DIR) + "/libcudart.so.12"};
    o.env = {"FAKE_CUDA_SYNC_US=1000"};
    StatusOr<WorkloadProcess*> w = WorkloadProcess::Start(o);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    workload_.reset(*w);
  }

  // Traces the script through `commands` (a Poll after each); the summary of its process.
  ProcessSummary Run(bool python_frames, SessionSummary* session,
                     const std::vector<std::string>& commands = {"run"}) {
    SnoopOptions o;
    o.pids = {workload_->pid()};
    o.leak_age_seconds = 0;
    o.python_frames = python_frames;
    StatusOr<std::unique_ptr<SnoopSession>> s = SnoopSession::Start(o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (!s.ok()) return {};
    for (const std::string& command : commands) {
      EXPECT_TRUE(workload_->Do(command).ok()) << command;
      EXPECT_TRUE((*s)->Poll(std::chrono::milliseconds(0)).ok());
    }
    *session = (*s)->Snapshot();
    EXPECT_EQ(session->processes.size(), 1u);
    return session->processes.empty() ? ProcessSummary{} : session->processes[0];
  }

  std::unique_ptr<WorkloadProcess> workload_;
};

class SnoopPythonVersionTest : public SnoopPythonTest,
                               public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { Start(GetParam()); }
};

TEST_P(SnoopPythonVersionTest, LeakAndSyncStacksCarryThePythonCallers) {
  SessionSummary s;
  ProcessSummary p = Run(true, &s);

  EXPECT_TRUE(s.python_frames);
  EXPECT_EQ(p.python, GetParam());
  for (const std::string& w : s.warnings) {
    EXPECT_EQ(w.find("Python"), std::string::npos) << w;
  }
  const std::string module = PyFrame("<module>", "# MODULE_LINE");
  const std::string main = PyFrame("main", "# RUN_LINE");
  // Only the 1 MiB buffers are outstanding: freed_buffer's are gone.
  ASSERT_EQ(p.memory.leaks.size(), 1u);
  const LeakGroup& leak = p.memory.leaks[0];
  EXPECT_EQ(leak.api, "cudaMalloc");
  EXPECT_EQ(leak.count, uint64_t{kSteps});
  EXPECT_EQ(leak.bytes, kSteps * kLeakBytes);
  ExpectMerged(leak.stack, {PyFrame("leak_buffer", "# LEAK_LINE"),
                            PyFrame("train_step", "# STEP_LEAK_LINE"), main, module});

  const SyncStack* sync = nullptr;
  for (const SyncStack& st : p.syncs_by_stack) {
    if (st.api == "cudaDeviceSynchronize") sync = &st;
  }
  ASSERT_NE(sync, nullptr);
  EXPECT_EQ(sync->count, uint64_t{kSteps});
  EXPECT_GE(sync->seconds, kSteps * 1e-3);
  ExpectMerged(sync->stack, {PyFrame("wait_for_gpu", "# SYNC_LINE"),
                             PyFrame("train_step", "# STEP_SYNC_LINE"), main, module});
}

INSTANTIATE_TEST_SUITE_P(Versions, SnoopPythonVersionTest,
                         ::testing::Values("3.11", "3.9", "3.10", "3.12", "3.13"),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           std::string name = "Python" + param_info.param;
                           name.erase(std::remove(name.begin(), name.end(), '.'), name.end());
                           return name;
                         });

// A thread the session did not know at its first call: that stack has no Python frames (and the
// session says so); the program notes the thread, the next Poll reads its state, and its next
// call has them.
TEST_F(SnoopPythonTest, ThreadStartedWhileTracedHasPythonFramesAfterTheNextPoll) {
  SessionSummary s;
  ProcessSummary p = Run(true, &s, {"thread", "go"});

  std::vector<const SyncStack*> stacks;
  for (const SyncStack& st : p.syncs_by_stack) {
    if (st.api == "cudaStreamSynchronize") stacks.push_back(&st);
  }
  ASSERT_EQ(stacks.size(), 2u);
  std::sort(stacks.begin(), stacks.end(), [](const SyncStack* a, const SyncStack* b) {
    return PythonPart(a->stack).size() < PythonPart(b->stack).size();
  });
  EXPECT_EQ(stacks[0]->count, 1u);
  EXPECT_TRUE(PythonPart(stacks[0]->stack).empty()) << Describe(stacks[0]->stack);
  EXPECT_EQ(stacks[1]->count, 1u);
  std::vector<std::string> python = PythonPart(stacks[1]->stack);
  ASSERT_GE(python.size(), 2u) << Describe(stacks[1]->stack);
  EXPECT_EQ(python[0], PyFrame("thread_body", "# THREAD_SECOND_LINE"));
  EXPECT_EQ(python[1].rfind("Thread.run (threading.py:", 0), 0u) << python[1];
  EXPECT_TRUE(std::any_of(s.warnings.begin(), s.warnings.end(), [](const std::string& w) {
    return w.rfind("1 stacks in CPython processes lack Python frames", 0) == 0;
  }));
}

TEST_F(SnoopPythonTest, NativeFramesOnlyWhenPythonFramesAreOff) {
  SessionSummary s;
  ProcessSummary p = Run(false, &s);

  EXPECT_FALSE(s.python_frames);
  EXPECT_TRUE(p.python.empty());
  EXPECT_TRUE(std::any_of(s.warnings.begin(), s.warnings.end(), [](const std::string& w) {
    return w.find("native frames only") != std::string::npos;
  }));
  ASSERT_EQ(p.memory.leaks.size(), 1u);
  EXPECT_EQ(p.memory.leaks[0].count, uint64_t{kSteps});
  EXPECT_TRUE(PythonPart(p.memory.leaks[0].stack).empty()) << Describe(p.memory.leaks[0].stack);
}

}  // namespace
}  // namespace vigil::snoop
