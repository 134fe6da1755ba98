// SPDX-License-Identifier: Apache-2.0
// vigil snoop's probes on real processes: the workload makes known calls into the fake CUDA
// runtime, driver and caching allocator, and a real session must report exactly those counts,
// bytes, kernel names and allocation stacks. Needs root (eBPF uprobes); skips otherwise.
#include <dirent.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/wait_for.h"
#include "profile/elf_image.h"
#include "snoop/cuda_api_table.h"
#include "snoop/framework_gap.h"
#include "snoop/probe_attacher.h"
#include "snoop/snoop_session.h"
#include "workload_plan.h"
#include "workload_process.h"

namespace vigil::snoop {
namespace {

namespace plan = vigil::snoop::plan;
using testing::WorkloadOptions;
using testing::WorkloadProcess;

constexpr double kSyncSeconds = plan::kSyncMicros / 1e6;
const std::string kSyncEnv = "FAKE_CUDA_SYNC_US=" + std::to_string(plan::kSyncMicros);

class SnoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to load eBPF uprobes (CI runs as root)";
  }

  std::unique_ptr<WorkloadProcess> StartWorkload(WorkloadOptions o = {}) {
    if (o.path.empty()) o.path = SNOOP_WORKLOAD;
    o.env.push_back(kSyncEnv);
    StatusOr<WorkloadProcess*> w = WorkloadProcess::Start(o);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return std::unique_ptr<WorkloadProcess>(w.ok() ? *w : nullptr);
  }

  std::unique_ptr<SnoopSession> StartSession(SnoopOptions o) {
    StatusOr<std::unique_ptr<SnoopSession>> s = SnoopSession::Start(o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }
};

const ProcessSummary* Find(const SessionSummary& s, int pid) {
  for (const ProcessSummary& p : s.processes) {
    if (p.pid == pid) return &p;
  }
  return nullptr;
}

uint64_t Launches(const ProcessSummary& p, const std::string& name) {
  for (const auto& k : p.launches_by_kernel) {
    if (k.name == name) return k.count;
  }
  return 0;
}

const ApiCalls* Sync(const ProcessSummary& p, const std::string& api) {
  for (const auto& a : p.syncs_by_api) {
    if (a.api == api) return &a;
  }
  return nullptr;
}

const CopyKind* Copy(const ProcessSummary& p, const std::string& kind) {
  for (const auto& c : p.copies) {
    if (c.kind == kind) return &c;
  }
  return nullptr;
}

bool StackHas(const CallStack& s, const std::string& function) {
  return std::any_of(s.frames.begin(), s.frames.end(),
                     [&](const std::string& f) { return f.find(function) != std::string::npos; });
}

const LeakGroup* LeakFrom(const MemoryView& m, const std::string& function) {
  for (const auto& l : m.leaks) {
    if (StackHas(l.stack, function)) return &l;
  }
  return nullptr;
}

// Perf-event and BPF-link descriptors this process holds: what an attached uprobe keeps open.
int ProbeFds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  while (dirent* e = readdir(d)) {
    char target[256] = {};
    std::string path = std::string("/proc/self/fd/") + e->d_name;
    ssize_t len = readlink(path.c_str(), target, sizeof(target) - 1);
    if (len <= 0) continue;
    std::string t(target, static_cast<size_t>(len));
    if (t == "anon_inode:[perf_event]" || t == "anon_inode:bpf_link") ++n;
  }
  closedir(d);
  return n;
}

void ExpectLaunches(const ProcessSummary& p) {
  EXPECT_EQ(p.launches_total, static_cast<uint64_t>(plan::kLaunchesTotal));
  EXPECT_EQ(Launches(p, "kernels::gemm_bf16(float*)"), uint64_t{plan::kGemmLaunches});
  EXPECT_EQ(Launches(p, "void kernels::softmax<float>(float*, int)"),
            uint64_t{plan::kSoftmaxLaunches});
  EXPECT_EQ(Launches(p, "kernels::layer_norm(float*)"), uint64_t{plan::kLayerNormLaunches});
  EXPECT_EQ(Launches(p, "kernels::reduce(double*)"), uint64_t{plan::kReduceLaunches});
  EXPECT_EQ(Launches(p, plan::kTritonName), uint64_t{plan::kTritonLaunches});
  EXPECT_EQ(Launches(p, plan::kRmsNormDemangled), uint64_t{plan::kRmsNormLaunches});
  EXPECT_EQ(Launches(p, plan::kFlashName), uint64_t{plan::kFlashLaunches});
  EXPECT_EQ(p.launches_by_kernel.size(), 7u);
  EXPECT_EQ(p.graph_launches, uint64_t{plan::kRuntimeGraphLaunches + plan::kDriverGraphLaunches});
  ASSERT_FALSE(p.launches_by_kernel.empty());
  EXPECT_EQ(p.launches_by_kernel[0].name, "kernels::gemm_bf16(float*)");  // Most launched first.
}

