// SPDX-License-Identifier: Apache-2.0
// Every host collector inside the real vigild on this machine's /proc and /sys, with the
// daemon's capabilities dropped and its seccomp filter on (installed after the first collection
// pass): after several passes the daemon is still running and each collector is ok, or absent
// where many hosts lack its source. A system call a collector makes that the filter does not
// allow kills the daemon, so this is where such a call shows.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../daemon/vigild_process.h"
#include "base/wait_for.h"

namespace vigil {
namespace {

using testing::VigildProcess;

// Collectors whose source many hosts lack (module not loaded, kernel option, no NUMA or IB).
const std::set<std::string> kMayBeAbsent = {"proc_conntrack", "proc_schedstat", "proc_pressure",
                                            "sys_infiniband", "sys_numa"};
const std::vector<std::string> kHostCollectors = {
    "clock_time",     "host_os",        "proc_arp",        "proc_buddyinfo", "proc_conntrack",
    "proc_cpu",       "proc_diskstats", "proc_interrupts", "proc_loadavg",   "proc_meminfo",
    "proc_netdev",    "proc_netstat",   "proc_pressure",   "proc_schedstat", "proc_sockstat",
    "proc_softnet",   "proc_sys",       "proc_udp",        "proc_vmstat",    "proc_zoneinfo",
    "sys_infiniband", "sys_numa"};

// The value of the one sample of `series` (name and labels as /metrics prints them), or "".
std::string SampleValue(const std::string& metrics, const std::string& series) {
  const size_t at = metrics.find("\n" + series + " ");
  if (at == std::string::npos) {
    return "";
  }
  const size_t start = at + series.size() + 2;
  return metrics.substr(start, metrics.find('\n', start) - start);
}

TEST(VigildHostCollectorsTest, EveryHostCollectorRunsUnderTheSeccompFilter) {
  VigildProcess d;
  std::vector<std::string> args = {"--interval", "1s", "--gpu-backend", "none"};
  for (const std::string& name : kHostCollectors) {
    args.push_back("--collector." + name);  // The opt-in ones too.
  }
  ASSERT_TRUE(d.Spawn(args)) << d.Log();
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();

  // Three different wall-time samples: at least three passes, so the filter has been on for two.
  std::set<std::string> times;
  const bool passes = WaitFor(
      [&] {
        times.insert(SampleValue(d.Get("/metrics").body, "vigil_host_time_seconds"));
        times.erase("");
        return times.size() >= 3 || !d.running();
      },
      90, std::chrono::milliseconds(200));

  ASSERT_TRUE(d.running()) << d.Log();
  ASSERT_TRUE(passes && times.size() >= 3) << d.Log();
  auto status = nlohmann::json::parse(d.Get("/api/v1/status").body, nullptr, false);
  ASSERT_FALSE(status.is_discarded());
  for (const std::string& name : kHostCollectors) {
    std::string state = "missing";
    std::string message;
    for (const auto& c : status["collectors"]) {
      if (c["name"] == name) {
        state = c["state"].get<std::string>();
        message = c["message"].get<std::string>();
      }
    }
    if (state == "absent" && kMayBeAbsent.count(name) > 0) {
      continue;
    }
    EXPECT_EQ(state, "ok") << name << ": " << message;
  }
}

}  // namespace
}  // namespace vigil
