// SPDX-License-Identifier: Apache-2.0
#include "collectors/host_os_collector.h"

#include <errno.h>
#include <string.h>

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::ScratchTree;

int FakeUname(struct utsname* u) {
  strcpy(u->sysname, "Linux");
  strcpy(u->nodename, "gpu-node-17");
  strcpy(u->release, "6.1.0-18-amd64");
  strcpy(u->version, "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)");
  strcpy(u->machine, "x86_64");
  strcpy(u->domainname, "(none)");
  return 0;
}

int FailingUname(struct utsname*) {
  errno = ENOSYS;
  return -1;
}

TEST(HostOsCollectorTest, UnameAndCapturedOsRelease) {
  HostOsCollector collector(FixturePaths("debian12_k618_vm"), {.uname = &FakeUname});

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(FindValue(b, "vigil_host_uname_info",
                      {{"sysname", "Linux"},
                       {"nodename", "gpu-node-17"},
                       {"release", "6.1.0-18-amd64"},
                       {"machine", "x86_64"},
                       {"domainname", "(none)"}}),
            1);
  EXPECT_EQ(FindValue(b, "vigil_host_os_info",
                      {{"id", "debian"},
                       {"name", "Debian GNU/Linux"},
                       {"pretty_name", "Debian GNU/Linux 12 (bookworm)"},
                       {"version", "12 (bookworm)"},
                       {"version_codename", "bookworm"},
                       {"version_id", "12"}}),
            1);
  EXPECT_EQ(FindValue(b, "vigil_host_os_version", {{"id", "debian"}}), 12);
}

TEST(HostOsCollectorTest, UsrLibFallbackQuotesAndVersionNumber) {
  ScratchTree tree;
  tree.Write("usr/lib/os-release",
             "# comment\n"
             "NAME='Ubuntu'\n"
             "VERSION_ID=\"22.04\"\n"
             "ID=ubuntu\n"
             "ID_LIKE=debian\n"
             "PRETTY_NAME=\"Ubuntu \\\"Jammy\\\" 22.04.4 LTS\"\n"
             "not a key value line\n"
             "ID=ubuntu-core\n");
  HostOsCollector collector(tree.paths(), {.uname = &FakeUname});

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(FindValue(b, "vigil_host_os_info",
                      {{"id", "ubuntu-core"},
                       {"id_like", "debian"},
                       {"name", "Ubuntu"},
                       {"pretty_name", "Ubuntu \"Jammy\" 22.04.4 LTS"}}),
            1);
  EXPECT_DOUBLE_EQ(*FindValue(b, "vigil_host_os_version", {{"id", "ubuntu-core"}}), 22.04);
}

TEST(HostOsCollectorTest, NoOsReleaseKeepsUname) {
  ScratchTree tree;
  HostOsCollector collector(tree.paths(), {.uname = &FakeUname});

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(CountSamples(r.batch, "vigil_host_uname_info"), 1u);
  EXPECT_EQ(CountSamples(r.batch, "vigil_host_os_info"), 0u);
}

TEST(HostOsCollectorTest, NonNumericVersionHasNoVersionSample) {
  ScratchTree tree;
  tree.Write("etc/os-release", "ID=alpine\nVERSION_ID=3.19.1\n");
  HostOsCollector collector(tree.paths(), {.uname = &FakeUname});

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(FindValue(r.batch, "vigil_host_os_info", {{"version_id", "3.19.1"}}), 1);
  EXPECT_EQ(CountSamples(r.batch, "vigil_host_os_version"), 0u);
}

TEST(HostOsCollectorTest, RealUnameMatchesTheSyscall) {
  HostOsCollector collector(HostPaths{});
  struct utsname u {};
  ASSERT_EQ(uname(&u), 0);

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, "vigil_host_uname_info",
                      {{"release", u.release}, {"machine", u.machine}, {"sysname", u.sysname}}),
            1);
}

TEST(HostOsCollectorTest, FailingUnameIsAnError) {
  ScratchTree tree;
  HostOsCollector collector(tree.paths(), {.uname = &FailingUname});

  auto r = CollectOnce(collector);

  EXPECT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("uname"), std::string::npos);
}

}  // namespace
}  // namespace vigil