void ExpectSyncs(const ProcessSummary& p) {
  EXPECT_EQ(p.syncs_count, uint64_t{plan::kSyncsTotal});
  EXPECT_GE(p.syncs_seconds, plan::kSyncsTotal * kSyncSeconds);
  EXPECT_LT(p.syncs_seconds, plan::kSyncsTotal * kSyncSeconds + 5.0);
  struct Want {
    const char* api;
    int count;
  };
  for (Want w :
       {Want{"cudaDeviceSynchronize", plan::kDeviceSyncs},
        Want{"cudaStreamSynchronize", plan::kStreamSyncs},
        Want{"cudaEventSynchronize", plan::kEventSyncs},
        Want{"cudaStreamWaitEvent", plan::kStreamWaits}, Want{"cuCtxSynchronize", plan::kCtxSyncs},
        Want{"cuStreamSynchronize", plan::kCuStreamSyncs},
        Want{"cuEventSynchronize", plan::kCuEventSyncs}}) {
    const ApiCalls* a = Sync(p, w.api);
    ASSERT_NE(a, nullptr) << w.api;
    EXPECT_EQ(a->count, uint64_t(w.count)) << w.api;
    EXPECT_GE(a->seconds, w.count * kSyncSeconds) << w.api;
    uint64_t in_histogram = 0;
    for (const auto& b : a->histogram) {
      in_histogram += b.count;
      EXPECT_GE(b.upper_ns, uint64_t{plan::kSyncMicros} * 1000) << w.api;
    }
    EXPECT_EQ(in_histogram, a->count) << w.api;
  }
  const SyncStack* device = nullptr;
  for (const auto& s : p.syncs_by_stack) {
    if (s.api == "cudaDeviceSynchronize") device = &s;
  }
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(device->count, uint64_t{plan::kDeviceSyncs});
  EXPECT_TRUE(StackHas(device->stack, "wait_for_gpu"));
}

void ExpectCopies(const ProcessSummary& p) {
  struct Want {
    const char* kind;
    uint64_t count;
    uint64_t bytes;
  };
  const Want wants[] = {
      {"HtoD_pinned", plan::kHtoDPinned, plan::kHtoDPinned * 1000},
      {"HtoD_pageable", plan::kHtoDPageableRuntime + plan::kHtoDPageableDriver + plan::kToSymbol,
       plan::kHtoDPageableRuntime * 500 + plan::kHtoDPageableDriver * 100 + plan::kToSymbol * 64},
      {"DtoH_pageable", plan::kDtoHPageable + plan::kFromSymbol,
       plan::kDtoHPageable * 256 + plan::kFromSymbol * 32},
      {"DtoH_pinned", plan::kDtoHPinned, plan::kDtoHPinned * 300},
      {"DtoD", plan::kDtoDRuntime + plan::kDtoDDriver + plan::kPeer,
       plan::kDtoDRuntime * 4096 + plan::kDtoDDriver * 50 + plan::kPeer * 2048},
      {"default", plan::kDefault, plan::kDefault * 77},
      {"HtoH_pageable", plan::kHtoH, plan::kHtoH * 10},
  };
  for (const Want& w : wants) {
    const CopyKind* c = Copy(p, w.kind);
    ASSERT_NE(c, nullptr) << w.kind;
    EXPECT_EQ(c->count, w.count) << w.kind;
    EXPECT_EQ(c->bytes, w.bytes) << w.kind;
  }
  EXPECT_EQ(p.copies.size(), std::size(wants));
}

// Driver view; `with_framework`: the caching allocator's segment is part of it.
std::string DescribeLeaks(const MemoryView& m) {
  std::string out;
  for (const auto& l : m.leaks) {
    out += l.api + " " + std::to_string(l.bytes) + "/" + std::to_string(l.count) + ":";
    for (const auto& f : l.stack.frames) out += " " + f;
    out += "\n";
  }
  return out;
}

