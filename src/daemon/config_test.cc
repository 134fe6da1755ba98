// SPDX-License-Identifier: Apache-2.0
#include "daemon/config.h"

#include <stdlib.h>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace vigil::daemon {
namespace {

constexpr std::string_view kKnown[] = {"proc_cpu", "proc_meminfo"};

TEST(ConfigTest, DefaultsMatchTheDesign) {
  DaemonConfig c;
  EXPECT_EQ(c.interval_ns, 10 * kNanosPerSecond);
  EXPECT_EQ(c.rpc_listen, "127.0.0.1:1778");
  EXPECT_EQ(c.http_listen, "127.0.0.1:9479");
  EXPECT_EQ(c.ipc_name, "dynolog");
  EXPECT_EQ(c.trace_root, "/tmp/vigil-traces");
  EXPECT_EQ(c.gpu_backend, "auto");
  EXPECT_TRUE(ValidateConfig(c, kKnown).ok());
}

TEST(ConfigTest, FileSetsTopLevelAndPerCollectorKeys) {
  DaemonConfig c;
  Status s = ApplyConfigText(R"(
interval = "5s"
rpc_listen = "127.0.0.1:2000"
http-listen = "127.0.0.1:2001"
gpu_backend = "sim"
fleet_url = "http://fleet:9480"
remote_write_auth_file = "/etc/vigil/remote-write-auth"
process_patterns = ["python.*", "torchrun"]
jsonl_keep_files = 3

[collectors.proc_cpu]
interval = "1s"
enabled = true

[collectors.proc_meminfo]
enabled = false
interval = 30

[auto_trace]
upload = false
)",
                             "test.toml", &c);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(c.interval_ns, 5 * kNanosPerSecond);
  EXPECT_EQ(c.rpc_listen, "127.0.0.1:2000");
  EXPECT_EQ(c.http_listen, "127.0.0.1:2001");
  EXPECT_EQ(c.gpu_backend, "sim");
  EXPECT_EQ(c.fleet_url, "http://fleet:9480");
  EXPECT_EQ(c.remote_write_auth_file, "/etc/vigil/remote-write-auth");
  EXPECT_FALSE(c.auto_trace.upload);
  EXPECT_EQ(c.process_patterns, (std::vector<std::string>{"python.*", "torchrun"}));
  EXPECT_EQ(c.jsonl_keep_files, 3);
  EXPECT_EQ(CollectorInterval(c, "proc_cpu"), 1 * kNanosPerSecond);
  EXPECT_EQ(CollectorInterval(c, "proc_meminfo"), 30 * kNanosPerSecond);
  EXPECT_EQ(CollectorInterval(c, "proc_loadavg"), 5 * kNanosPerSecond);
  EXPECT_TRUE(CollectorEnabled(c, "proc_cpu", false));
  EXPECT_FALSE(CollectorEnabled(c, "proc_meminfo", true));
  EXPECT_TRUE(CollectorEnabled(c, "proc_loadavg", true));
}

