// SPDX-License-Identifier: Apache-2.0
// The bpf_cuda collector on a real kernel: the collector starts first, then the fake CUDA
// workload (tests/snoop), which it attaches to on appearance; after the workload's calls, its
// group's series hold the workload's exact counts. The workload runs under a name of its own
// (a copy of the binary) so that other CUDA processes on the host fall in other groups. Also:
// without privileges the collector is absent (PermissionDenied). Root only (CI runs as root).
#include "collectors/bpf/bpf_cuda_collector.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "../snoop/workload_plan.h"
#include "../snoop/workload_process.h"
#include "base/wait_for.h"

namespace vigil {
namespace {

namespace plan = snoop::plan;

// Series of one Collect, "name{labels}" -> value, keeping only the group of `comm`.
struct Tick {
  Status status;
  std::map<std::string, double> series;
};

Tick CollectGroup(BpfCudaCollector& collector, const std::string& comm) {
  MetricBatch batch;
  MetricWriter writer(&batch);
  Tick t;
  t.status = collector.Collect(writer);
  for (const Sample& s : batch.samples) {
    if (LabelValue(s.labels, "comm") != comm) continue;
    std::string key(s.desc->name);
    for (const auto& [name, value] : s.labels) {
      if (name == "api" || name == "kind" || name == "device") key += "{" + value + "}";
    }
    t.series[key] = s.value;
  }
  return t;
}

class BpfCudaCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to load eBPF uprobes (CI runs as root)";
  }
};

TEST_F(BpfCudaCollectorTest, AttachesToAWorkloadThatStartsLaterAndCountsItExactly) {
  const std::string comm = "bpfc_" + std::to_string(getpid() % 100000);
  char dir[] = "/tmp/bpf-cuda-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string exe = std::string(dir) + "/" + comm;
  std::filesystem::copy_file(SNOOP_WORKLOAD, exe);
  std::filesystem::permissions(exe, std::filesystem::perms::owner_all);
  CollectorContext context;
  BpfCudaCollector collector(context);
  Tick first = CollectGroup(collector, comm);
  ASSERT_TRUE(first.status.ok() || first.status.code() == StatusCode::kNotFound)
      << first.status.ToString();
  EXPECT_TRUE(first.series.empty());

  snoop::testing::WorkloadOptions wo;
  wo.path = exe;
  wo.env = {"FAKE_CUDA_SYNC_US=" + std::to_string(plan::kSyncMicros),
            std::string("LD_LIBRARY_PATH=") + FAKE_CUDA_DIR};
  StatusOr<snoop::testing::WorkloadProcess*> started = snoop::testing::WorkloadProcess::Start(wo);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  std::unique_ptr<snoop::testing::WorkloadProcess> w(*started);
  // Attached on appearance: a later tick lists its group (zero so far).
  Tick t;
  EXPECT_TRUE(WaitFor(
      [&] {
        t = CollectGroup(collector, comm);
        return t.series.count("vigil_process_cuda_launches_total") > 0;
      },
      30, std::chrono::milliseconds(50)));
  ASSERT_TRUE(t.status.ok()) << t.status.ToString();
  ASSERT_EQ(t.series["vigil_process_cuda_launches_total"], 0);
  ASSERT_TRUE(w->Do("run").ok());

  t = CollectGroup(collector, comm);

  ASSERT_TRUE(t.status.ok()) << t.status.ToString();
  EXPECT_EQ(t.series["vigil_process_cuda_launches_total"], plan::kLaunchesTotal);
  EXPECT_EQ(t.series["vigil_process_cuda_device_memory_bytes{0}"], plan::kDeviceOutstanding);
  EXPECT_EQ(t.series["vigil_process_cuda_device_memory_bytes{1}"],
            plan::kDevice1Outstanding + plan::kSegmentBytes);
  EXPECT_EQ(t.series["vigil_process_cuda_copy_bytes_total{HtoD_pinned}"], plan::kHtoDPinned * 1000);
  EXPECT_EQ(t.series["vigil_process_cuda_copy_bytes_total{DtoH_pageable}"],
            plan::kDtoHPageable * 256 + plan::kFromSymbol * 32);
  const double device_sync =
      t.series["vigil_process_cuda_sync_seconds_total{cudaDeviceSynchronize}"];
  EXPECT_GE(device_sync, plan::kDeviceSyncs * plan::kSyncMicros / 1e6);
  EXPECT_LT(device_sync, plan::kDeviceSyncs * plan::kSyncMicros / 1e6 + 1.0);
  // The workload exits: the counters keep its counts, the gauge drops to zero.
  EXPECT_EQ(w->Exit(), 0);
  EXPECT_TRUE(WaitFor(
      [&] {
        t = CollectGroup(collector, comm);
        return t.series["vigil_process_cuda_device_memory_bytes{0}"] == 0 &&
               t.series["vigil_process_cuda_device_memory_bytes{1}"] == 0;
      },
      30, std::chrono::milliseconds(50)));
  EXPECT_EQ(t.series["vigil_process_cuda_launches_total"], plan::kLaunchesTotal);
  std::filesystem::remove_all(dir);
}

TEST_F(BpfCudaCollectorTest, AbsentWithoutPrivileges) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
    CollectorContext context;
    BpfCudaCollector collector(context);
    MetricBatch batch;
    MetricWriter writer(&batch);
    Status s = collector.Collect(writer);
    _exit(s.code() == StatusCode::kPermissionDenied && IsAbsent(s) && batch.samples.empty() ? 0
                                                                                            : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);

  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace vigil