// One device's row of a view, or null.
const DeviceMemory* OnDevice(const MemoryView& m, int device) {
  for (const DeviceMemory& d : m.by_device) {
    if (d.device == device) return &d;
  }
  return nullptr;
}

void ExpectDeviceMemory(const ProcessSummary& p, bool with_framework) {
  const MemoryView& m = p.memory;
  SCOPED_TRACE(DescribeLeaks(m));
  int segments = with_framework ? 1 : 0;  // Per device.
  // Device 0: everything but second_device() and the caching allocator's device-1 blocks.
  ASSERT_EQ(m.by_device.size(), 2u);
  const DeviceMemory* d0 = OnDevice(m, 0);
  ASSERT_NE(d0, nullptr);
  EXPECT_EQ(d0->allocations, uint64_t(plan::kDeviceAllocations - 1 + segments));
  EXPECT_EQ(d0->frees, uint64_t{plan::kDeviceFrees});
  size_t outstanding0 = plan::kDeviceOutstanding - (with_framework ? 0 : plan::kSegmentBytes);
  EXPECT_EQ(d0->outstanding_bytes, outstanding0);
  size_t peak0 = with_framework ? plan::kDevicePeak : outstanding0 + plan::kVmmBytes;  // VMM.
  EXPECT_EQ(d0->peak_bytes, peak0);
  // Device 1: set by cudaSetDevice (runtime) and by the caching allocator's device argument.
  const DeviceMemory* d1 = OnDevice(m, 1);
  ASSERT_NE(d1, nullptr);
  EXPECT_EQ(d1->allocations, uint64_t(plan::kDevice1Allocations + segments));
  EXPECT_EQ(d1->frees, uint64_t{plan::kDevice1Frees});
  size_t outstanding1 = plan::kDevice1Outstanding + segments * plan::kSegmentBytes;
  EXPECT_EQ(d1->outstanding_bytes, outstanding1);
  size_t peak1 = with_framework ? outstanding1 : plan::kDevice1Peak;
  EXPECT_EQ(d1->peak_bytes, peak1);
  // The totals are the devices' sums.
  EXPECT_EQ(m.allocations, d0->allocations + d1->allocations);
  EXPECT_EQ(m.frees, d0->frees + d1->frees);
  EXPECT_EQ(m.outstanding_bytes, outstanding0 + outstanding1);
  EXPECT_EQ(m.peak_bytes, peak0 + peak1);
  EXPECT_EQ(m.mapped_bytes, 0u);  // Mapped, then unmapped.
  EXPECT_EQ(m.host_outstanding_bytes, 0u);
  EXPECT_EQ(m.host_peak_bytes, plan::kPinnedBytes + plan::kHostAllocBytes);
  const LeakGroup* act = LeakFrom(m, "leak_activations");
  ASSERT_NE(act, nullptr);
  EXPECT_EQ(act->count, uint64_t{plan::kLeakedActivations});
  EXPECT_EQ(act->bytes, plan::kLeakedActivations * plan::kActivationBytes);
  EXPECT_EQ(act->api, "cudaMalloc");
  const LeakGroup* drv = LeakFrom(m, "driver_leak");
  ASSERT_NE(drv, nullptr);
  EXPECT_EQ(drv->count, 1u);
  EXPECT_EQ(drv->bytes, plan::kDriverBytes);
  EXPECT_EQ(drv->api, "cuMemAlloc_v2");
  // second_device()'s runtime and driver allocations, both on device 1 (a group per API).
  uint64_t second_runtime = 0;
  uint64_t second_driver = 0;
  for (const LeakGroup& l : m.leaks) {
    bool in_second = false;
    for (const auto& f : l.stack.frames) in_second |= f.find("second_device") != std::string::npos;
    if (in_second && l.api == "cudaMalloc") second_runtime += l.bytes;
    if (in_second && l.api == "cuMemAlloc_v2") second_driver += l.bytes;
  }
  EXPECT_EQ(second_runtime, plan::kDevice1Bytes);
  EXPECT_EQ(second_driver, plan::kDriverDevice1Bytes);
  // Two segments (one per device) come from two call sites in framework_allocs.
  EXPECT_EQ(m.leaks.size(), size_t(4 + 2 * segments));
  if (with_framework) {
    const LeakGroup* seg = LeakFrom(m, "NativeCachingAllocator::malloc");
    ASSERT_NE(seg, nullptr);
    EXPECT_EQ(seg->bytes, plan::kSegmentBytes);
  }
  uint64_t histogram = 0;
  for (const auto& b : m.size_histogram) histogram += b.count;
  EXPECT_EQ(histogram, m.allocations);
}

