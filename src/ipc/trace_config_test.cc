// SPDX-License-Identifier: Apache-2.0
#include "ipc/trace_config.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(TraceConfigTest, ParsesDynoGputraceConfig) {
  // The exact text `dyno gputrace` builds for a duration-based trace.
  auto config = ParseKinetoConfig(
      "ACTIVITIES_LOG_FILE=/tmp/test_trace.json\nPROFILE_START_TIME=1000\n"
      "ACTIVITIES_DURATION_MSECS=42\nPROFILE_REPORT_INPUT_SHAPES=true\n"
      "PROFILE_PROFILE_MEMORY=true\nPROFILE_WITH_STACK=true\nPROFILE_WITH_FLOPS=false\n"
      "PROFILE_WITH_MODULES=true");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->entries.size(), 8u);
  EXPECT_EQ(*config->Find("ACTIVITIES_DURATION_MSECS"), "42");
  EXPECT_EQ(config->ToString().substr(0, 40), "ACTIVITIES_LOG_FILE=/tmp/test_trace.json");
}

TEST(TraceConfigTest, RefusesKeysOutsideTheAllowListWithTheReason) {
  auto config = ParseKinetoConfig("ACTIVITIES_DURATION_MSECS=5\nENABLE_IPC_FABRIC=false\n");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("ENABLE_IPC_FABRIC is not allowed"), std::string::npos)
      << config.status().message();
  EXPECT_FALSE(ParseKinetoConfig("ACTIVITIES_LOG_URL=http://evil/\n").ok());
  EXPECT_FALSE(ParseKinetoConfig("EVENTS_LOG_FILE=/etc/passwd\n").ok());
}

TEST(TraceConfigTest, ChecksValueKinds) {
  EXPECT_FALSE(ParseKinetoConfig("ACTIVITIES_DURATION_MSECS=abc").ok());
  EXPECT_FALSE(ParseKinetoConfig("ACTIVITIES_DURATION_MSECS=0").ok());
  EXPECT_FALSE(ParseKinetoConfig("PROFILE_WITH_STACK=maybe").ok());
  EXPECT_FALSE(ParseKinetoConfig("ACTIVITY_TYPES=kernel;rm -rf").ok());
  EXPECT_FALSE(ParseKinetoConfig("no equals sign").ok());
  EXPECT_TRUE(ParseKinetoConfig("ACTIVITY_TYPES=kernel, gpu_memcpy\n# comment\n\n").ok());
  EXPECT_TRUE(
      ParseKinetoConfig("PROFILE_START_ITERATION_ROUNDUP=100\nACTIVITIES_ITERATIONS=3").ok());
}

TEST(TraceConfigTest, WritesEveryTraceInItsOwnDirectory) {
  auto own = DecideLogFile("/tmp/vigil-traces", "tr-1", "/tmp/vigil-traces/tr-1/a.json");
  EXPECT_EQ(own.path, "/tmp/vigil-traces/tr-1/a.json");
  EXPECT_FALSE(own.rewritten);

  // A directory under the root that someone else made (it could hold a symlink) is not used.
  auto inside = DecideLogFile("/tmp/vigil-traces", "tr-1", "/tmp/vigil-traces/evil/link/a.json");
  EXPECT_EQ(inside.path, "/tmp/vigil-traces/tr-1/a.json");
  EXPECT_TRUE(inside.rewritten);
  auto nested = DecideLogFile("/tmp/vigil-traces", "tr-1", "/tmp/vigil-traces/tr-1/d/a.json");
  EXPECT_EQ(nested.path, "/tmp/vigil-traces/tr-1/a.json");

  auto outside = DecideLogFile("/tmp/vigil-traces", "tr-1", "/etc/cron.d/x.json");
  EXPECT_TRUE(outside.rewritten);
  EXPECT_EQ(outside.path, "/tmp/vigil-traces/tr-1/x.json");
  EXPECT_NE(outside.note.find("outside the trace root"), std::string::npos);

  auto dotdot = DecideLogFile("/tmp/vigil-traces/", "tr-1", "/tmp/vigil-traces/../../etc/p.json");
  EXPECT_TRUE(dotdot.rewritten);
  EXPECT_EQ(dotdot.path, "/tmp/vigil-traces/tr-1/p.json");

  auto prefix = DecideLogFile("/tmp/vigil-traces", "tr-1", "/tmp/vigil-traces-evil/a.json");
  EXPECT_TRUE(prefix.rewritten);

  auto relative = DecideLogFile("/r", "tr-1", "trace");
  EXPECT_EQ(relative.path, "/r/tr-1/trace.json");

  auto none = DecideLogFile("/r", "tr-2", "");
  EXPECT_EQ(none.path, "/r/tr-2/trace.json");
  EXPECT_FALSE(none.rewritten);
}

// Found by fuzz/kineto_config_fuzzer: "<root>/." was honoured, so the daemon took the trace root
// itself for the trace's directory and chmod-ed it 0777, dropping its sticky bit.
TEST(TraceConfigTest, RewritesPathsWithDotComponents) {
  for (const char* requested : {"/tmp/vigil-traces/.", "/tmp/vigil-traces/./",
                                "/tmp/vigil-traces/run7/.", "/tmp/vigil-traces/./run7/a.json"}) {
    auto d = DecideLogFile("/tmp/vigil-traces", "tr-1", requested);

    EXPECT_TRUE(d.rewritten) << requested;
    EXPECT_TRUE(d.path.starts_with("/tmp/vigil-traces/tr-1/")) << d.path;
    EXPECT_NE(d.path, "/tmp/vigil-traces/tr-1/.") << requested;
  }
  EXPECT_EQ(DecideLogFile("/tmp/vigil-traces", "tr-1", "/tmp/vigil-traces/.").path,
            "/tmp/vigil-traces/tr-1/trace.json");
}

TEST(TraceConfigTest, NamesFilesAsKinetoDoes) {
  EXPECT_EQ(KinetoTraceFileForPid("/tmp/x/trace.json", 42), "/tmp/x/trace_42.json");
  EXPECT_EQ(KinetoTraceFileForPid("/tmp/x/a.pt.trace.json", 42), "/tmp/x/a_42.pt.trace.json");
  EXPECT_EQ(KinetoTraceFileForPid("/tmp/x/trace", 42), "/tmp/x/trace");
}

}  // namespace
}  // namespace vigil