TEST(ConfigTest, UnknownKeysAreErrorsNamingTheKey) {
  DaemonConfig c;
  Status top = ApplyConfigText("intervall = \"5s\"\n", "a.toml", &c);
  EXPECT_EQ(top.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(top.message().find("intervall"), std::string::npos) << top.message();
  EXPECT_NE(top.message().find("a.toml"), std::string::npos) << top.message();

  Status sub = ApplyConfigText("[collectors.proc_cpu]\nenable = true\n", "b.toml", &c);
  EXPECT_NE(sub.message().find("collectors.proc_cpu.enable"), std::string::npos) << sub.message();

  Status table = ApplyConfigText("[http]\nport = 1\n", "c.toml", &c);
  EXPECT_NE(table.message().find("'http'"), std::string::npos) << table.message();
}

TEST(ConfigTest, BadValuesAndBadTomlAreErrors) {
  DaemonConfig c;
  EXPECT_FALSE(ApplyConfigText("interval = \"soon\"\n", "x", &c).ok());
  EXPECT_FALSE(ApplyConfigText("interval = \"0s\"\n", "x", &c).ok());
  EXPECT_FALSE(ApplyConfigText("rpc_listen = 5\n", "x", &c).ok());
  Status syntax = ApplyConfigText("interval = = 3\n", "broken.toml", &c);
  EXPECT_EQ(syntax.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(syntax.message().find("broken.toml:1"), std::string::npos) << syntax.message();
}

TEST(ConfigTest, ContinuousProfilingIsOffByDefaultAndSetFromFileAndFlags) {
  DaemonConfig c;
  EXPECT_FALSE(c.profile.continuous);
  EXPECT_EQ(c.profile.frequency_hz, 19);
  EXPECT_EQ(c.profile.window_ns, 60 * kNanosPerSecond);
  EXPECT_EQ(c.profile.keep, 10);
  EXPECT_DOUBLE_EQ(c.profile.cpu_budget, 0.005);
  ASSERT_TRUE(ApplyConfigText("[profile]\ncontinuous = true\nfrequency = 29\nwindow = \"30s\"\n"
                              "keep = 4\ncpu_budget = 0.01\n",
                              "x", &c)
                  .ok());
  EXPECT_TRUE(c.profile.continuous);
  EXPECT_EQ(c.profile.frequency_hz, 29);
  EXPECT_EQ(c.profile.window_ns, 30 * kNanosPerSecond);
  EXPECT_EQ(c.profile.keep, 4);
  EXPECT_DOUBLE_EQ(c.profile.cpu_budget, 0.01);
  ASSERT_TRUE(ApplyOverride("profile.cpu-budget", "0.002", &c).ok());
  ASSERT_TRUE(ApplyOverride("profile.window", "2s", &c).ok());
  EXPECT_DOUBLE_EQ(c.profile.cpu_budget, 0.002);
  EXPECT_EQ(c.profile.window_ns, 2 * kNanosPerSecond);
  EXPECT_FALSE(ApplyOverride("profile.frequency", "0", &c).ok());
  EXPECT_FALSE(ApplyOverride("profile.frequency", "5000", &c).ok());
  EXPECT_FALSE(ApplyOverride("profile.window", "100ms", &c).ok());
  EXPECT_FALSE(ApplyOverride("profile.keep", "0", &c).ok());
  EXPECT_FALSE(ApplyOverride("profile.cpu_budget", "0", &c).ok());
  EXPECT_FALSE(ApplyOverride("profile.cpu_budget", "2", &c).ok());
  EXPECT_EQ(c.profile.frequency_hz, 29);  // Refused values change nothing.
}

TEST(ConfigTest, FlagsOverrideTheFile) {
  char templ[] = "/tmp/vigil-cfgXXXXXX";
  const std::string dir = mkdtemp(templ);
  const std::string path = dir + "/vigild.toml";
  ASSERT_TRUE(WriteFileAtomic(path,
                              "interval = \"5s\"\nhttp_listen = \"127.0.0.1:1\"\n"
                              "[collectors.proc_cpu]\nenabled = false\n")
                  .ok());
  auto c = LoadConfig(path,
                      {{"interval", "2s"},
                       {"enable", "proc_cpu"},
                       {"collectors.proc_meminfo.interval", "20s"},
                       {"once", "true"}},
                      kKnown);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->interval_ns, 2 * kNanosPerSecond);
  EXPECT_EQ(c->http_listen, "127.0.0.1:1");  // From the file, no flag.
  EXPECT_TRUE(CollectorEnabled(*c, "proc_cpu", false));
  EXPECT_EQ(CollectorInterval(*c, "proc_meminfo"), 20 * kNanosPerSecond);
  EXPECT_TRUE(c->once);
  EXPECT_EQ(c->config_file, path);
  EXPECT_EQ(c->overrides.size(), 4u);
  std::string cmd = "rm -rf " + dir;
  ASSERT_EQ(system(cmd.c_str()), 0);
}

TEST(ConfigTest, ValidationRejectsUnknownCollectorsAndEnums) {
  auto unknown = LoadConfig("", {{"disable", "proc_cpu,gpu_magic"}}, kKnown);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("gpu_magic"), std::string::npos);
  EXPECT_FALSE(LoadConfig("", {{"gpu-backend", "cuda"}}, kKnown).ok());
  EXPECT_FALSE(LoadConfig("", {{"log_format", "xml"}}, kKnown).ok());
  EXPECT_FALSE(LoadConfig("", {{"http_listen", "nope"}}, kKnown).ok());
  EXPECT_FALSE(LoadConfig("", {{"no_such_flag", "1"}}, kKnown).ok());
  EXPECT_FALSE(LoadConfig("/nonexistent/vigild.toml", {}, kKnown).ok());
}

