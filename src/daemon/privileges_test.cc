// SPDX-License-Identifier: Apache-2.0
#include "daemon/privileges.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "daemon/privilege_drop.h"

namespace vigil::daemon {
namespace {

constexpr CapabilitySet kTracingSet =
    CapabilityBit(CAP_CHOWN) | CapabilityBit(CAP_DAC_READ_SEARCH) | CapabilityBit(CAP_SYS_PTRACE);

TEST(PrivilegesTest, DefaultDaemonKeepsWhatTracingAndProcessesNeed) {
  DaemonConfig config;
  const std::vector<std::string> collectors = {"proc_cpu", "proc_meminfo", "proc_process"};

  const PrivilegePlan plan = PlanPrivileges(EnabledFeatures(config, collectors));

  EXPECT_EQ(plan.keep, kTracingSet) << FormatCapabilities(plan.keep);
  EXPECT_EQ(FormatCapabilities(plan.keep), "cap_chown,cap_dac_read_search,cap_sys_ptrace");
  ASSERT_FALSE(plan.reasons.empty());
  EXPECT_NE(plan.reasons[0].find("for "), std::string::npos) << plan.reasons[0];
}

TEST(PrivilegesTest, HostCollectorsAloneNeedNoCapability) {
  DaemonConfig config;
  config.once = true;  // No tracing.
  const std::vector<std::string> collectors = {"proc_cpu",    "proc_meminfo", "proc_loadavg",
                                               "proc_netdev", "sys_cgroup",   "sys_infiniband"};

  const PrivilegePlan plan = PlanPrivileges(EnabledFeatures(config, collectors));

  EXPECT_EQ(plan.keep, 0u) << FormatCapabilities(plan.keep);
  EXPECT_EQ(FormatCapabilities(plan.keep), "none");
}

TEST(PrivilegesTest, PortBelow1024AndFutureBpfCollectorsAddTheirCapabilities) {
  DaemonConfig config;
  config.once = true;
  config.http_listen = "0.0.0.0:80";
  const std::vector<std::string> collectors = {"bpf_cuda"};

  const PrivilegePlan plan = PlanPrivileges(EnabledFeatures(config, collectors));

  EXPECT_EQ(FormatCapabilities(plan.keep),
            "cap_dac_read_search,cap_net_bind_service,cap_sys_ptrace,cap_perfmon,cap_bpf");
}

TEST(PrivilegesTest, ContinuousProfilingKeepsPerfmonAndPtrace) {
  DaemonConfig config;
  config.once = true;
  config.profile.continuous = true;
  EXPECT_EQ(PlanPrivileges(EnabledFeatures(config, {})).keep, 0u);  // --once samples nothing.
  config.once = false;

  const PrivilegePlan plan = PlanPrivileges(EnabledFeatures(config, {}));

  EXPECT_EQ(FormatCapabilities(plan.keep),
            "cap_chown,cap_dac_read_search,cap_sys_ptrace,cap_perfmon");
}

TEST(PrivilegesTest, TableRowsAreSortedAndExplained) {
  std::string_view previous;
  for (const CapabilityNeed& need : CapabilityTable()) {
    EXPECT_LE(previous, need.feature);
    EXPECT_FALSE(need.why.empty()) << need.feature;
    EXPECT_EQ(CapabilityName(need.capability).rfind("cap_", 0), 0u);
    previous = need.feature;
  }
}

// The rest runs as root only (CI does), each drop in a forked child: a drop cannot be undone.
class PrivilegeDropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      GTEST_SKIP() << "needs root";
    }
    char tmpl[] = "/tmp/vigil_priv_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  }
  void TearDown() override {
    if (!dir_.empty()) {
      (void)system(("rm -rf " + dir_).c_str());
    }
  }
  std::string dir_;
};

TEST_F(PrivilegeDropTest, MissingDirectoryIsCreatedForTheUserAndLinksAreRefused) {
  auto nobody = LookUpUser("nobody");
  ASSERT_TRUE(nobody.ok()) << nobody.status().ToString();
  const std::string made = dir_ + "/a/run";
  ASSERT_EQ(symlink("/etc", (dir_ + "/link").c_str()), 0);
  ASSERT_EQ(mkdir((dir_ + "/root_owned").c_str(), 0755), 0);

  ASSERT_TRUE(PrepareDirForUser(made, "unix_socket", *nobody, 0755, false).ok());
  const Status link = PrepareDirForUser(dir_ + "/link", "trace_root", *nobody, 0755, true);
  const Status taken = PrepareDirForUser(dir_ + "/root_owned", "jsonl", *nobody, 0755, false);

  struct stat st {};
  ASSERT_EQ(stat(made.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, nobody->uid);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  ASSERT_EQ(stat((dir_ + "/a").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);  // Parents stay root's.
  EXPECT_FALSE(link.ok());
  EXPECT_NE(link.message().find("symbolic link"), std::string::npos) << link.message();
  ASSERT_EQ(lstat("/etc", &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_FALSE(taken.ok());
  EXPECT_NE(taken.message().find("not writable by user nobody"), std::string::npos)
      << taken.message();
}

TEST_F(PrivilegeDropTest, DropToNobodyKeepsOnlyThePlannedSetAndCannotRegainRoot) {
  const std::string secret = dir_ + "/secret";
  ASSERT_TRUE(WriteFileAtomic(secret, "t0ken\n", 0600).ok());
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    DaemonConfig config;
    config.user = "nobody";
    config.unix_socket = dir_ + "/run/v.sock";
    config.trace_root = dir_ + "/traces";
    config.token_file = secret;  // Readable after the drop through cap_dac_read_search.
    auto report = DropPrivileges(std::vector<std::string>{"proc_process"}, &config);
    auto caps = EffectiveCapabilities();
    const bool ok = report.ok() && caps.ok() && *caps == kTracingSet && getuid() == 65534 &&
                    geteuid() == 65534 && setuid(0) != 0 &&
                    open("/etc/shadow", O_WRONLY | O_CLOEXEC) < 0 && ReadSmallFile(secret).ok();
    if (!ok) {
      fprintf(stderr, "drop: %s caps=%s uid=%d\n",
              report.ok() ? report->summary.c_str() : report.status().ToString().c_str(),
              caps.ok() ? FormatCapabilities(*caps).c_str() : "?", getuid());
    }
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(PrivilegeDropTest, RootWithoutUserKeepsUidZeroWithNoCapabilitiesForHostCollectors) {
  const std::string others = dir_ + "/others";
  ASSERT_TRUE(WriteFileAtomic(others, "private\n", 0600).ok());
  ASSERT_EQ(chown(others.c_str(), 65534, 65534), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    DaemonConfig config;
    config.once = true;
    auto report = DropPrivileges(std::vector<std::string>{"proc_cpu"}, &config);
    auto caps = EffectiveCapabilities();
    // Without cap_dac_override uid 0 cannot read another user's private file.
    const bool ok = report.ok() && caps.ok() && *caps == 0 && geteuid() == 0 &&
                    open(others.c_str(), O_RDONLY | O_CLOEXEC) < 0 &&
                    prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace vigil::daemon
