// SPDX-License-Identifier: Apache-2.0
// Graph-replayed kernels get the work of their capture-time operators: synthetic capture and
// replay traces, a hand-made work model, numbers worked by hand.
#include "trace/analysis/graph_capture_links.h"

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "trace/analysis/roofline.h"
#include "trace/analysis/work_model/op_models.h"
#include "trace/model/linker.h"
#include "trace/reader/kineto_reader.h"
#include "trace/testing/trace_files.h"
#include "trace/testing/tracelens_reference.h"

namespace vigil::trace {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

constexpr std::string_view kMi300 =
    R"("deviceProperties": [{"id": 0, "name": "AMD Instinct MI300X", "numSms": 304}])";

// aten::mm: 2*M*N*K FLOPs, BF16 operands read and the result written.
std::optional<OpWork> HandModel(std::string_view name, const OpInputs& in) {
  if (name != "aten::mm" || in.dims.size() < 2 || in.dims[0].size() != 2) return std::nullopt;
  const double m = in.dims[0][0], k = in.dims[0][1], n = in.dims[1][1];
  return OpWork{"GEMM", 2 * m * n * k, (m * k + k * n + m * n) * 2, ComputeSpec::kMatrixBf16};
}

std::string MmArgs(int m, int n) {
  return fmt::format(R"("Input Dims": [[{}, {}], [{}, {}]], "Input type": ["c10::BFloat16", )"
                     R"("c10::BFloat16"], "Input Strides": [[{}, 1], [{}, 1]], )"
                     R"("Concrete Inputs": ["", ""])",
                     m, n, n, n, n, n);
}

// One capture window holding aten::mm (one GEMM kernel) then aten::add (one kernel), at a
// batch of `m` rows.
std::string CaptureTrace(int m) {
  TraceBuilder b;
  b.Cpu("cuda_runtime", "hipStreamBeginCapture", 0, 2, 1, R"("correlation": 1)");
  b.Cpu("cpu_op", "aten::mm", 10, 20, 1, MmArgs(m, 256));
  b.Cpu("cuda_runtime", "hipLaunchKernel", 12, 5, 1, R"("correlation": 2, "kernel": "gemm_k")");
  b.Cpu("cpu_op", "aten::add", 40, 10, 1, R"("Input Dims": [[8]], "Input type": ["float"])");
  b.Cpu("cuda_runtime", "hipLaunchKernel", 42, 5, 1, R"("correlation": 3, "kernel": "add_k")");
  b.Cpu("cuda_runtime", "hipStreamEndCapture", 60, 2, 1, R"("correlation": 4)");
  b.TopLevel(kMi300);
  return b.Json();
}

// Two replays of the graph; each GEMM kernel runs 40 us, each add 2 us.
std::string ReplayTrace(std::string_view annotation = "") {
  TraceBuilder b;
  if (!annotation.empty()) b.Cpu("user_annotation", annotation, 0, 1000);
  for (int r = 0; r < 2; ++r) {
    const double t0 = 100 + r * 200;
    const int64_t corr = 100 + r;
    b.Launch("hipGraphLaunch", t0, 10, corr);
    b.Gpu("kernel", "gemm_k", t0 + 20, 40, corr);
    b.Gpu("kernel", "add_k", t0 + 61, 2, corr);
  }
  b.TopLevel(kMi300);
  return b.Json();
}

std::unique_ptr<CaptureFile> ReadCapture(const TempDir& dir, const std::string& json, int64_t batch,
                                         std::string_view name = "capture.json") {
  auto t = ReadTraceFile(dir.Write(name, json));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  auto f = std::make_unique<CaptureFile>();
  if (!t.ok()) return f;
  f->trace = std::move(*t);
  LinkTrace(&f->trace);
  f->batch_size = batch;
  f->mode = "FULL";
  FindCaptureRoots(f.get());
  return f;
}

struct Replayed {
  RankTrace trace;
  GpuView view;
};

std::unique_ptr<Replayed> ReadReplay(const TempDir& dir, const std::string& json) {
  auto t = ReadTraceFile(dir.Write("replay.json", json));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  auto r = std::make_unique<Replayed>();
  if (!t.ok()) return r;
  r->trace = std::move(*t);
  LinkTrace(&r->trace);
  r->view = BuildGpuView(r->trace, AnalysisConfig{});
  return r;
}

TEST(GraphCaptureLinksTest, FindsTheCaptureWindowAndItsLaunches) {
  TempDir dir;
  auto f = ReadCapture(dir, CaptureTrace(128), -1);
  ASSERT_EQ(f->roots.size(), 1u);
  ASSERT_EQ(f->roots[0].items.size(), 2u);
  EXPECT_EQ(f->roots[0].items[0].name, "gemm_k");
  EXPECT_EQ(f->roots[0].items[1].name, "add_k");
}

TEST(GraphCaptureLinksTest, ReplayedKernelsGetTheirCapturedOperatorsWork) {
  TempDir dir;
  GraphCaptures captures;
  captures.files.push_back(ReadCapture(dir, CaptureTrace(128), -1));
  auto replay = ReadReplay(dir, ReplayTrace());

  Roofline without = AnalyzeRoofline(replay->trace, replay->view, HandModel);
  EXPECT_EQ(without.rank.modelled_kernels, 0u);
  EXPECT_EQ(without.graph_replayed_kernels, 4u);
  EXPECT_FALSE(without.graph_captures_given);

  Roofline with = AnalyzeRoofline(replay->trace, replay->view, HandModel, &captures);
  EXPECT_TRUE(with.graph_captures_given);
  EXPECT_EQ(with.graph_captures.graph_launches, 2u);
  EXPECT_EQ(with.graph_captures.matched_launches, 2u);
  EXPECT_EQ(with.graph_captures.linked_events, 4u);
  EXPECT_EQ(with.graph_captures.by_method.at(AlignMethod::kPositional), 2u);
  // The two GEMM kernels are modelled (aten::add has no model here): 80 of 84 us.
  EXPECT_EQ(with.rank.modelled_kernels, 2u);
  EXPECT_EQ(with.rank.modelled_ns, 80'000);
  EXPECT_NEAR(with.rank.Coverage(), 80.0 / 84.0, 1e-12);
  // 2 x (2 * 128 * 256 * 256) FLOPs; bytes 2 x (128*256 + 256*256 + 128*256) x 2.
  EXPECT_DOUBLE_EQ(with.rank.flops, 2 * 2.0 * 128 * 256 * 256);
  EXPECT_DOUBLE_EQ(with.rank.bytes, 2 * (128.0 * 256 + 256 * 256 + 128 * 256) * 2);
  ASSERT_EQ(with.shapes.size(), 1u);
  const RooflineShape& s = with.shapes[0];
  ASSERT_NE(s.source, nullptr);
  EXPECT_EQ(s.source, &captures.files[0]->trace);
  EXPECT_EQ(s.source->strings.Get(s.name), "aten::mm");
  EXPECT_EQ(s.calls, 2u);  // one operator instance per replay
  EXPECT_EQ(s.kernels, 2u);
  EXPECT_EQ(s.kernel_ns, 80'000);
}

TEST(GraphCaptureLinksTest, PrefersTheSmallestCapturedBatchThatFits) {
  TempDir dir;
  GraphCaptures captures;
  captures.files.push_back(ReadCapture(dir, CaptureTrace(8), 8, "bs8.json"));
  captures.files.push_back(ReadCapture(dir, CaptureTrace(64), 64, "bs64.json"));
  captures.files.push_back(ReadCapture(dir, CaptureTrace(32), 32, "bs32.json"));
  auto replay = ReadReplay(
      dir,
      ReplayTrace("execute_16_context_0(sq0sk0sqsq0sqsk0)_generation_16(sq16sk99sqsq16sqsk99)"));
  Roofline r = AnalyzeRoofline(replay->trace, replay->view, HandModel, &captures);
  ASSERT_EQ(r.shapes.size(), 1u);
  EXPECT_EQ(r.shapes[0].source, &captures.files[2]->trace);  // batch 32: the graph that ran
  EXPECT_DOUBLE_EQ(r.rank.flops, 2 * 2.0 * 32 * 256 * 256);

  auto unannotated = ReadReplay(dir, ReplayTrace());
  Roofline first = AnalyzeRoofline(unannotated->trace, unannotated->view, HandModel, &captures);
  ASSERT_EQ(first.shapes.size(), 1u);
  EXPECT_EQ(first.shapes[0].source, &captures.files[0]->trace);  // no batch known: file order
}

TEST(GraphCaptureLinksTest, ReplaysOfOtherGraphsStayUnlinked) {
  TempDir dir;
  GraphCaptures captures;
  captures.files.push_back(ReadCapture(dir, CaptureTrace(128), -1));
  TraceBuilder b;
  b.Launch("hipGraphLaunch", 100, 10, 100);
  b.Gpu("kernel", "softmax_k", 120, 5, 100);
  b.TopLevel(kMi300);
  auto replay = ReadReplay(dir, b.Json());
  Roofline r = AnalyzeRoofline(replay->trace, replay->view, HandModel, &captures);
  EXPECT_EQ(r.graph_captures.graph_launches, 1u);
  EXPECT_EQ(r.graph_captures.matched_launches, 0u);
  EXPECT_EQ(r.rank.modelled_kernels, 0u);
}

TEST(GraphCaptureLinksTest, BatchFromExecuteAnnotations) {
  EXPECT_EQ(ExecuteAnnotationBatch(
                "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)"),
            32);
  EXPECT_EQ(ExecuteAnnotationBatch("execute_context_2(3_4)_generation_5(1)"), 8);  // 3 + 4 + 1
  EXPECT_EQ(ExecuteAnnotationBatch("execute_diffusion_1_256x256"), -1);
  EXPECT_EQ(ExecuteAnnotationBatch("ProfilerStep#3"), -1);
  EXPECT_EQ(ExecuteAnnotationBatch("execute_12"), -1);
}

TEST(GraphCaptureLinksTest, LoadsAFolderByItsExecutionDetails) {
  TempDir dir;
  dir.Write("bs_8.json", CaptureTrace(8));
  dir.Write("execution_details.json",
            R"([{"file": "bs_8.json", "batch_size": 8, "mode": "FULL"}])");
  auto c = LoadGraphCaptures(dir.path());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ((*c)->files.size(), 1u);
  EXPECT_EQ((*c)->files[0]->batch_size, 8);
  EXPECT_EQ((*c)->files[0]->mode, "FULL");
  EXPECT_EQ((*c)->files[0]->roots.size(), 1u);

  TempDir bad;
  bad.Write("execution_details.json", R"([{"file": "../escape.json"}])");
  EXPECT_FALSE(LoadGraphCaptures(bad.path()).ok());
  TempDir none;
  none.Write("plain.json", ReplayTrace());
  auto empty = LoadGraphCaptures(none.path());
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kNotFound);
}

// TraceLens's inference reports were made with the graph captures merged in: every operator
// row (name, recorded inputs) carries the kernel time and the count of its instances, graph
// replays included. Every operator we link through a capture must have TraceLens's row, with
// the same kernel time and count (unless TraceLens does not model the operator at all), on every
// shared inference trace that has captures and a report.
// (Operators outside graphs are linked as before; where a kernel's launch sits under nested
// modelled operators we name the innermost and TraceLens sometimes the outer one, e.g. the
// eager VAE convolutions of the xDiT trace: aten::miopen_convolution against aten::convolution.)
TEST(GraphCaptureLinksTest, CapturedOperatorsMatchTraceLensRows) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(VIGIL_SHARED_DIR) / "traces" / "TraceLens";
  const fs::path inference = root / "tests" / "traces" / "inference";
  if (!fs::exists(inference))
    GTEST_SKIP() << "no " << inference << ": the shared trace set is absent";
  std::string error;
  const std::vector<testing::TraceLensRow> rows = testing::LoadTraceLensRows(root.string(), &error);
  ASSERT_TRUE(error.empty()) << error;
  using Key = std::tuple<std::string, std::vector<std::vector<int64_t>>, std::vector<std::string>,
                         std::vector<std::vector<int64_t>>, std::vector<std::string>>;
  int compared_dirs = 0, compared = 0;
  for (const auto& entry : fs::directory_iterator(inference)) {
    const fs::path dir = entry.path();
    if (!fs::exists(dir / "capture_traces") || !fs::exists(dir / "perf_csvs")) continue;
    std::string replay_file;
    for (const auto& f : fs::directory_iterator(dir)) {
      const std::string n = f.path().filename().string();
      if (f.is_regular_file() && n.ends_with(".json.gz")) replay_file = f.path().string();
    }
    ASSERT_FALSE(replay_file.empty()) << dir;
    SCOPED_TRACE(replay_file);
    auto captures = LoadGraphCaptures((dir / "capture_traces").string());
    ASSERT_TRUE(captures.ok()) << captures.status().ToString();
    auto traces = ReadTraces(replay_file);
    ASSERT_TRUE(traces.ok()) << traces.status().ToString();
    const RankTrace& t = traces->front();
    const GpuView view = BuildGpuView(t, AnalysisConfig{});
    const Roofline r = AnalyzeRoofline(t, view, ModelOperator, captures->get());
    EXPECT_GT(r.graph_captures.graph_launches, 0u);
    EXPECT_EQ(r.graph_captures.matched_launches, r.graph_captures.graph_launches);
    EXPECT_EQ(r.graph_captures.linked_events, r.graph_captures.replayed_events);
    // TraceLens's rows of this trace, by name and recorded inputs.
    std::map<Key, const testing::TraceLensRow*> reference;
    std::set<std::string> reference_names;
    const std::string prefix = fs::relative(dir, root).string() + "/perf_csvs/";
    for (const testing::TraceLensRow& row : rows) {
      if (row.file.rfind(prefix, 0) != 0) continue;
      reference[Key{row.name, row.inputs.dims, row.inputs.types, row.inputs.strides,
                    row.inputs.concrete}] = &row;
      reference_names.insert(row.name);
    }
    ASSERT_FALSE(reference.empty()) << prefix;
    // Our operators linked through the captures, by the same key.
    std::map<Key, std::pair<int64_t, uint64_t>> ours;
    for (const RooflineShape& s : r.shapes) {
      if (s.source == nullptr || s.source == &t) continue;
      const OpShapes& in = s.source->op_shapes[s.shapes];
      Key key;
      std::get<0>(key) = std::string(s.source->strings.Get(s.name));
      ASSERT_TRUE(testing::ParseDimsList(s.source->shape_text.Get(in.dims), &std::get<1>(key)));
      ASSERT_TRUE(testing::ParseStringList(s.source->shape_text.Get(in.types), &std::get<2>(key)));
      ASSERT_TRUE(testing::ParseDimsList(s.source->shape_text.Get(in.strides), &std::get<3>(key)));
      ASSERT_TRUE(
          testing::ParseStringList(s.source->shape_text.Get(in.concrete), &std::get<4>(key)));
      auto& [ns, calls] = ours[key];
      ns += s.kernel_ns;
      calls += s.calls;
    }
    EXPECT_FALSE(ours.empty());
    for (const auto& [key, figures] : ours) {
      SCOPED_TRACE(std::get<0>(key));
      auto it = reference.find(key);
      if (it == reference.end()) {
        // An operator TraceLens does not model at all (vLLM's _C::rotary_embedding) is ours
        // alone; one it models must have its row.
        EXPECT_EQ(reference_names.count(std::get<0>(key)), 0u) << "no TraceLens row for this shape";
        continue;
      }
      const testing::TraceLensRow& row = *it->second;
      SCOPED_TRACE(row.file + ":" + std::to_string(row.line));
      EXPECT_NEAR(figures.first / 1e3, row.kernel_us_sum, 0.01 * row.kernel_us_sum);
      EXPECT_EQ(figures.second, static_cast<uint64_t>(row.count));
      ++compared;
    }
    ++compared_dirs;
  }
  EXPECT_GE(compared_dirs, 3);
  std::printf("compared %d captured operators with TraceLens's rows over %d graph-replay traces\n",
              compared, compared_dirs);
}

}  // namespace
}  // namespace vigil::trace
