// SPDX-License-Identifier: Apache-2.0
// perf_pmu through the real daemon on a host without a hardware PMU (the vm_host fixture's
// /sys, with this kernel's software events): vigild keeps running, `vigil status` lists the
// collector's reduced state, and /metrics carries the software events it counts instead.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/wait_for.h"
#include "vigild_process.h"

namespace vigil::testing {
namespace {

const std::string kVmHost = std::string(VIGIL_TEST_DATA_DIR) + "/pmu/vm_host";
constexpr const char* kReduced =
    "collector perf_pmu: no hardware PMU (event sources: breakpoint, msr, software, tracepoint, "
    "uprobe): software events only";

nlohmann::json PerfPmuEntry(const VigildProcess& d) {
  auto status = nlohmann::json::parse(d.Get("/api/v1/status").body, nullptr, false);
  if (!status.is_object()) return nullptr;
  for (const auto& c : status.value("collectors", nlohmann::json::array())) {
    if (c.value("name", "") == "perf_pmu") return c;
  }
  return nullptr;
}

TEST(VigildPmuTest, WithoutAHardwarePmuStatusShowsTheReducedStateAndSoftwareEventsAreExported) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "CPU-wide perf events need root or CAP_PERFMON";
  }
  VigildProcess d;
  ASSERT_TRUE(d.Spawn(
      {"--proc-root", kVmHost + "/proc", "--sys-root", kVmHost + "/sys", "--interval", "1s"}));
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();
  nlohmann::json entry;
  // Two runs, so the second one's counts are there and the collector did not stop the daemon.
  ASSERT_TRUE(WaitFor(
      [&] {
        entry = PerfPmuEntry(d);
        return entry.is_object() && entry.value("last_run_unix_ns", int64_t{0}) > 0 &&
               entry.value("samples", 0) > 0;
      },
      30, std::chrono::milliseconds(100)))
      << entry.dump() << d.Log();
  EXPECT_EQ(entry.value("state", ""), "absent") << entry.dump();

  std::string text;
  ASSERT_EQ(RunVigilCli("status --host " + d.rpc_target(), &text), 0) << text;
  EXPECT_NE(text.find("reduced features:"), std::string::npos) << text;
  EXPECT_NE(text.find(kReduced), std::string::npos) << text;

  std::string json_text;
  ASSERT_EQ(RunVigilCli("status --json --host " + d.rpc_target(), &json_text), 0) << json_text;
  auto status = nlohmann::json::parse(json_text, nullptr, false);
  ASSERT_TRUE(status.is_object()) << json_text;
  bool listed = false;
  for (const auto& r : status["reduced_features"]) {
    listed = listed || r.get<std::string>() == kReduced;
  }
  EXPECT_TRUE(listed) << status["reduced_features"].dump();

  const std::string metrics = d.Get("/metrics").body;
  EXPECT_NE(metrics.find("vigil_pmu_task_clock_seconds_total{cpu=\"all\"}"), std::string::npos);
  EXPECT_NE(metrics.find("vigil_pmu_context_switches_total{cpu=\"1\"}"), std::string::npos);
  EXPECT_NE(metrics.find("vigil_pmu_info{core_pmu=\"none\",vendor=\"intel\"} 1"),
            std::string::npos);
  EXPECT_EQ(metrics.find("vigil_pmu_instructions_total"), std::string::npos);
  EXPECT_NE(metrics.find("vigil_collector_success{collector=\"perf_pmu\"} 0"), std::string::npos);
  EXPECT_TRUE(d.running());
}

// --pmu-events and --pmu-cgroups reach the collector: only the task clock is counted, and the
// fixture host (no cgroup mounts) cannot count the cgroup, which status says.
TEST(VigildPmuTest, FlagsChooseTheEventsAndCgroups) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "CPU-wide perf events need root or CAP_PERFMON";
  }
  VigildProcess d;
  ASSERT_TRUE(
      d.Spawn({"--proc-root", kVmHost + "/proc", "--sys-root", kVmHost + "/sys", "--interval", "1s",
               "--pmu-events", "task-clock", "--pmu-cgroups", "/slurm/job_1"}));
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();
  nlohmann::json entry;
  ASSERT_TRUE(WaitFor(
      [&] {
        entry = PerfPmuEntry(d);
        return entry.is_object() && entry.value("samples", 0) > 0;
      },
      30, std::chrono::milliseconds(100)))
      << entry.dump() << d.Log();
  EXPECT_EQ(entry.value("message", ""),
            "no hardware PMU (event sources: breakpoint, msr, software, tracepoint, uprobe): "
            "software events only; cgroups: no perf_event cgroup hierarchy is mounted");
  const std::string metrics = d.Get("/metrics").body;
  EXPECT_NE(metrics.find("vigil_pmu_task_clock_seconds_total{cpu=\"all\"}"), std::string::npos);
  EXPECT_EQ(metrics.find("vigil_pmu_context_switches_total"), std::string::npos);
  EXPECT_NE(metrics.find("vigil_pmu_unavailable_events 1"), std::string::npos) << metrics;
}

// Switched off and on again by SIGHUP, the collector is created anew after the system-call
// allow-list is in place and opens its events again: perf_event_open must be on that list.
TEST(VigildPmuTest, ReEnabledByAReloadItOpensItsEventsUnderTheSeccompFilter) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "CPU-wide perf events need root or CAP_PERFMON";
  }
  VigildProcess d;
  const std::string config = d.dir() + "/vigild.toml";
  ASSERT_TRUE(WriteFileAtomic(config, "interval = \"1s\"\n").ok());
  ASSERT_TRUE(d.Spawn(
      {"--config", config, "--proc-root", kVmHost + "/proc", "--sys-root", kVmHost + "/sys"}));
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();
  nlohmann::json entry;
  auto state_is = [&](const std::string& state, int64_t after_ns) {
    return WaitFor(
        [&] {
          entry = PerfPmuEntry(d);
          return entry.is_object() && entry.value("state", "") == state &&
                 entry.value("last_run_unix_ns", int64_t{0}) > after_ns;
        },
        30, std::chrono::milliseconds(100));
  };
  ASSERT_TRUE(state_is("absent", 0)) << entry.dump() << d.Log();
  ASSERT_TRUE(
      WriteFileAtomic(config, "interval = \"1s\"\n[collectors.perf_pmu]\nenabled = false\n").ok());
  d.Signal(SIGHUP);
  ASSERT_TRUE(WaitFor(
      [&] {
        entry = PerfPmuEntry(d);
        return entry.is_object() && entry.value("state", "") == "disabled";
      },
      30, std::chrono::milliseconds(100)))
      << entry.dump() << d.Log();
  const int64_t disabled_at = entry.value("last_run_unix_ns", int64_t{0});

  ASSERT_TRUE(WriteFileAtomic(config, "interval = \"1s\"\n").ok());
  d.Signal(SIGHUP);
  ASSERT_TRUE(state_is("absent", disabled_at)) << entry.dump() << d.Log();
  EXPECT_GT(entry.value("samples", 0), 0) << entry.dump();
  EXPECT_EQ(entry.value("message", ""), std::string(kReduced).substr(20)) << entry.dump();
  EXPECT_TRUE(d.running()) << d.Log();
  EXPECT_EQ(d.Log().find("is not on the allow-list"), std::string::npos) << d.Log();
}

}  // namespace
}  // namespace vigil::testing