void ExpectFrameworkMemory(const ProcessSummary& p) {
  ASSERT_TRUE(p.has_framework_memory);
  const MemoryView& f = p.framework_memory;
  ASSERT_EQ(f.by_device.size(), 2u);
  const DeviceMemory* d0 = OnDevice(f, 0);
  ASSERT_NE(d0, nullptr);
  EXPECT_EQ(d0->allocations, uint64_t{plan::kFrameworkAllocations});
  EXPECT_EQ(d0->frees, uint64_t{plan::kFrameworkFrees});
  EXPECT_EQ(d0->outstanding_bytes, plan::kFrameworkOutstanding);
  EXPECT_EQ(d0->peak_bytes, plan::kFrameworkPeak);  // Six blocks, four freed, two raw allocs.
  const DeviceMemory* d1 = OnDevice(f, 1);
  ASSERT_NE(d1, nullptr);
  EXPECT_EQ(d1->allocations, uint64_t{plan::kFrameworkDevice1Allocations});
  EXPECT_EQ(d1->frees, uint64_t{plan::kFrameworkDevice1Frees});
  EXPECT_EQ(d1->outstanding_bytes, plan::kFrameworkDevice1Outstanding);
  EXPECT_EQ(d1->peak_bytes, plan::kFrameworkDevice1Peak);
  EXPECT_EQ(f.allocations,
            uint64_t{plan::kFrameworkAllocations + plan::kFrameworkDevice1Allocations});
  EXPECT_EQ(f.frees, uint64_t{plan::kFrameworkFrees + plan::kFrameworkDevice1Frees});
  EXPECT_EQ(f.outstanding_bytes, plan::kFrameworkOutstanding + plan::kFrameworkDevice1Outstanding);
  EXPECT_EQ(f.peak_bytes, plan::kFrameworkPeak + plan::kFrameworkDevice1Peak);
  const LeakGroup* blocks = LeakFrom(f, "framework_allocs");
  ASSERT_NE(blocks, nullptr);
  uint64_t leaked = 0;
  for (const auto& l : f.leaks) leaked += l.bytes;
  EXPECT_EQ(leaked, plan::kFrameworkOutstanding + plan::kFrameworkDevice1Outstanding);
  // Held by the driver, not in use by the framework.
  EXPECT_EQ(FrameworkGapBytes(p), plan::kFrameworkGap);
  std::vector<DeviceGap> gaps = FrameworkGapByDevice(p);
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].device, 0);
  EXPECT_EQ(gaps[0].bytes, plan::kFrameworkGapDevice0);
  EXPECT_EQ(gaps[1].device, 1);
  EXPECT_EQ(gaps[1].bytes, plan::kFrameworkGapDevice1);
}

// Where the probes go in the fakes. The runtime is a CET build: cudaLaunchKernel starts with
// endbr64 then push %rbp, so its probe sits on the push (where every exact count in these tests
// is then taken); cudaMalloc goes on with a mov, and its probe stays on entry. The driver is no
// CET build. A return probe goes where the call's entry probe goes. No root needed.
TEST(SnoopProbeSites, PastEndbr64OntoAPushOtherwiseOnTheFunction) {
  for (auto [provider, library, symbol, skip] :
       {std::tuple{CudaLibrary::kRuntime, "libcudart.so.12", "cudaLaunchKernel", 4u},
        std::tuple{CudaLibrary::kRuntime, "libcudart.so.12", "cudaMalloc", 0u},
        std::tuple{CudaLibrary::kDriver, "libcuda.so.1", "cuLaunchKernel", 0u}}) {
    CudaLibraryFile file;
    file.provider = provider;
    file.path = file.open_path = std::string(FAKE_CUDA_DIR) + "/" + library;
    StatusOr<ProbePlan> plan = PlanProbes(file);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    StatusOr<ElfImage> image = ElfImage::Load(file.path, /*look_for_debug_file=*/false);
    ASSERT_TRUE(image.ok()) << image.status().ToString();
    std::optional<ElfSymbol> sym = image->FindSymbol(symbol);
    ASSERT_TRUE(sym.has_value()) << symbol;
    std::optional<uint64_t> function = image->FileOffsetOfAddress(sym->address);
    ASSERT_TRUE(function.has_value()) << symbol;
    std::optional<size_t> row = FindCudaApi(symbol);
    ASSERT_TRUE(row.has_value()) << symbol;
    auto at = std::find(plan->entry_cookies.begin(), plan->entry_cookies.end(), *row);
    ASSERT_NE(at, plan->entry_cookies.end()) << symbol;
    EXPECT_EQ(plan->entry_offsets[at - plan->entry_cookies.begin()], *function + skip) << symbol;
    for (size_t i = 0; i < plan->ret_offsets.size(); ++i) {
      auto entry =
          std::find(plan->entry_cookies.begin(), plan->entry_cookies.end(), plan->ret_cookies[i]);
      ASSERT_NE(entry, plan->entry_cookies.end());
      EXPECT_EQ(plan->ret_offsets[i], plan->entry_offsets[entry - plan->entry_cookies.begin()]);
    }
  }
}

