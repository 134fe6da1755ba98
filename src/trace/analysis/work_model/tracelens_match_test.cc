// SPDX-License-Identifier: Apache-2.0
// Every per-operator row of TraceLens's reference reports against the work model: the same
// category, GFLOPs and data moved within 0.1 % and the same Compute Spec; every row must be
// modelled.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "trace/analysis/work_model/op_models.h"
#include "trace/testing/tracelens_reference.h"

namespace vigil::trace {
namespace {

namespace fs = std::filesystem;

// TraceLens's performance report files an operator under its family's sheet ("Normalization"
// holds layer norm forward and backward); its inference report under the directed category
// ("Normalization_fwd"). The model names the directed one.
bool SameCategory(std::string_view ours, std::string_view reference) {
  if (ours == reference) return true;
  for (std::string_view suffix : {"_fwd", "_bwd"}) {
    if (ours.ends_with(suffix) && ours.substr(0, ours.size() - suffix.size()) == reference) {
      return true;
    }
  }
  return false;
}

bool Close(double ours, double theirs) {
  if (theirs < 0) return true;  // TraceLens left it empty
  double tol = 1e-3 * std::max(std::abs(theirs), 1e-12);
  return std::abs(ours - theirs) <= tol;
}

TEST(TraceLensParseTest, PythonLiterals) {
  std::vector<std::vector<int64_t>> dims;
  ASSERT_TRUE(testing::ParseDimsList("[[512], [141, 512], [], []]", &dims));
  ASSERT_EQ(dims.size(), 4u);
  EXPECT_EQ(dims[1], (std::vector<int64_t>{141, 512}));
  EXPECT_TRUE(dims[3].empty());
  std::vector<std::string> types;
  ASSERT_TRUE(testing::ParseStringList("['c10::BFloat16', 'Scalar', '', \"it's\"]", &types));
  EXPECT_EQ(types, (std::vector<std::string>{"c10::BFloat16", "Scalar", "", "it's"}));
  EXPECT_FALSE(testing::ParseDimsList("[[1, x]]", &dims));
}

TEST(TraceLensMatchTest, EveryReferenceRow) {
  fs::path root = fs::path(VIGIL_SHARED_DIR) / "traces" / "TraceLens";
  if (!fs::exists(root)) GTEST_SKIP() << "no " << root << ": the shared trace set is absent";
  std::string error;
  std::vector<testing::TraceLensRow> rows = testing::LoadTraceLensRows(root.string(), &error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_GT(rows.size(), 500u);
  int matched = 0;
  for (const testing::TraceLensRow& row : rows) {
    SCOPED_TRACE(row.file + ":" + std::to_string(row.line) + " " + row.name);
    std::optional<OpWork> work = ModelOperator(row.name, row.inputs);
    ASSERT_TRUE(work.has_value()) << "not modelled";
    EXPECT_TRUE(SameCategory(work->category, row.category))
        << "category " << work->category << " vs " << row.category;
    EXPECT_TRUE(Close(work->flops / 1e9, row.gflops))
        << "GFLOPs " << work->flops / 1e9 << " vs " << row.gflops;
    EXPECT_TRUE(Close(work->bytes / double(1 << 20), row.data_mb))
        << "MB " << work->bytes / double(1 << 20) << " vs " << row.data_mb;
    if (!row.compute_spec.empty()) {
      EXPECT_EQ(ComputeSpecName(work->spec), row.compute_spec);
    }
    ++matched;
  }
  std::printf("compared %d TraceLens rows\n", matched);
}

}  // namespace
}  // namespace vigil::trace
