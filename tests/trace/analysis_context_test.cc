// SPDX-License-Identifier: Apache-2.0
// The real traces in ../shared/traces that showed wrong syncs, a wrong --hta-compat kernel type,
// hidden data problems, colliding kernel names and advice out of context, plus properties checked
// on every shared trace. Skips with a message where that directory is absent.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "trace/analyzer.h"
#include "trace/model/data_problems.h"
#include "trace/model/host_blocking.h"
#include "trace/model/linker.h"
#include "trace/reader/kineto_reader.h"
#include "trace/report/display_names.h"
#include "trace/report/text_report.h"

namespace vigil::trace {
namespace {

namespace fs = std::filesystem;

fs::path SharedTraces() { return fs::path(VIGIL_SHARED_DIR) / "traces"; }

#define REQUIRE_SHARED_TRACES()    \
  if (!fs::exists(SharedTraces())) \
  GTEST_SKIP() << "no " << SharedTraces() << ": the shared trace set is absent"

struct Loaded {
  std::vector<RankTrace> traces;
  Report report;
};

// `any_file`: a file of the set that may not be a Kineto trace (TraceLens's
// execution_details.json) is skipped rather than failed.
std::unique_ptr<Loaded> Load(const std::string& rel, bool hta_compat = false,
                             bool any_file = false) {
  auto out = std::make_unique<Loaded>();
  auto t = ReadTraces((SharedTraces() / rel).string());
  if (!t.ok() && any_file) return nullptr;
  EXPECT_TRUE(t.ok()) << rel << ": " << t.status().ToString();
  if (!t.ok()) return nullptr;
  out->traces = std::move(*t);
  AnalysisConfig config;
  config.hta_compat = hta_compat;
  out->report = Analyze(out->traces, config);
  return out;
}

// Every Kineto trace of the shared set (one rank file each).
std::vector<std::string> EveryTrace() {
  std::vector<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(SharedTraces())) {
    const std::string p = fs::relative(entry.path(), SharedTraces()).string();
    if (p.rfind("hta_reference", 0) == 0 || p.find("perf_report") != std::string::npos) continue;
    if (p.ends_with(".json.gz") || p.ends_with(".json")) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t CountRuntime(const RankTrace& t, std::string_view name) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < t.events.size(); ++i) {
    n += t.events.kind[i] == EventKind::kRuntime && t.strings.Get(t.events.name[i]) == name;
  }
  return n;
}

bool Has(const Insight& in, std::string_view text) {
  return in.recommendation.find(text) != std::string::npos ||
         in.detail.find(text) != std::string::npos;
}

constexpr char kResnet[] = "param/et_replay/tests/inputs/resnet_kineto.json.gz";

// The ResNet training trace copies its batches from pageable memory with cudaMemcpyAsync: each
// such call blocks the host for its copy. Counted independently: GPU copies named "Pageable"
// whose launching call is cudaMemcpyAsync.
TEST(SyncOnRealTraces, PageableAsyncCopiesBlockTheHost) {
  REQUIRE_SHARED_TRACES();
  auto a = Load(kResnet);
  ASSERT_TRUE(a);
  const RankTrace& t = a->traces[0];
  uint64_t pageable = 0;
  int64_t blocked = 0;
  for (uint32_t g : t.links.gpu) {
    const uint32_t call = t.links.launcher[g];
    if (call == kNoIndex || t.events.kind[g] != EventKind::kMemcpy) continue;
    if (t.strings.Get(t.events.name[g]).find("Pageable") == std::string_view::npos) continue;
    if (t.strings.Get(t.events.name[call]) != "cudaMemcpyAsync") continue;
    ++pageable;
    blocked += t.events.dur[call];
  }
  ASSERT_GT(pageable, 50u);
  const SyncAnalysis& s = a->report.ranks[0].syncs;
  ASSERT_EQ(s.by_kind.count("pageable_copy"), 1u);
  EXPECT_EQ(s.by_kind.at("pageable_copy").count, pageable);
  EXPECT_EQ(s.by_kind.at("pageable_copy").dur_ns, blocked);
  EXPECT_EQ(s.by_api.at("cudaMemcpyAsync").count, pageable);
}

// cudaStreamWaitEvent makes a stream wait on the GPU; the host returns at once. The DLRM ranks
// call it 44 times and HTA's multi-stream trace 425 times: none is a sync.
TEST(SyncOnRealTraces, StreamWaitEventIsNotASync) {
  REQUIRE_SHARED_TRACES();
  for (const char* rel :
       {"param/et_replay/tests/inputs/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json.gz",
        "HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/rank0.json.gz"}) {
    SCOPED_TRACE(rel);
    auto a = Load(rel);
    ASSERT_TRUE(a);
    EXPECT_GT(CountRuntime(a->traces[0], "cudaStreamWaitEvent"), 40u);
    const SyncAnalysis& s = a->report.ranks[0].syncs;
    EXPECT_EQ(s.by_api.count("cudaStreamWaitEvent"), 0u);
    EXPECT_FALSE(IsSyncName("cudaStreamWaitEvent"));
  }
}

void CheckSyncs(const RankTrace& t, const SyncAnalysis& s) {
  uint64_t count = 0;
  int64_t dur = 0;
  for (uint32_t i = 0; i < t.events.size(); ++i) {
    if (!BlocksHost(t, i)) continue;
    ++count;
    dur += t.events.dur[i];
    EXPECT_NE(HostBlockingOfName(t.strings.Get(t.events.name[i])), HostBlocking::kNever);
  }
  EXPECT_EQ(s.count, count);
  EXPECT_EQ(s.total_ns, dur);
  uint64_t by_kind = 0;
  for (const auto& [kind, c] : s.by_kind) by_kind += c.count;
  EXPECT_EQ(by_kind, s.count);
  for (const auto& [api, c] : s.by_api)
    EXPECT_NE(HostBlockingOfName(api), HostBlocking::kNever) << api;
}

// Kernel names: the short forms within one report are distinct and within the width.
void CheckNames(const RankTrace& t, size_t* anonymous, size_t* cutlass) {
  DisplayNames names(70);
  std::set<std::string> shown;
  std::set<std::string_view> full;
  for (uint32_t g : t.links.gpu) full.insert(t.strings.Get(t.events.name[g]));
  for (std::string_view n : full) {
    const std::string& s = names.Get(n);
    EXPECT_TRUE(shown.insert(s).second) << s << " <- " << n;
    EXPECT_LE(s.size(), 70u);
    if (n.find("(anonymous namespace)::") != std::string_view::npos) {
      *anonymous += ShortenName(n, 0).find("(anonymous namespace)") != std::string::npos;
    }
    *cutlass += n.find("cutlass::Kernel2<") != std::string_view::npos;
  }
}

// On every shared trace, read once: the syncs are exactly the runtime rows the table says block
// and their kinds add up; kernel names shorten distinctly, keeping "(anonymous namespace)"; and
// where HTA has a reference, --hta-compat never writes a negative kernel-type or memory time.
TEST(PropertiesOnEveryTrace, SyncsNamesAndHtaKernelTypes) {
  REQUIRE_SHARED_TRACES();
  size_t anonymous = 0, cutlass = 0, hta = 0;
  for (const std::string& rel : EveryTrace()) {
    SCOPED_TRACE(rel);
    auto a = Load(rel, /*hta_compat=*/false, /*any_file=*/true);
    if (!a) continue;
    for (size_t r = 0; r < a->traces.size(); ++r) {
      CheckSyncs(a->traces[r], a->report.ranks[r].syncs);
      CheckNames(a->traces[r], &anonymous, &cutlass);
    }
    if (!fs::exists(SharedTraces() / "hta_reference" / (rel + ".hta.json"))) continue;
    ++hta;
    AnalysisConfig config;
    config.hta_compat = true;
    const Report compat = Analyze(a->traces, config);
    for (const RankReport& r : compat.ranks) {
      for (const KernelTypeTime& k : r.kernels.types) EXPECT_GE(k.sum, 0) << k.type;
      EXPECT_GE(r.temporal.memory, 0);
      EXPECT_GE(r.temporal.exposed_memory, 0);
      EXPECT_LE(r.temporal.idle, r.temporal.kernel_time);
    }
  }
  EXPECT_GT(anonymous, 10u);
  EXPECT_GT(cutlass, 1u);
  EXPECT_GT(hta, 40u);
}

// HTA's kernel-type sweep ignores the spans its rounding makes end before they start (77
// sub-microsecond copies on the owlv2 H100 trace, 12 on timesformer): MEMORY must equal HTA's
// exactly (it was short by one microsecond per such copy).
TEST(HtaCompatOnRealTraces, MemoryKernelTypeMatchesHta) {
  REQUIRE_SHARED_TRACES();
  const std::vector<std::pair<std::string, int64_t>> memory = {
      {"TraceLens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz", 14561},
      {"TraceLens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz",
       3498}};
  for (const auto& [rel, hta_memory_us] : memory) {
    SCOPED_TRACE(rel);
    auto a = Load(rel, /*hta_compat=*/true);
    ASSERT_TRUE(a);
    const RankReport& r = a->report.ranks[0];
    int64_t ours = -1;
    for (const KernelTypeTime& k : r.kernels.types) {
      if (k.type == "MEMORY") ours = k.sum;
    }
    EXPECT_EQ(ours, hta_memory_us);
    EXPECT_EQ(r.temporal.memory, hta_memory_us);
  }
}

bool HasProblem(const RankTrace& t, std::string_view id) {
  for (const DataProblem& p : FindDataProblems(t)) {
    if (p.id == id) return !p.affects.empty();
  }
  return false;
}

// HTA's CUPTI-profiler trace has 103 launches and no GPU event: the GPU side was not captured,
// which the summary said was a CPU-only trace with data quality "ok".
TEST(DataQualityOnRealTraces, LaunchesWithoutGpuEventsAreNotCpuOnly) {
  REQUIRE_SHARED_TRACES();
  auto a = Load(
      "HolisticTraceAnalysis/tests/data/cupti_profiler/"
      "benchmark_result_924719_1679055439_trace.json.gz");
  ASSERT_TRUE(a);
  const RankTrace& t = a->traces[0];
  EXPECT_TRUE(t.links.gpu.empty());
  EXPECT_GT(t.quality.launches, 100u);
  EXPECT_TRUE(HasProblem(t, "gpu_activity_not_captured"));
  const std::string text = RenderTextSummary(a->report);
  EXPECT_EQ(text.find("CPU only"), std::string::npos);
  EXPECT_EQ(text.find("Data quality: ok"), std::string::npos);
  EXPECT_NE(text.find("gpu_activity_not_captured"), std::string::npos);
  // A real CPU-only trace stays CPU only, with no problem.
  auto cpu = Load(
      "HolisticTraceAnalysis/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
  ASSERT_TRUE(cpu);
  EXPECT_TRUE(FindDataProblems(cpu->traces[0]).empty());
  EXPECT_NE(RenderTextSummary(cpu->report).find("CPU only"), std::string::npos);
}

// HTA's trace_diff test trace has 31 GPU events that start before the previous one on their
// stream ends; the graph-capture traces launch hundreds of kernels into a capture, which run
// later as graphs: expected, not missing.
TEST(DataQualityOnRealTraces, OverlapsOnOneStreamAreFlaggedCapturesAreNot) {
  REQUIRE_SHARED_TRACES();
  auto a = Load("HolisticTraceAnalysis/tests/data/trace_diff/test/test.json.gz");
  ASSERT_TRUE(a);
  EXPECT_GT(a->traces[0].quality.overlapping_kernels_same_stream, 0u);
  EXPECT_TRUE(HasProblem(a->traces[0], "overlapping_kernels_same_stream"));
  EXPECT_NE(RenderTextSummary(a->report).find("overlapping_kernels_same_stream"),
            std::string::npos);
  auto c =
      Load("TraceLens/tests/traces/inference/sglang_decode/capture_traces/bs_32_rank0.json.gz");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->traces[0].quality.launches_without_gpu, 0u);
  EXPECT_FALSE(HasProblem(c->traces[0], "gpu_activity_partial"));
}

// The owlv2 H100 trace's top kernels read "at::native::" and twice "cutlass::Kernel2<>" in the
// text summary: the namespace must survive and the two GEMMs must read differently.
TEST(KernelNamesOnRealTraces, TopKernelsOfTheTextSummaryKeepNamespacesAndDiffer) {
  REQUIRE_SHARED_TRACES();
  auto a = Load("TraceLens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz");
  ASSERT_TRUE(a);
  const std::string text = RenderTextSummary(a->report);
  EXPECT_NE(text.find("at::native::(anonymous namespace)::cunn_SoftMaxForward<...>"),
            std::string::npos)
      << text;
  std::vector<std::string> cutlass;
  for (size_t at = text.find("computation   cutlass::Kernel2<"); at != std::string::npos;
       at = text.find("computation   cutlass::Kernel2<", at + 1)) {
    cutlass.push_back(text.substr(at, text.find('\n', at) - at));
  }
  ASSERT_EQ(cutlass.size(), 2u) << text;
  EXPECT_NE(cutlass[0], cutlass[1]);
}

// The RTX 2080 Ti (Turing, compute capability 7.5) has FP16 tensor cores but no TF32 or BF16:
// the tensor-core advice must not name them. The trace trains (backward ops, optimizer steps).
TEST(InsightsInContext, NoTf32AdviceOnTuring) {
  REQUIRE_SHARED_TRACES();
  auto a = Load(kResnet);
  ASSERT_TRUE(a);
  const Workload& w = a->report.ranks[0].workload;
  EXPECT_EQ(w.kind, WorkloadKind::kTraining);
  EXPECT_TRUE(w.gpu.known);
  EXPECT_TRUE(w.gpu.tensor_cores);
  EXPECT_FALSE(w.gpu.tf32);
  EXPECT_FALSE(w.gpu.bf16);
  bool fired = false;
  for (const Insight& in : a->report.insights) {
    if (in.id != "no_tensor_cores") continue;
    fired = true;
    EXPECT_FALSE(Has(in, "allow_tf32")) << in.recommendation;
    EXPECT_FALSE(Has(in, "set_float32_matmul_precision")) << in.recommendation;
    EXPECT_FALSE(Has(in, "bf16")) << in.recommendation;
    EXPECT_TRUE(Has(in, "GradScaler")) << in.recommendation;
  }
  EXPECT_TRUE(fired);
}

// Inference traces that already launch CUDA/HIP graphs: detected as inference, and no rule tells
// them to start using graphs or to tune DDP/FSDP.
TEST(InsightsInContext, GraphLaunchingInferenceGetsNoGraphOrDdpAdvice) {
  REQUIRE_SHARED_TRACES();
  for (const char* rel :
       {"TraceLens/tests/traces/inference/vllm_prefilldecode_piecewise/graph_execution.json.gz",
        "TraceLens/tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
        "TraceLens/tests/traces/inference/xdit_flux.1_aiter_sage/profile_trace_rank_0.json.gz"}) {
    SCOPED_TRACE(rel);
    auto a = Load(rel);
    ASSERT_TRUE(a);
    const Workload& w = a->report.ranks[0].workload;
    EXPECT_EQ(w.kind, WorkloadKind::kInference) << w.reason;
    EXPECT_GT(w.graph_launches, 0u);
    for (const Insight& in : a->report.insights) {
      EXPECT_FALSE(Has(in, "Capture the step in CUDA/HIP graphs")) << in.id;
      EXPECT_FALSE(Has(in, ", CUDA graphs")) << in.id;
      EXPECT_FALSE(Has(in, "DDP bucket")) << in.id;
      EXPECT_FALSE(Has(in, "activation checkpointing")) << in.id;
    }
  }
  // The vLLM trace runs on one rank (world size 1): no parallelism to tune.
  auto v =
      Load("TraceLens/tests/traces/inference/vllm_prefilldecode_piecewise/graph_execution.json.gz");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->report.ranks[0].workload.parallelism, Parallelism::kNone);
}

// DLRM on 8 V100s trains with DDP: training, data parallel.
TEST(InsightsInContext, DdpTrainingIsDetected) {
  REQUIRE_SHARED_TRACES();
  auto a = Load(
      "param/et_replay/tests/inputs/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json.gz");
  ASSERT_TRUE(a);
  const Workload& w = a->report.ranks[0].workload;
  EXPECT_EQ(w.kind, WorkloadKind::kTraining);
  EXPECT_EQ(w.parallelism, Parallelism::kDataParallel);
  EXPECT_FALSE(w.gpu.tf32);  // Volta
}

}  // namespace
}  // namespace vigil::trace