TEST_F(SnoopTest, DynamicWorkloadExactCountsNamesBytesAndLeaks) {
  auto w = StartWorkload();
  ASSERT_TRUE(w);
  SnoopOptions o;
  o.pids = {w->pid()};
  o.leak_age_seconds = 0;
  auto session = StartSession(o);
  ASSERT_TRUE(session);
  std::vector<AttachedLibrary> libs = session->LibrariesOf(w->pid());
  ASSERT_EQ(libs.size(), 3u);
  ASSERT_TRUE(w->Do("run").ok());
  ASSERT_TRUE(session->Poll(std::chrono::milliseconds(0)).ok());
  SessionSummary s = session->Snapshot();
  const ProcessSummary* p = Find(s, w->pid());
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->command, "snoop_workload");
  EXPECT_FALSE(p->exited);
  EXPECT_TRUE(p->python.empty());  // Not CPython: native frames, no Python layout.
  EXPECT_FALSE(s.sampled);
  ExpectLaunches(*p);
  ExpectSyncs(*p);
  ExpectCopies(*p);
  ExpectDeviceMemory(*p, /*with_framework=*/true);
  ExpectFrameworkMemory(*p);
  // The framework holds less than the driver: the rest of the segment is cached, unused.
  EXPECT_LT(p->framework_memory.outstanding_bytes, plan::kSegmentBytes);
}

TEST_F(SnoopTest, OneLinkPerProbeAsOnOlderKernels) {
  auto w = StartWorkload();
  ASSERT_TRUE(w);
  int before = ProbeFds();
  {
    SnoopOptions o;
    o.pids = {w->pid()};
    o.leak_age_seconds = 0;
    o.multi_uprobe_links = false;
    auto session = StartSession(o);
    ASSERT_TRUE(session);
    EXPECT_GE(ProbeFds(), before + session->probes_attached());
    ASSERT_TRUE(w->Do("run").ok());
    SessionSummary s = session->Snapshot();
    const ProcessSummary* p = Find(s, w->pid());
    ASSERT_NE(p, nullptr);
    ExpectLaunches(*p);
    ExpectSyncs(*p);
    ExpectCopies(*p);
    ExpectDeviceMemory(*p, /*with_framework=*/true);
    ExpectFrameworkMemory(*p);
  }
  EXPECT_EQ(ProbeFds(), before);
}

TEST_F(SnoopTest, ProbesDetachWhenTheSessionEnds) {
  auto w = StartWorkload();
  ASSERT_TRUE(w);
  int before = ProbeFds();
  {
    SnoopOptions o;
    o.pids = {w->pid()};
    auto session = StartSession(o);
    ASSERT_TRUE(session);
    EXPECT_GT(session->probes_attached(), 40);
    EXPECT_GT(ProbeFds(), before);
  }
  EXPECT_EQ(ProbeFds(), before);
  std::string events;
  if (ReadFileInto("/sys/kernel/tracing/uprobe_events", &events).ok()) {
    EXPECT_EQ(events.find("libcudart"), std::string::npos) << events;
  }
  // The workload runs on unprobed, and a new session counts only what it saw.
  ASSERT_TRUE(w->Do("run").ok());
  SnoopOptions o;
  o.pids = {w->pid()};
  auto session = StartSession(o);
  ASSERT_TRUE(session);
  SessionSummary s = session->Snapshot();
  const ProcessSummary* p = Find(s, w->pid());
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->launches_total, 0u);
}

