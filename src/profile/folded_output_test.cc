// SPDX-License-Identifier: Apache-2.0
#include "profile/folded_output.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

ProfileFrame Frame(FrameKind kind, const std::string& function) {
  ProfileFrame f;
  f.kind = kind;
  f.function = function;
  return f;
}

TEST(FoldedOutputTest, RootFirstSortedWithCountsAndEscapedNames) {
  Profile profile;
  const int proc = profile.Intern(Frame(FrameKind::kProcess, "train"));
  const int main_id = profile.Intern(Frame(FrameKind::kNative, "main"));
  const int hot = profile.Intern(Frame(FrameKind::kNative, "ns::Hot(int; x)"));
  const int kernel = profile.Intern(Frame(FrameKind::kKernel, "do_syscall_64"));
  const int unnamed = profile.Intern(Frame(FrameKind::kKernel, "[kernel]"));
  ProfileFrame py = Frame(FrameKind::kPython, "step");
  py.file = "/app/train.py";
  py.line = 42;
  const int step = profile.Intern(py);

  profile.Add({proc, main_id, hot}, 3);
  profile.Add({proc, main_id, step, kernel});
  profile.Add({proc, main_id, hot}, 2);
  profile.Add({proc, main_id, unnamed});

  EXPECT_EQ(WriteFolded(profile),
            "train;main;[kernel] 1\n"
            "train;main;ns::Hot(int: x) 5\n"
            "train;main;step (train.py:42);do_syscall_64_[k] 1\n");
  EXPECT_EQ(profile.total_samples(), 7u);
}

}  // namespace
}  // namespace vigil
