// SPDX-License-Identifier: Apache-2.0
// Samples the native test workload (main -> Outer -> Middle -> HotLeaf) and checks that the
// stacks are exactly that chain: with frame pointers, with DWARF unwinding of a binary built
// without them, and stripped with its symbols in a separate debug file, running from a tmpfs
// that only its own mount namespace can see.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "base/wait_for.h"
#include "profile/elf_image.h"
#include "profile/profile_session.h"
#include "stack_share.h"
#include "workload.h"

namespace vigil {
namespace {

const std::vector<std::string> kChain = {"vigil_test::HotLeaf(unsigned long)",
                                         "vigil_test::Middle(unsigned long)",
                                         "vigil_test::Outer(double)", "main"};

std::string Workload(const std::string& name) {
  return std::string(VIGIL_PROFILE_WORKLOADS) + "/" + name;
}

constexpr int kHz = 199;

// Checks the sample count against the CPU time the target used meanwhile: cpu-clock samples
// only while the thread runs, so on a busy machine both shrink together.
void ExpectSamplesMatchCpuTime(uint64_t samples, double cpu_seconds) {
  const double expected = cpu_seconds * kHz;
  EXPECT_GT(cpu_seconds, 0.2);
  EXPECT_NEAR(static_cast<double>(samples), expected, expected * 0.2 + 5);
}

StatusOr<ProfileSessionResult> Sample(int pid, UnwindMode unwind,
                                      const std::string& debug_root = "/usr/lib/debug") {
  const double cpu_before = testing::CpuSeconds(pid);
  ProfileSessionOptions options;
  options.pids = {pid};
  options.duration = std::chrono::milliseconds(1500);
  options.frequency_hz = kHz;
  options.unwind = unwind;
  options.debug_root = debug_root;
  StatusOr<ProfileSessionResult> result = RunProfileSession(options);
  if (result.ok()) {
    ExpectSamplesMatchCpuTime(result->profile.total_samples(),
                              testing::CpuSeconds(pid) - cpu_before);
    // DWARF samples carry a copy of the user stack each: on a loaded machine (the sanitizer
    // build, tests in parallel) the reader can fall behind and the ring drop a few. A few in a
    // hundred is the kernel's overflow, not a defect; more would be.
    EXPECT_LE(result->lost, result->profile.total_samples() / 20 + 2);
  }
  return result;
}

class NativeSamplingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      GTEST_SKIP() << "needs root: perf_event_open on another process and process_vm_readv";
    }
  }
};

TEST_F(NativeSamplingTest, FramePointerStacksAreTheKnownChain) {
  testing::Workload work({Workload("hot_native_fp")});
  ASSERT_TRUE(work.WaitReady());

  StatusOr<ProfileSessionResult> result = Sample(work.pid(), UnwindMode::kFramePointers);

  ASSERT_TRUE(result.ok()) << result.status().message();
  const Profile& profile = result->profile;
  EXPECT_GE(testing::ShareWithTop(profile, kChain), 0.95) << testing::TopFolded(profile);
  // The root of every stack is the process name.
  EXPECT_EQ(FrameLabel(profile.frames()[static_cast<size_t>(profile.stacks().begin()->first[0])]),
            "hot_native_fp");
}

TEST_F(NativeSamplingTest, DwarfUnwindingRecoversFramesWithoutFramePointers) {
  testing::Workload work({Workload("hot_native_nofp")});
  ASSERT_TRUE(work.WaitReady());

  StatusOr<ProfileSessionResult> result = Sample(work.pid(), UnwindMode::kDwarf);

  ASSERT_TRUE(result.ok()) << result.status().message();
  const Profile& profile = result->profile;
  EXPECT_GE(testing::ShareWithTop(profile, kChain), 0.95) << testing::TopFolded(profile);
  EXPECT_GE(result->stacks.dwarf_unwound, profile.total_samples() * 95 / 100);
}

TEST_F(NativeSamplingTest, StrippedBinaryInPrivateMountNamespaceUsesDebugFileByBuildId) {
  const std::string binary = Workload("hot_native_stripped");
  StatusOr<ElfImage> stripped = ElfImage::Load(binary, /*look_for_debug_file=*/false);
  ASSERT_TRUE(stripped.ok()) << stripped.status().message();
  ASSERT_FALSE(stripped->FindSymbol("_ZN10vigil_test7HotLeafEm").has_value())
      << "the test binary should be stripped";
  ASSERT_GT(stripped->build_id().size(), 2u);
  // A debug root of our own with the .build-id layout: xx/rest.debug.
  char tmpl[] = "/tmp/vigil-profile-debug-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::filesystem::path root(tmpl);
  const std::string id = stripped->build_id();
  std::filesystem::create_directories(root / ".build-id" / id.substr(0, 2));
  std::filesystem::copy_file(binary + ".debug",
                             root / ".build-id" / id.substr(0, 2) / (id.substr(2) + ".debug"));
  const std::string private_dir = std::string(tmpl) + "-ns";
  testing::WorkloadOptions options;
  options.private_dir = private_dir;
  StatusOr<ProfileSessionResult> result = InternalError("not run");
  {
    testing::Workload work({binary}, options);
    ASSERT_TRUE(work.WaitReady());
    // The copy exists only inside the workload's namespace.
    ASSERT_FALSE(std::filesystem::exists(private_dir + "/hot_native_stripped"));

    result = Sample(work.pid(), UnwindMode::kFramePointers, root.string());
  }
  std::filesystem::remove_all(root);
  std::filesystem::remove(private_dir);

  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_GE(testing::ShareWithTop(result->profile, kChain), 0.95)
      << testing::TopFolded(result->profile);
}