TEST_F(SnoopTest, StaticCudartInTheExecutable) {
  WorkloadOptions wo;
  wo.path = SNOOP_WORKLOAD_STATIC;
  auto w = StartWorkload(wo);
  ASSERT_TRUE(w);
  SnoopOptions o;
  o.pids = {w->pid()};
  o.leak_age_seconds = 0;
  auto session = StartSession(o);
  ASSERT_TRUE(session);
  ASSERT_TRUE(w->Do("run").ok());
  ASSERT_TRUE(session->Poll(std::chrono::milliseconds(0)).ok());
  SessionSummary s = session->Snapshot();
  const ProcessSummary* p = Find(s, w->pid());
  ASSERT_NE(p, nullptr);
  EXPECT_NE(std::find(p->libraries.begin(), p->libraries.end(),
                      "(static in " + std::string(SNOOP_WORKLOAD_STATIC) + ")"),
            p->libraries.end());
  ExpectLaunches(*p);
  ExpectSyncs(*p);
  ExpectCopies(*p);
  ExpectDeviceMemory(*p, /*with_framework=*/false);
  EXPECT_FALSE(p->has_framework_memory);
}

TEST_F(SnoopTest, WorkloadInAnotherMountNamespace) {
  char dir[] = "/tmp/vigil-snoop-ns-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  WorkloadOptions wo;
  wo.private_dir = dir;
  for (const char* lib : {"libcudart.so.12", "libcuda.so.1", "libc10_cuda.so"}) {
    wo.private_libs.push_back(std::string(FAKE_CUDA_DIR) + "/" + lib);
  }
  auto w = StartWorkload(wo);
  ASSERT_TRUE(w);
  // The libraries it maps are on its private tmpfs: the path does not exist here.
  const std::string cudart = std::string(dir) + "/libcudart.so.12";
  EXPECT_FALSE(PathExists(cudart));
  SnoopOptions o;
  o.pids = {w->pid()};
  o.leak_age_seconds = 0;
  auto session = StartSession(o);
  ASSERT_TRUE(session);
  std::vector<AttachedLibrary> libs = session->LibrariesOf(w->pid());
  EXPECT_TRUE(std::any_of(libs.begin(), libs.end(),
                          [&](const AttachedLibrary& l) { return l.path == cudart; }));
  ASSERT_TRUE(w->Do("run").ok());
  ASSERT_TRUE(session->Poll(std::chrono::milliseconds(0)).ok());
  SessionSummary s = session->Snapshot();
  const ProcessSummary* p = Find(s, w->pid());
  ASSERT_NE(p, nullptr);
  ExpectLaunches(*p);
  ExpectSyncs(*p);
  ExpectCopies(*p);
  ExpectDeviceMemory(*p, /*with_framework=*/true);
  ExpectFrameworkMemory(*p);
  w.reset();
  rmdir(dir);
}

TEST_F(SnoopTest, FollowsAProcessThatStartsAfterTheSession) {
  SnoopOptions o;
  o.follow_new_processes = true;
  o.scan_interval = std::chrono::milliseconds(20);
  o.leak_age_seconds = 0;
  auto session = StartSession(o);
  ASSERT_TRUE(session);
  auto w = StartWorkload();
  ASSERT_TRUE(w);
  bool traced = WaitFor([&] {
    session->Poll(std::chrono::milliseconds(10)).IgnoreError();
    auto pids = session->TracedPids();
    return std::find(pids.begin(), pids.end(), w->pid()) != pids.end();
  });
  ASSERT_TRUE(traced);
  ASSERT_TRUE(w->Do("run").ok());
  ASSERT_TRUE(session->Poll(std::chrono::milliseconds(0)).ok());
  SessionSummary s = session->Snapshot();
  const ProcessSummary* p = Find(s, w->pid());
  ASSERT_NE(p, nullptr);
  ExpectLaunches(*p);
  ExpectSyncs(*p);
  ExpectDeviceMemory(*p, /*with_framework=*/true);
}

