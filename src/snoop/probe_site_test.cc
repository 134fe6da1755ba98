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

TEST(ProbeSite, PastALeadingEndbr64) {
  ScopedFd f = CodeFile(std::string(64, '\xcc') + kEndbr64 + kPushRbp + kMovRdiRdx);
  EXPECT_EQ(ProbeSiteOffset(f.get(), 64), 68u);
  EXPECT_EQ(ProbeSiteOffset(f.get(), 68), 68u);  // push: the kernel emulates it.
}

TEST(ProbeSite, OtherFirstInstructionsStay) {
  // mov, an endbr32 (f3 0f 1e fb), and endbr64's bytes starting one byte late.
  ScopedFd f = CodeFile(kMovRdiRdx + "\xf3\x0f\x1e\xfb" + "\x90" + kEndbr64);
  EXPECT_EQ(ProbeSiteOffset(f.get(), 0), 0u);
  EXPECT_EQ(ProbeSiteOffset(f.get(), 3), 3u);
  EXPECT_EQ(ProbeSiteOffset(f.get(), 7), 7u);
  EXPECT_EQ(ProbeSiteOffset(f.get(), 8), 12u);
}

TEST(ProbeSite, UnreadableOrShortStaysAtTheFunction) {
  ScopedFd f = CodeFile(kEndbr64.substr(0, 3));
  EXPECT_EQ(ProbeSiteOffset(f.get(), 0), 0u);        // Only 3 bytes left.
  EXPECT_EQ(ProbeSiteOffset(f.get(), 4096), 4096u);  // Past the end.
  EXPECT_EQ(ProbeSiteOffset(-1, 16), 16u);
}

}  // namespace
}  // namespace vigil::snoop
