// SPDX-License-Identifier: Apache-2.0
#include "profile/folded_input.h"

#include <gtest/gtest.h>

#include "profile/folded_output.h"
#include "profile/hot_functions.h"

namespace vigil {
namespace {

ProfileFrame Frame(FrameKind kind, const std::string& function) {
  ProfileFrame f;
  f.kind = kind;
  f.function = function;
  return f;
}

TEST(FoldedInputTest, RoundTripsWhatWriteFoldedWrites) {
  Profile profile;
  const int proc = profile.Intern(Frame(FrameKind::kProcess, "train"));
  const int main_id = profile.Intern(Frame(FrameKind::kNative, "main"));
  const int hot = profile.Intern(Frame(FrameKind::kNative, "ns::Hot(int)"));
  const int kernel = profile.Intern(Frame(FrameKind::kKernel, "do_syscall_64"));
  const int unnamed = profile.Intern(Frame(FrameKind::kKernel, "[kernel]"));
  ProfileFrame py = Frame(FrameKind::kPython, "step");
  py.file = "train.py";
  py.line = 42;
  const int step = profile.Intern(py);
  profile.Add({proc, main_id, hot}, 5);
  profile.Add({proc, main_id, step, kernel});
  profile.Add({proc, main_id, unnamed});

  const std::string folded = WriteFolded(profile);
  StatusOr<Profile> back = ParseFolded(folded, /*root_is_process=*/true);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->total_samples(), 7u);
  EXPECT_EQ(WriteFolded(*back), folded);
  // Kinds come back: the process root stays out of the hot functions, Python keeps its line.
  EXPECT_EQ(HotFunctionsText(*back, 10), HotFunctionsText(profile, 10));
  bool saw_python = false, saw_kernel = false;
  for (const ProfileFrame& f : back->frames()) {
    saw_python |= f.kind == FrameKind::kPython && f.function == "step" && f.line == 42;
    saw_kernel |= f.kind == FrameKind::kKernel && f.function == "do_syscall_64";
  }
  EXPECT_TRUE(saw_python);
  EXPECT_TRUE(saw_kernel);
}

TEST(FoldedInputTest, RepeatedStacksAddUpAndBlankLinesAreSkipped) {
  StatusOr<Profile> p = ParseFolded("a;b 2\r\n\na;b 3\na;c 1\n", false);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->total_samples(), 6u);
  EXPECT_EQ(WriteFolded(*p), "a;b 5\na;c 1\n");
  EXPECT_EQ(p->frames()[0].kind, FrameKind::kNative);  // Not rooted at a process.
}

TEST(FoldedInputTest, BadLinesAreRefusedWithTheirNumber) {
  struct Case {
    const char* text;
    const char* why;
  };
  for (const Case& c :
       {Case{"a;b 1\nnocount\n", "line 2: want"}, Case{"a;b 0\n", "line 1: count must be"},
        Case{"a;b -3\n", "line 1: count must be"}, Case{"a;b x\n", "line 1: count must be"},
        Case{"a;;b 1\n", "line 1: empty frame"}, Case{";a 1\n", "line 1: empty frame"},
        Case{"a\tb 1\n", "line 1: control character"}, Case{" 1\n", "line 1: want"}}) {
    StatusOr<Profile> p = ParseFolded(c.text, false);
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(p.status().message().find(c.why), std::string::npos) << p.status().message();
  }
}

TEST(FoldedInputTest, LimitsAreEnforced) {
  FoldedLimits limits;
  limits.max_stacks = 2;
  limits.max_frames = 3;
  limits.max_frame_bytes = 4;
  limits.max_count = 100;
  limits.max_total = 150;
  EXPECT_TRUE(ParseFolded("a 1\nb 1\n", false, limits).ok());
  EXPECT_NE(ParseFolded("a 1\nb 1\nc 1\n", false, limits).status().message().find("2 stacks"),
            std::string::npos);
  EXPECT_NE(ParseFolded("a;b;c;d 1\n", false, limits).status().message().find("3 frames"),
            std::string::npos);
  EXPECT_NE(ParseFolded("abcde 1\n", false, limits).status().message().find("4 bytes"),
            std::string::npos);
  EXPECT_NE(ParseFolded("a 101\n", false, limits).status().message().find("1 to 100"),
            std::string::npos);
  EXPECT_NE(ParseFolded("a 100\nb 51\n", false, limits).status().message().find("150 samples"),
            std::string::npos);
}

}  // namespace
}  // namespace vigil