TEST_F(SnoopTest, FollowsANewCallerOfAProbedLibraryBeforeAnyScan) {
  auto first = StartWorkload();
  ASSERT_TRUE(first);
  SnoopOptions o;
  o.pids = {first->pid()};  // Probes the fake libraries.
  o.follow_new_processes = true;
  o.scan_interval = std::chrono::hours(1);  // No /proc scan during the test.
  o.leak_age_seconds = 0;
  auto session = StartSession(o);
  ASSERT_TRUE(session);
  auto w = StartWorkload();
  ASSERT_TRUE(w);
  session->Poll(std::chrono::milliseconds(0)).IgnoreError();
  auto pids = session->TracedPids();
  EXPECT_EQ(std::find(pids.begin(), pids.end(), w->pid()), pids.end());
  // Its first calls are what shows it; it is traced from the next Poll on.
  ASSERT_TRUE(w->Do("run").ok());
  session->Poll(std::chrono::milliseconds(0)).IgnoreError();
  pids = session->TracedPids();
  ASSERT_NE(std::find(pids.begin(), pids.end(), w->pid()), pids.end());
  ASSERT_TRUE(w->Do("run").ok());
  SessionSummary s = session->Snapshot();
  const ProcessSummary* p = Find(s, w->pid());
  ASSERT_NE(p, nullptr);
  ExpectLaunches(*p);
  ExpectSyncs(*p);
  ExpectCopies(*p);
}

// The probes are on the file, so every process mapping it traps; only the traced pid's bit
// lets a call through. Two workloads started one after the other usually have pids in the
// same word of the bitmap.
TEST_F(SnoopTest, CountsOnlyTheTracedOfTwoProcessesMappingTheSameLibraries) {
  auto traced = StartWorkload();
  auto other = StartWorkload();
  ASSERT_TRUE(traced && other);
  SnoopOptions o;
  o.pids = {traced->pid()};
  o.leak_age_seconds = 0;
  auto session = StartSession(o);
  ASSERT_TRUE(session);
  ASSERT_TRUE(other->Do("run").ok());
  ASSERT_TRUE(traced->Do("run").ok());
  ASSERT_TRUE(other->Do("run").ok());
  ASSERT_TRUE(session->Poll(std::chrono::milliseconds(0)).ok());
  SessionSummary s = session->Snapshot();
  EXPECT_EQ(Find(s, other->pid()), nullptr);
  const ProcessSummary* p = Find(s, traced->pid());
  ASSERT_NE(p, nullptr);
  ExpectLaunches(*p);
  ExpectSyncs(*p);
  ExpectCopies(*p);
}

TEST_F(SnoopTest, TargetExitingMidTraceKeepsItsSummary) {
  auto w = StartWorkload();
  ASSERT_TRUE(w);
  SnoopOptions o;
  o.pids = {w->pid()};
  o.leak_age_seconds = 0;
  auto session = StartSession(o);
  ASSERT_TRUE(session);
  ASSERT_TRUE(w->Do("run").ok());
  int pid = w->pid();
  EXPECT_EQ(w->Exit(), 0);
  bool exited = WaitFor([&] {
    session->Poll(std::chrono::milliseconds(10)).IgnoreError();
    return session->TracedPids().empty();
  });
  ASSERT_TRUE(exited);
  SessionSummary s = session->Snapshot();
  const ProcessSummary* p = Find(s, pid);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->exited);
  ExpectLaunches(*p);
  ExpectSyncs(*p);
  ExpectCopies(*p);
  ExpectDeviceMemory(*p, /*with_framework=*/true);
}

TEST_F(SnoopTest, SpawnedCommandIsTracedFromItsFirstCall) {
  setenv("FAKE_CUDA_SYNC_US", std::to_string(plan::kSyncMicros).c_str(), 1);
  SnoopOptions o;
  o.leak_age_seconds = 0;
  auto session = StartSession(o);
  ASSERT_TRUE(session);
  StatusOr<int> pid = session->SpawnStopped({SNOOP_WORKLOAD, "--auto"});
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  Status released = session->Release(*pid);
  ASSERT_TRUE(released.ok()) << released.ToString();
  int status = testing::WaitChild(*pid, 60);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ASSERT_TRUE(WaitFor([&] {
    session->Poll(std::chrono::milliseconds(10)).IgnoreError();
    return session->TracedPids().empty();
  }));
  SessionSummary s = session->Snapshot();
  const ProcessSummary* p = Find(s, *pid);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->exited);
  ExpectLaunches(*p);
  ExpectSyncs(*p);
  ExpectCopies(*p);
  ExpectDeviceMemory(*p, /*with_framework=*/true);
  ExpectFrameworkMemory(*p);
  unsetenv("FAKE_CUDA_SYNC_US");
}

