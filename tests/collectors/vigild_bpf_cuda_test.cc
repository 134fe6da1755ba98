// SPDX-License-Identifier: Apache-2.0
// bpf_cuda inside the real vigild (capabilities dropped to what it needs, seccomp on): the
// daemon starts with --collector.bpf_cuda, the fake CUDA workload starts after it, and /metrics
// shows the workload's exact launch count under its own comm, the collector's CPU time, and,
// once the workload has exited, its device memory back at zero with the daemon still running
// (the exit is noticed through a pidfd, one of the calls seccomp allows only for this
// collector). Root only (CI runs as root).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "../daemon/vigild_process.h"
#include "../snoop/workload_plan.h"
#include "../snoop/workload_process.h"
#include "base/wait_for.h"

namespace vigil {
namespace {

namespace plan = snoop::plan;

// The value of the first series of `family` whose labels start with comm="COMM", if any.
std::optional<double> Value(const std::string& metrics, const std::string& family,
                            const std::string& comm) {
  const std::string prefix = family + "{comm=\"" + comm + "\"";
  for (size_t at = metrics.find(prefix); at != std::string::npos;
       at = metrics.find(prefix, at + 1)) {
    if (at > 0 && metrics[at - 1] != '\n') continue;
    const size_t end = metrics.find('\n', at);
    const std::string line = metrics.substr(at, end - at);
    return std::strtod(line.c_str() + line.rfind(' ') + 1, nullptr);
  }
  return std::nullopt;
}

TEST(VigildBpfCudaTest, CountsAWorkloadThatStartsAfterTheDaemonUnderSeccomp) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to load eBPF uprobes (CI runs as root)";
  testing::VigildProcess daemon;
  ASSERT_TRUE(daemon.Spawn({"--interval", "1s", "--collector.bpf_cuda"}));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();
  const std::string comm = "bpfd_" + std::to_string(getpid() % 100000);
  const std::string exe = daemon.dir() + "/" + comm;
  std::filesystem::copy_file(SNOOP_WORKLOAD, exe);
  std::filesystem::permissions(exe, std::filesystem::perms::owner_all);
  snoop::testing::WorkloadOptions wo;
  wo.path = exe;
  wo.env = {"FAKE_CUDA_SYNC_US=" + std::to_string(plan::kSyncMicros),
            std::string("LD_LIBRARY_PATH=") + FAKE_CUDA_DIR};
  StatusOr<snoop::testing::WorkloadProcess*> started = snoop::testing::WorkloadProcess::Start(wo);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  std::unique_ptr<snoop::testing::WorkloadProcess> w(*started);
  std::string metrics;
  auto scrape = [&] {
    metrics = daemon.Get("/metrics").body;
    return metrics;
  };
  // Attached once a tick lists the workload's group.
  ASSERT_TRUE(WaitFor(
      [&] { return Value(scrape(), "vigil_process_cuda_launches_total", comm).has_value(); }, 60,
      std::chrono::milliseconds(200)))
      << daemon.Log();
  ASSERT_TRUE(w->Do("run").ok());

  EXPECT_TRUE(WaitFor(
      [&] {
        return Value(scrape(), "vigil_process_cuda_launches_total", comm) ==
               double{plan::kLaunchesTotal};
      },
      60, std::chrono::milliseconds(200)))
      << metrics;
  EXPECT_EQ(Value(metrics, "vigil_process_cuda_device_memory_bytes", comm),
            double{plan::kDeviceOutstanding});
  EXPECT_NE(metrics.find("vigil_collector_cpu_seconds_total{collector=\"bpf_cuda\"} "),
            std::string::npos);
  EXPECT_NE(metrics.find("vigil_collector_success{collector=\"bpf_cuda\"} 1"), std::string::npos);
  EXPECT_EQ(w->Exit(), 0);
  EXPECT_TRUE(WaitFor(
      [&] { return Value(scrape(), "vigil_process_cuda_device_memory_bytes", comm) == 0.0; }, 60,
      std::chrono::milliseconds(200)))
      << metrics;
  EXPECT_EQ(Value(metrics, "vigil_process_cuda_launches_total", comm),
            double{plan::kLaunchesTotal});
  EXPECT_TRUE(daemon.running()) << daemon.Log();
}

}  // namespace
}  // namespace vigil
