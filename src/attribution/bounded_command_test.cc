// SPDX-License-Identifier: Apache-2.0
#include "attribution/bounded_command.h"

#include <gtest/gtest.h>

#include "attribution/scratch_dir.h"
#include "base/time_util.h"

namespace vigil {
namespace {

constexpr int64_t kSec = 1'000'000'000;

TEST(BoundedCommandTest, ReturnsStandardOutputAndExitCode) {
  ScratchDir dir;
  const std::string tool =
      dir.Write("tool", "#!/bin/sh\necho \"args: $*\"\necho oops >&2\nexit 3\n", true);

  StatusOr<BoundedCommandResult> r = RunBoundedCommand({tool, "a b", "c"}, 30 * kSec, 1024);

  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->out, "args: a b c\n");  // Arguments as they are, standard error dropped.
  EXPECT_EQ(r->exit_code, 3);
}

TEST(BoundedCommandTest, AHungHelperAndItsChildrenAreKilledAtTheDeadline) {
  ScratchDir dir;
  const std::string tool =
      dir.Write("hang", "#!/bin/sh\necho started\nsleep 60\necho late\n", true);

  const int64_t start = MonotonicNanos();
  StatusOr<BoundedCommandResult> r = RunBoundedCommand({tool}, kSec / 2, 1024);
  const double elapsed_s = static_cast<double>(MonotonicNanos() - start) / 1e9;

  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_LT(elapsed_s, 10.0);  // Not the 60 s of the helper's sleep.
}

TEST(BoundedCommandTest, OutputPastTheCapIsRefused) {
  ScratchDir dir;
  const std::string tool = dir.Write("chatty", "#!/bin/sh\nexec yes vigil\n", true);

  StatusOr<BoundedCommandResult> r = RunBoundedCommand({tool}, 30 * kSec, 64 << 10);

  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
}

TEST(BoundedCommandTest, AProgramNotOnPathIsNotFound) {
  EXPECT_EQ(RunBoundedCommand({"vigil-no-such-helper-7f3a"}, kSec, 1024).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(FindOnPath("vigil-no-such-helper-7f3a"), "");
  EXPECT_NE(FindOnPath("sh"), "");
}

}  // namespace
}  // namespace vigil