TEST(ConfigTest, DefaultSocketDependsOnTheUser) {
  const std::string path = DefaultUnixSocketPath();
  if (geteuid() == 0) {
    EXPECT_EQ(path, "/run/vigil/vigild.sock");
  } else {
    EXPECT_TRUE(path.ends_with("/vigil/vigild.sock") || path.ends_with("/vigild.sock")) << path;
    EXPECT_NE(path.rfind("/run/vigil/", 0), 0u);
  }
}

TEST(ConfigTest, DescribeChangesListsIntervalsAndCollectors) {
  DaemonConfig a;
  DaemonConfig b = a;
  b.interval_ns = 5 * kNanosPerSecond;
  b.collectors["proc_cpu"].enabled = false;
  b.collectors["proc_meminfo"].interval_ns = kNanosPerSecond;
  auto changes = DescribeChanges(a, b);
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0], "interval: 10s -> 5s");
  EXPECT_EQ(changes[1], "collectors.proc_cpu: default -> disabled");
  EXPECT_EQ(changes[2], "collectors.proc_meminfo.interval: default -> 1s");
  EXPECT_TRUE(DescribeChanges(a, a).empty());
}

TEST(ConfigTest, IntervalsBelowOneHundredMillisecondsAreRefusedNamingTheKey) {
  auto global = LoadConfig("", {{"interval", "50ms"}}, kKnown);
  ASSERT_FALSE(global.ok());
  EXPECT_NE(global.status().message().find("interval: want at least 100ms, not 50ms"),
            std::string::npos)
      << global.status().message();

  DaemonConfig c;
  Status file = ApplyConfigText("[collectors.proc_cpu]\ninterval = \"50ms\"\n", "t.toml", &c);
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.message().find("collectors.proc_cpu.interval: want at least 100ms"),
            std::string::npos)
      << file.message();
  EXPECT_FALSE(ApplyConfigText("interval = 0.05\n", "t.toml", &c).ok());

  auto flag = LoadConfig("", {{"collectors.proc_cpu.interval", "99ms"}}, kKnown);
  EXPECT_FALSE(flag.ok());
  auto edge =
      LoadConfig("", {{"interval", "100ms"}, {"collectors.proc_cpu.interval", "0.1s"}}, kKnown);
  ASSERT_TRUE(edge.ok()) << edge.status().message();
  EXPECT_EQ(CollectorInterval(*edge, "proc_cpu"), kMinIntervalNs);
}

TEST(ConfigTest, PrivilegeKeysParseFromFileAndFlags) {
  DaemonConfig defaults;
  EXPECT_TRUE(defaults.seccomp);
  EXPECT_FALSE(defaults.strict_permissions);
  EXPECT_TRUE(defaults.user.empty());

  DaemonConfig c;
  ASSERT_TRUE(ApplyConfigText("user = \"vigil\"\nstrict_permissions = true\n", "t.toml", &c).ok());
  ASSERT_TRUE(ApplyOverride("seccomp", "false", &c).ok());

  EXPECT_EQ(c.user, "vigil");
  EXPECT_TRUE(c.strict_permissions);
  EXPECT_FALSE(c.seccomp);
  EXPECT_FALSE(ApplyOverride("seccomp", "maybe", &c).ok());
}

// Found by fuzz/daemon_config_fuzzer: a duration of more seconds than int64 nanoseconds hold
// overflowed (undefined behaviour), and a float one was cast unchecked.
TEST(ConfigTest, DurationsBeyondInt64NanosecondsAreRefused) {
  for (const char* text : {"interval = 4073709551616\n", "interval = 9223372036854775807\n",
                           "interval = 1e300\n", "interval = nan\n", "interval = -inf\n"}) {
    DaemonConfig c;

    Status s = ApplyConfigText(text, "vigild.toml", &c);

    EXPECT_FALSE(s.ok()) << text;
    EXPECT_EQ(c.interval_ns, 10 * kNanosPerSecond) << text;
  }
  DaemonConfig c;
  EXPECT_TRUE(ApplyConfigText("interval = 2.5\n", "vigild.toml", &c).ok());
  EXPECT_EQ(c.interval_ns, 2'500'000'000);
}

}  // namespace
}  // namespace vigil::daemon
