// SPDX-License-Identifier: Apache-2.0
#include "collectors/bpf/cuda_process_totals.h"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "snoop/summary_test_util.h"

namespace vigil {
namespace {

using snoop::test_util::Api;
using snoop::test_util::Copy;

// "name{a=b,c=d} value" per sample, in write order.
std::vector<std::string> Lines(const CudaProcessTotals& totals) {
  MetricBatch batch;
  MetricWriter writer(&batch);
  totals.Write(writer);
  std::vector<std::string> lines;
  for (const Sample& s : batch.samples) {
    std::string line(s.desc->name);
    line += "{";
    for (size_t i = 0; i < s.labels.size(); ++i) {
      line += (i ? "," : "") + s.labels[i].first + "=" + s.labels[i].second;
    }
    line += "} " + std::to_string(s.value);
    lines.push_back(line);
  }
  return lines;
}

snoop::ProcessSummary Process(int pid, std::string comm, uint64_t launches) {
  snoop::ProcessSummary p;
  p.pid = pid;
  p.command = std::move(comm);
  p.launches_total = launches;
  return p;
}

// Jobs by pid, as a resolver would say; counts how often each pid is asked.
struct FakeJobs {
  std::map<int, std::string> job_of = {{10, "7"}, {11, "7"}, {12, "8"}};
  std::map<int, int> asked;
  CudaProcessTotals::LabelFn Fn() {
    return [this](int pid, const std::string& comm) {
      ++asked[pid];
      Labels labels = {{"comm", comm}, {"user", "alice"}};
      if (job_of.count(pid)) labels.emplace_back("job_id", job_of[pid]);
      SortLabels(&labels);
      return labels;
    };
  }
};

TEST(CudaProcessTotalsTest, SumsProcessesPerCommAndJobWithExactSamples) {
  FakeJobs jobs;
  CudaProcessTotals totals(jobs.Fn());
  snoop::SessionSummary s;
  s.processes = {Process(10, "train", 100), Process(11, "train", 50), Process(12, "train", 7)};
  s.processes[0].syncs_by_api = {Api("cudaStreamSynchronize", 4, 0.5),
                                 Api("cuCtxSynchronize", 1, 0.25)};
  s.processes[1].syncs_by_api = {Api("cudaStreamSynchronize", 2, 0.125)};
  s.processes[0].memory.outstanding_bytes = 1024;
  s.processes[1].memory.outstanding_bytes = 2048;
  s.processes[2].memory.outstanding_bytes = 4096;
  s.processes[0].copies = {Copy("HtoD", 3, 3000), Copy("DtoH", 1, 10)};
  s.processes[1].copies = {Copy("HtoD", 1, 500)};

  totals.Update(s);

  EXPECT_EQ(Lines(totals), (std::vector<std::string>{
                               "vigil_process_cuda_launches_total{comm=train,job_id=7,user=alice} "
                               "150.000000",
                               "vigil_process_cuda_sync_seconds_total{api=cuCtxSynchronize,comm="
                               "train,job_id=7,user=alice} 0.250000",
                               "vigil_process_cuda_sync_seconds_total{api=cudaStreamSynchronize,"
                               "comm=train,job_id=7,user=alice} 0.625000",
                               "vigil_process_cuda_device_memory_bytes{comm=train,device=0,job_id="
                               "7,user=alice} 3072.000000",
                               "vigil_process_cuda_copy_bytes_total{comm=train,job_id=7,kind=DtoH,"
                               "user=alice} 10.000000",
                               "vigil_process_cuda_copy_bytes_total{comm=train,job_id=7,kind=HtoD,"
                               "user=alice} 3500.000000",
                               "vigil_process_cuda_launches_total{comm=train,job_id=8,user=alice} "
                               "7.000000",
                               "vigil_process_cuda_device_memory_bytes{comm=train,device=0,job_id="
                               "8,user=alice} 4096.000000",
                           }));
  EXPECT_EQ(totals.groups(), 2u);
}

TEST(CudaProcessTotalsTest, CountersStayMonotonicWhenAProcessExitsOrLeaves) {
  FakeJobs jobs;
  CudaProcessTotals totals(jobs.Fn());
  snoop::SessionSummary first;
  first.processes = {Process(10, "train", 100), Process(11, "train", 50)};
  first.processes[0].memory.outstanding_bytes = 1000;
  first.processes[1].memory.outstanding_bytes = 500;
  totals.Update(first);
  // pid 10 exited (still in the snapshot, marked), pid 11 is gone from it after more launches.
  snoop::SessionSummary second;
  second.processes = {Process(10, "train", 120)};
  second.processes[0].exited = true;
  second.processes[0].memory.outstanding_bytes = 1000;

  totals.Update(second);
  std::vector<std::string> after_second = Lines(totals);
  totals.Update(second);  // The same snapshot again changes nothing.

  EXPECT_EQ(after_second,
            (std::vector<std::string>{
                "vigil_process_cuda_launches_total{comm=train,job_id=7,user=alice} 170.000000",
                "vigil_process_cuda_device_memory_bytes{comm=train,device=0,job_id=7,user=alice} "
                "0.000000",
            }));
  EXPECT_EQ(Lines(totals), after_second);
  EXPECT_EQ(jobs.asked[10], 1) << "labels are resolved once per pid";
}

TEST(CudaProcessTotalsTest, DeviceMemoryPerDeviceAndZeroOnceTheHolderLeaves) {
  FakeJobs jobs;
  CudaProcessTotals totals(jobs.Fn());
  snoop::SessionSummary first;
  first.processes = {Process(10, "train", 1), Process(11, "train", 1)};
  first.processes[0].memory.by_device = {snoop::DeviceMemory{0, 1, 0, 1000, 1000},
                                         snoop::DeviceMemory{1, 1, 0, 3000, 3000}};
  first.processes[1].memory.by_device = {snoop::DeviceMemory{1, 1, 0, 500, 500}};
  totals.Update(first);
  EXPECT_EQ(Lines(totals),
            (std::vector<std::string>{
                "vigil_process_cuda_launches_total{comm=train,job_id=7,user=alice} 2.000000",
                "vigil_process_cuda_device_memory_bytes{comm=train,device=0,job_id=7,user=alice} "
                "1000.000000",
                "vigil_process_cuda_device_memory_bytes{comm=train,device=1,job_id=7,user=alice} "
                "3500.000000",
            }));
  snoop::SessionSummary second;
  second.processes = {first.processes[1]};
  totals.Update(second);  // pid 10 left: its device-0 bytes go, the series stays at 0.
  EXPECT_EQ(Lines(totals),
            (std::vector<std::string>{
                "vigil_process_cuda_launches_total{comm=train,job_id=7,user=alice} 2.000000",
                "vigil_process_cuda_device_memory_bytes{comm=train,device=0,job_id=7,user=alice} "
                "0.000000",
                "vigil_process_cuda_device_memory_bytes{comm=train,device=1,job_id=7,user=alice} "
                "500.000000",
            }));
}

TEST(CudaProcessTotalsTest, NothingTracedWritesNothing) {
  FakeJobs jobs;
  CudaProcessTotals totals(jobs.Fn());

  totals.Update(snoop::SessionSummary{});

  EXPECT_TRUE(Lines(totals).empty());
  EXPECT_EQ(totals.groups(), 0u);
}

}  // namespace
}  // namespace vigil
