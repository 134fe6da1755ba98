// SPDX-License-Identifier: Apache-2.0
// Properties of % of roofline over every shared Kineto trace (../shared/traces/manifest.tsv),
// with the production work model and with a deliberately simple one that models every recorded
// operator (so the property is exercised before every family is modelled): coverage within
// [0, 1]; where any kernel is modelled on a known GPU, the rank's figure within (0, 100] over
// both the replayed device time and the wall time, the replayed length no longer than the wall
// time, and the per-step figures as bounded. Traces with graph captures beside them
// (capture_traces/) are checked again with the captures linked in.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "trace/analysis/graph_captures.h"
#include "trace/analysis/roofline.h"
#include "trace/analysis/work_model/dtypes.h"
#include "trace/analysis/work_model/op_models.h"
#include "trace/model/linker.h"
#include "trace/reader/kineto_reader.h"

namespace vigil::trace {
namespace {

namespace fs = std::filesystem;

// Reads the smallest input tensor once and does no arithmetic: a lower bound on what any kernel
// of the operator moves, so the roofline it gives can only be shorter than the real one. (Not the
// largest: a paged-attention KV cache or an embedding table is an input of which a kernel reads
// only the blocks or rows it needs.)
std::optional<OpWork> LowerBoundModel(std::string_view, const OpInputs& in) {
  double bytes = 0;
  for (size_t i = 0; i < in.dims.size() && i < in.types.size(); ++i) {
    const int size = BytesPerElement(in.types[i]);
    if (size > 0 && !in.dims[i].empty()) {
      const double b = static_cast<double>(Numel(in.dims[i])) * size;
      if (b > 0 && (bytes == 0 || b < bytes)) bytes = b;
    }
  }
  if (bytes <= 0) return std::nullopt;
  return OpWork{"lower_bound", 0, bytes, ComputeSpec::kVectorFp32};
}

std::vector<std::string> KinetoTraces(const fs::path& shared) {
  std::vector<std::string> out;
  std::ifstream manifest(shared / "manifest.tsv");
  std::string line;
  std::getline(manifest, line);  // header
  while (std::getline(manifest, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, '\t');) cols.push_back(c);
    if (cols.size() > 4 && cols[4] == "kineto") out.push_back((shared / cols[0]).string());
  }
  return out;
}

void CheckTotals(const RooflineTotals& t, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_GE(t.Coverage(), 0);
  EXPECT_LE(t.Coverage(), 1);
  EXPECT_LE(t.modelled_ns, t.kernel_ns);
  EXPECT_LE(t.replayed_ns, t.wall_ns);
  if (t.Coverage() > 0 && t.has_peaks) {
    EXPECT_GT(t.PctOfReplayed(), 0);
    EXPECT_LE(t.PctOfReplayed(), 100);
    EXPECT_GT(t.PctOfWall(), 0);
    EXPECT_LE(t.PctOfWall(), t.PctOfReplayed() + 1e-9);
  }
}

TEST(RooflinePropertyTest, EverySharedTrace) {
  const fs::path shared = fs::path(VIGIL_SHARED_DIR) / "traces";
  if (!fs::exists(shared / "manifest.tsv")) {
    GTEST_SKIP() << "no " << shared << ": the shared trace set is absent";
  }
  const std::vector<std::string> files = KinetoTraces(shared);
  ASSERT_GT(files.size(), 50u);
  int with_figure = 0, with_captures = 0;
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    auto t = ReadTraceFile(path);
    if (!t.ok()) continue;  // unreadable traces are the reader tests' business
    LinkTrace(&*t);
    const GpuView view = BuildGpuView(*t, AnalysisConfig{});
    const fs::path capture_dir = fs::path(path).parent_path() / "capture_traces";
    std::shared_ptr<const GraphCaptures> captures;
    if (fs::is_directory(capture_dir)) {
      auto loaded = LoadGraphCaptures(capture_dir.string());
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      captures = *loaded;
    }
    std::vector<const GraphCaptures*> variants = {nullptr};
    if (captures != nullptr) variants.push_back(captures.get());
    for (const OpModelFn& model : {OpModelFn(ModelOperator), OpModelFn(LowerBoundModel)}) {
      for (const GraphCaptures* c : variants) {
        const Roofline r = AnalyzeRoofline(*t, view, model, c);
        CheckTotals(r.rank, "rank");
        for (const RooflineStep& s : r.steps)
          CheckTotals(s.totals, "step " + std::to_string(s.number));
        if (r.rank.PctOfReplayed() > 0) ++with_figure;
        EXPECT_LE(r.graph_captures.matched_launches, r.graph_captures.graph_launches);
        EXPECT_LE(r.graph_captures.linked_events, r.graph_captures.replayed_events);
        if (c != nullptr) ++with_captures;
      }
    }
  }
  std::printf(
      "%% of roofline checked on %zu traces, %d (trace, model) pairs with a figure, %d with "
      "graph captures\n",
      files.size(), with_figure, with_captures);
  EXPECT_GT(with_figure, 10);
  EXPECT_GT(with_captures, 0);
}

}  // namespace
}  // namespace vigil::trace
