// SPDX-License-Identifier: Apache-2.0
#include "snoop/probe_site.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace vigil::snoop {
namespace {

// A file of `bytes` (as a function's code would sit in a library), open for reading.
ScopedFd CodeFile(const std::string& bytes) {
  char path[] = "/tmp/vigil-probe-site-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  unlink(path);
  return ScopedFd(fd);
}

const std::string kEndbr64 = "\xf3\x0f\x1e\xfa";
const std::string kPushRbp = "\x55";
const std::string kMovRdiRdx = "\x48\x89\xfa";
const std::string kPushR15 = "\x41\x57";

TEST(ProbeSite, PastALeadingEndbr64OntoAPush) {
  ScopedFd f = CodeFile(std::string(64, '\xcc') + kEndbr64 + kPushRbp + kMovRdiRdx + kEndbr64 +
                        kPushR15 + kEndbr64);
  EXPECT_EQ(ProbeSiteOffset(f.get(), 64), 68u);
  EXPECT_EQ(ProbeSiteOffset(f.get(), 68), 68u);  // push itself: the kernel emulates it.
  EXPECT_EQ(ProbeSiteOffset(f.get(), 72), 76u);  // push %r15 (41 57).
}

TEST(ProbeSite, EndbrBeforeAnotherInstructionStays) {
  // endbr64 then mov: single-stepped either way, and the mov may be a loop's target.
  ScopedFd f = CodeFile(kEndbr64 + kMovRdiRdx + kEndbr64 + "\x41\x89" + kEndbr64 + "\x41");
  EXPECT_EQ(ProbeSiteOffset(f.get(), 0), 0u);
  EXPECT_EQ(ProbeSiteOffset(f.get(), 7), 7u);    // 41 89: a REX mov, not a push.
  EXPECT_EQ(ProbeSiteOffset(f.get(), 13), 13u);  // 41 then the end of the file.
}

TEST(ProbeSite, OtherFirstInstructionsStay) {
  // mov, an endbr32 (f3 0f 1e fb) before a push, and endbr64's bytes starting one byte late.
  ScopedFd f = CodeFile(kMovRdiRdx + "\xf3\x0f\x1e\xfb" + kPushRbp + "\x90" + kEndbr64 + kPushRbp);
  EXPECT_EQ(ProbeSiteOffset(f.get(), 0), 0u);
  EXPECT_EQ(ProbeSiteOffset(f.get(), 3), 3u);
  EXPECT_EQ(ProbeSiteOffset(f.get(), 8), 8u);
  EXPECT_EQ(ProbeSiteOffset(f.get(), 9), 13u);
}

TEST(ProbeSite, UnreadableOrShortStaysAtTheFunction) {
  ScopedFd f = CodeFile(kEndbr64);
  EXPECT_EQ(ProbeSiteOffset(f.get(), 0), 0u);        // Nothing after endbr64.
  EXPECT_EQ(ProbeSiteOffset(f.get(), 4096), 4096u);  // Past the end.
  EXPECT_EQ(ProbeSiteOffset(-1, 16), 16u);
}

}  // namespace
}  // namespace vigil::snoop
