// SPDX-License-Identifier: Apache-2.0
#include "snoop/spawn.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "base/wait_for.h"

namespace vigil::snoop {
namespace {

std::string TempDir() {
  char dir[] = "/tmp/vigil-spawn-test-XXXXXX";
  return mkdtemp(dir) ? dir : "";
}

void WriteScript(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  chmod(path.c_str(), 0755);
}

TEST(Spawn, ResolvesPathAndScriptInterpreters) {
  StatusOr<std::string> sh = ResolveExecutable("sh");
  ASSERT_TRUE(sh.ok()) << sh.status().ToString();
  EXPECT_EQ(sh->front(), '/');
  std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  WriteScript(dir + "/direct", "#!/bin/sh -e\necho hi\n");
  WriteScript(dir + "/via_env", "#! /usr/bin/env sh\necho hi\n");
  StatusOr<std::string> direct = ResolveExecutable(dir + "/direct");
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(*direct, "/bin/sh");
  StatusOr<std::string> via_env = ResolveExecutable(dir + "/via_env");
  ASSERT_TRUE(via_env.ok());
  EXPECT_EQ(*via_env, *sh);
  EXPECT_EQ(ResolveExecutable("no-such-command-here").status().code(), StatusCode::kNotFound);
  unlink((dir + "/direct").c_str());
  unlink((dir + "/via_env").c_str());
  rmdir(dir.c_str());
}

TEST(Spawn, EntryPointIsInsideTheExecutableText) {
  StatusOr<uint64_t> entry = EntryFileOffset("/proc/self/exe");
  ASSERT_TRUE(entry.ok()) << entry.status().ToString();
  EXPECT_GT(*entry, 0u);
  EXPECT_EQ(EntryFileOffset("/proc/self/status").status().code(), StatusCode::kInvalidArgument);
}

TEST(Spawn, HeldChildWaitsUntilReleased) {
  StatusOr<HeldChild> child = ForkHeld({"/bin/sh", "-c", "exit 7"});
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_EQ(child->executable, "/bin/sh");
  // Held: still the forked copy, blocked on the pipe.
  EXPECT_TRUE(WaitFor([&] { return ProcessState(child->pid) == 'S'; }, 10));
  int status = 0;
  EXPECT_EQ(waitpid(child->pid, &status, WNOHANG), 0);
  ASSERT_TRUE(ReleaseHeld(*child).ok());
  EXPECT_EQ(ReleaseHeld(*child).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(WaitFor([&] { return waitpid(child->pid, &status, WNOHANG) == child->pid; }, 30));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
}

}  // namespace
}  // namespace vigil::snoop