TEST_F(SnoopTest, RawEventsOnTheUnixClock) {
  auto w = StartWorkload();
  ASSERT_TRUE(w);
  SnoopOptions o;
  o.pids = {w->pid()};
  o.raw_events = true;
  auto session = StartSession(o);
  ASSERT_TRUE(session);
  auto unix_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  int64_t before = unix_ns();
  ASSERT_TRUE(w->Do("run").ok());
  int64_t after = unix_ns();
  ASSERT_TRUE(session->Poll(std::chrono::milliseconds(0)).ok());
  std::vector<RawEvent> events = session->TakeRawEvents();
  int launches = 0;
  int syncs = 0;
  int gemm = 0;
  for (const RawEvent& e : events) {
    EXPECT_GE(e.start_unix_ns, before - 50'000'000);  // Clocks converted once: small slack.
    EXPECT_LE(e.start_unix_ns, after + 50'000'000);
    EXPECT_EQ(e.pid, w->pid());
    if (e.group == ApiGroup::kLaunch) ++launches;
    if (e.kernel == "kernels::gemm_bf16(float*)") ++gemm;
    if (e.group == ApiGroup::kSync) {
      ++syncs;
      EXPECT_GE(e.duration_ns, int64_t{plan::kSyncMicros} * 1000) << e.api;
    }
  }
  EXPECT_EQ(launches, plan::kLaunchesTotal);
  EXPECT_EQ(gemm, plan::kGemmLaunches);
  EXPECT_EQ(syncs, plan::kSyncsTotal);
  EXPECT_TRUE(std::is_sorted(events.begin(), events.end(), [](const auto& a, const auto& b) {
    return a.start_unix_ns < b.start_unix_ns;
  }));
  EXPECT_TRUE(session->TakeRawEvents().empty());
}

TEST_F(SnoopTest, SamplesWhenTheEventBudgetIsExceeded) {
  auto w = StartWorkload();
  ASSERT_TRUE(w);
  SnoopOptions o;
  o.pids = {w->pid()};
  o.event_budget_per_second = 1000;
  auto session = StartSession(o);
  ASSERT_TRUE(session);
  constexpr int kLoop = 50000;
  ASSERT_TRUE(w->Do("loop " + std::to_string(kLoop)).ok());
  // The budget is checked over at least a quarter second.
  ASSERT_TRUE(WaitFor(
      [&] {
        session->Poll(std::chrono::milliseconds(50)).IgnoreError();
        return session->Snapshot().sampled;
      },
      10));
  ASSERT_TRUE(w->Do("loop " + std::to_string(kLoop)).ok());
  session->Poll(std::chrono::milliseconds(0)).IgnoreError();
  SessionSummary s = session->Snapshot();
  const ProcessSummary* p = Find(s, w->pid());
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(s.sampled);
  EXPECT_LT(s.sample_ratio, 1.0);
  EXPECT_EQ(s.events_seen, uint64_t{2 * kLoop});
  // Each recorded launch counts for the launches it stands for: the total estimates all of them,
  // within one sampling step per change of rate (the recorded ones alone would be about kLoop).
  EXPECT_GT(p->launches_total, uint64_t{3 * kLoop / 2});
  EXPECT_LT(p->launches_total, uint64_t{5 * kLoop / 2});
}

TEST_F(SnoopTest, NonRootIsPermissionDenied) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
    Status p = CheckSnoopPrivileges();
    if (p.code() != StatusCode::kPermissionDenied) _exit(11);
    SnoopOptions o;
    StatusOr<std::unique_ptr<SnoopSession>> s = SnoopSession::Start(o);
    if (s.ok() || s.status().code() != StatusCode::kPermissionDenied) _exit(12);
    if (s.status().message().find('\n') != std::string::npos) _exit(13);  // One line.
    _exit(0);
  }
  int status = testing::WaitChild(child, 30);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(SnoopTest, AddPidErrors) {
  SnoopOptions o;
  auto session = StartSession(o);
  ASSERT_TRUE(session);
  EXPECT_EQ(session->AddPid(getpid()).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(session->AddPid(999'999'999).code(), StatusCode::kNotFound);
  auto w = StartWorkload();
  ASSERT_TRUE(w);
  EXPECT_TRUE(session->AddPid(w->pid()).ok());
  EXPECT_EQ(session->AddPid(w->pid()).code(), StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace vigil::snoop