TEST_F(NativeSamplingTest, ThreadStartedDuringTheRunIsSampled) {
  testing::Workload work({Workload("hot_native_fp"), "3600", "late-thread"});
  ASSERT_TRUE(work.WaitReady());

  // The second thread starts 400 ms in; Sample checks the count against both threads' CPU.
  StatusOr<ProfileSessionResult> result = Sample(work.pid(), UnwindMode::kFramePointers);

  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->threads, 2u);
  const Profile& profile = result->profile;
  // The late thread's stacks start at its thread entry (libstdc++), not at main.
  uint64_t late = 0;
  for (const auto& [ids, count] : profile.stacks()) {
    std::vector<std::string> labels = testing::LeafFirstLabels(profile, ids);
    if (labels.size() > 3 && labels[0] == kChain[0] &&
        std::find(labels.begin(), labels.end(), "main") == labels.end()) {
      late += count;
    }
  }
  EXPECT_GT(late, 20u) << testing::TopFolded(profile);
}

TEST_F(NativeSamplingTest, ExitedTargetEndsTheRunEarly) {
  testing::Workload work({Workload("hot_native_fp"), "0.3"});
  ASSERT_TRUE(work.WaitReady());
  ProfileSessionOptions options;
  options.pids = {work.pid()};
  options.duration = std::chrono::milliseconds(20000);
  options.unwind = UnwindMode::kFramePointers;
  const auto start = std::chrono::steady_clock::now();

  StatusOr<ProfileSessionResult> result = RunProfileSession(options);

  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(NativeSamplingTest, AllProcessesModeSeesTheWorkload) {
  testing::Workload work({Workload("hot_native_fp")});
  ASSERT_TRUE(work.WaitReady());
  ProfileSessionOptions options;
  options.all = true;
  options.duration = std::chrono::milliseconds(1000);
  options.frequency_hz = kHz;
  options.unwind = UnwindMode::kFramePointers;

  StatusOr<ProfileSessionResult> result = RunProfileSession(options);

  ASSERT_TRUE(result.ok()) << result.status().message();
  const Profile& profile = result->profile;
  uint64_t workload = 0;
  for (const auto& [ids, count] : profile.stacks()) {
    if (FrameLabel(profile.frames()[static_cast<size_t>(ids[0])]) == "hot_native_fp" &&
        testing::LeafFirstLabels(profile, ids)[0] == kChain[0]) {
      workload += count;
    }
  }
  // One event per CPU; the busy workload gets a good share of one CPU's samples.
  EXPECT_EQ(result->threads, static_cast<uint64_t>(sysconf(_SC_NPROCESSORS_CONF)));
  EXPECT_GT(workload, 30u) << testing::TopFolded(profile);
}

TEST_F(NativeSamplingTest, KernelFramesOfASyscallLoop) {
  // dd copying one byte at a time lives in read(2) and write(2).
  testing::Workload work({"/bin/sh", "-c", "echo ready; exec dd if=/dev/zero of=/dev/null bs=1"});
  ASSERT_TRUE(work.WaitReady());
  ProfileSessionOptions options;
  options.pids = {work.pid()};
  options.duration = std::chrono::milliseconds(1000);
  options.frequency_hz = kHz;
  options.unwind = UnwindMode::kFramePointers;
  // The shell execs dd after printing; wait until the process is dd.
  ASSERT_TRUE(WaitFor(
      [&] {
        std::ifstream comm("/proc/" + std::to_string(work.pid()) + "/comm");
        std::string name;
        return std::getline(comm, name) && name == "dd";
      },
      10));

  StatusOr<ProfileSessionResult> result = RunProfileSession(options);

  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_TRUE(result->kernel_stacks);
  const Profile& profile = result->profile;
  uint64_t in_syscall = 0;
  bool read_path = false;
  for (const auto& [ids, count] : profile.stacks()) {
    for (int id : ids) {
      const ProfileFrame& f = profile.frames()[static_cast<size_t>(id)];
      if (f.kind == FrameKind::kKernel && f.function == "do_syscall_64") {
        in_syscall += count;
        break;
      }
    }
    for (int id : ids) {
      const ProfileFrame& f = profile.frames()[static_cast<size_t>(id)];
      read_path = read_path || (f.kind == FrameKind::kKernel && f.function == "vfs_read");
    }
  }
  // Samples in user space between the calls are legitimate; a good part is in the kernel.
  EXPECT_GE(in_syscall, profile.total_samples() / 4) << testing::TopFolded(profile);
  EXPECT_TRUE(read_path) << testing::TopFolded(profile);
}

TEST(PerfSamplerTest, NoSuchProcessIsNotFound) {
  ProfileSessionOptions options;
  options.pids = {0x3ffffff0};

  StatusOr<ProfileSessionResult> result = RunProfileSession(options);

  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace vigil
