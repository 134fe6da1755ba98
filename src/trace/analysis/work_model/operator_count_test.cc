// SPDX-License-Identifier: Apache-2.0
// The matrix families count the same operators as TraceLens on every shared trace it reported
// alone: composite operators (aten::linear, aten::conv2d, aten::scaled_dot_product_attention)
// run through the operators TraceLens reports (aten::addmm, aten::convolution, ...), so an
// operator counts when no modelled operator of its category runs inside it. Per trace and
// category, the number of such operators and their total work equal TraceLens's name_count and
// its GFLOPs and data moved summed over its rows.
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <simdjson.h>
#include <zlib.h>

#include "trace/analysis/work_model/op_models.h"
#include "trace/testing/tracelens_reference.h"

namespace vigil::trace {
namespace {

namespace fs = std::filesystem;

struct CpuOp {
  std::string tid;
  double ts = 0, end = 0;
  OpWork work;
};

// The categories of the matrix families that standalone traces have (the vector families'
// categories are held to TraceLens by their own tests).
bool IsMatrixCategory(std::string_view c) {
  return c == "GEMM" || c == "CONV_fwd" || c == "CONV_bwd" || c == "SDPA_fwd" || c == "SDPA_bwd";
}

struct Totals {
  int count = 0;
  double gflops = 0, mb = 0;
};

std::string Inflate(const fs::path& path) {
  std::string text;
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return text;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return text;
}

// A recorded argument list; an entry that is not a flat list of integers (a tensor list) stays
// empty, as the work model expects for inputs it does not read.
std::vector<std::vector<int64_t>> DimsOf(simdjson::simdjson_result<simdjson::dom::element> list) {
  std::vector<std::vector<int64_t>> out;
  simdjson::dom::array entries;
  if (list.get_array().get(entries) != simdjson::SUCCESS) return out;
  for (simdjson::dom::element entry : entries) {
    std::vector<int64_t> dims;
    simdjson::dom::array values;
    if (entry.get_array().get(values) == simdjson::SUCCESS) {
      for (simdjson::dom::element d : values) {
        int64_t v = 0;
        if (d.get_int64().get(v) != simdjson::SUCCESS) {
          dims.clear();
          break;
        }
        dims.push_back(v);
      }
    }
    out.push_back(std::move(dims));
  }
  return out;
}

std::vector<std::string> StringsOf(simdjson::simdjson_result<simdjson::dom::element> list) {
  std::vector<std::string> out;
  simdjson::dom::array entries;
  if (list.get_array().get(entries) != simdjson::SUCCESS) return out;
  for (simdjson::dom::element e : entries) {
    std::string_view v;
    out.emplace_back(e.get_string().get(v) == simdjson::SUCCESS ? v : std::string_view());
  }
  return out;
}

std::vector<CpuOp> ModelledOps(const fs::path& path) {
  std::vector<CpuOp> ops;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::dom::array events;
  if (parser.parse(Inflate(path)).get(doc) != simdjson::SUCCESS ||
      doc["traceEvents"].get_array().get(events) != simdjson::SUCCESS) {
    ADD_FAILURE() << "cannot read " << path;
    return ops;
  }
  for (simdjson::dom::element e : events) {
    std::string_view cat, name;
    simdjson::dom::element args;
    if (e["cat"].get_string().get(cat) != simdjson::SUCCESS || cat != "cpu_op" ||
        e["name"].get_string().get(name) != simdjson::SUCCESS ||
        e["args"].get(args) != simdjson::SUCCESS) {
      continue;
    }
    OpInputs in;
    in.dims = DimsOf(args["Input Dims"]);
    in.types = StringsOf(args["Input type"]);
    in.strides = DimsOf(args["Input Strides"]);
    in.concrete = StringsOf(args["Concrete Inputs"]);
    std::optional<OpWork> work = ModelOperator(name, in);
    if (!work.has_value() || !IsMatrixCategory(work->category)) continue;
    CpuOp op;
    op.tid = simdjson::to_string(e["tid"]);
    double dur = 0;
    if (e["ts"].get_double().get(op.ts) != simdjson::SUCCESS) continue;
    if (e["dur"].get_double().get(dur) != simdjson::SUCCESS) dur = 0;
    op.end = op.ts + dur;
    op.work = *work;
    ops.push_back(std::move(op));
  }
  return ops;
}

TEST(OperatorCountTest, InnermostOperatorsAsTraceLensCountsThem) {
  fs::path root = fs::path(VIGIL_SHARED_DIR) / "traces" / "TraceLens";
  if (!fs::exists(root)) GTEST_SKIP() << "no " << root << ": the shared trace set is absent";
  std::string error;
  auto rows = testing::LoadTraceLensRows(root.string(), &error);
  ASSERT_TRUE(error.empty()) << error;
  // TraceLens's totals per report folder and category.
  std::map<std::string, std::map<std::string, Totals>> want;
  for (const auto& row : rows) {
    if (!IsMatrixCategory(row.category)) continue;
    Totals& t = want[fs::path(row.file).parent_path().string()][row.category];
    t.count += row.count;
    t.gflops += row.gflops * row.count;
    t.mb += row.data_mb * row.count;
  }
  int traces = 0;
  for (const auto& [dir, categories] : want) {
    std::string report = fs::path(dir).filename().string();
    const std::string suffix = "_perf_report_csvs";
    if (report.size() <= suffix.size()) continue;  // inference reports: several traces
    fs::path trace = root / fs::path(dir).parent_path() /
                     (report.substr(0, report.size() - suffix.size()) + ".json.gz");
    SCOPED_TRACE(trace.string());
    ASSERT_TRUE(fs::exists(trace));
    std::vector<CpuOp> ops = ModelledOps(trace);
    std::map<std::string, Totals> got;
    for (size_t i = 0; i < ops.size(); ++i) {
      const CpuOp& op = ops[i];
      bool outer = false;
      for (size_t j = 0; j < ops.size() && !outer; ++j) {
        const CpuOp& other = ops[j];
        bool same_span = other.ts == op.ts && other.end == op.end;
        // Inside op; of two with the same span, the later event is the child.
        outer = j != i && other.tid == op.tid && other.work.category == op.work.category &&
                other.ts >= op.ts && other.end <= op.end && (!same_span || j > i);
      }
      if (outer) continue;
      Totals& t = got[std::string(op.work.category)];
      ++t.count;
      t.gflops += op.work.flops / 1e9;
      t.mb += op.work.bytes / double(1 << 20);
    }
    for (const auto& [category, t] : categories) {
      SCOPED_TRACE(category);
      EXPECT_EQ(got[category].count, t.count);
      EXPECT_NEAR(got[category].gflops, t.gflops, 1e-3 * t.gflops);
      EXPECT_NEAR(got[category].mb, t.mb, 1e-3 * t.mb);
    }
    for (const auto& [category, t] : got) {
      EXPECT_TRUE(categories.count(category) != 0)
          << category << ": " << t.count << " operators TraceLens does not report";
    }
    ++traces;
  }
  EXPECT_EQ(traces, 10) << "the H100, MI300X and torch.compile references";
}

}  // namespace
}  // namespace vigil::trace
