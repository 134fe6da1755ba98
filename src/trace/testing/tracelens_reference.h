// SPDX-License-Identifier: Apache-2.0
// Test helper: the per-operator rows of TraceLens's reference perf reports (the category CSVs in
// ../shared/traces/TraceLens/**/{*_perf_report_csvs,perf_csvs}), with each row's recorded inputs
// parsed back from their Python-literal text, so the work model can be compared row by row.
// Test-only.
// Owner: trace.
#pragma once

#include <string>
#include <vector>

#include "trace/analysis/work_model/op_work.h"

namespace vigil::trace::testing {

struct TraceLensRow {
  std::string file;      // the CSV, relative to the TraceLens folder
  int line = 0;          // 1-based data row
  std::string category;  // the CSV's name without ".csv": "GEMM", "CONV_fwd", ...
  std::string name;      // operator, e.g. "aten::addmm"
  OpInputs inputs;
  double gflops = -1;   // GFLOPS_first (-1 when empty)
  double data_mb = -1;  // Data Moved (MB)_first, MB = 2^20 bytes (-1 when empty)
  std::string compute_spec;
  int count = 0;              // name_count
  double kernel_us_sum = -1;  // Kernel Time (µs)_sum (-1 when empty)
};

// Every category CSV under `tracelens_root` (the shared TraceLens folder). Summary files
// (gpu_timeline, kernel_summary, ops_summary*, ops_unique_args, short_kernel*, unified_*) are
// skipped. Sets *error on a file it cannot parse.
std::vector<TraceLensRow> LoadTraceLensRows(const std::string& tracelens_root, std::string* error);

// Parses Python literals as TraceLens writes them: "[[512], [141, 512], []]" and
// "['c10::BFloat16', 'Scalar', '']". Exposed for tests.
bool ParseDimsList(std::string_view text, std::vector<std::vector<int64_t>>* out);
bool ParseStringList(std::string_view text, std::vector<std::string>* out);

}  // namespace vigil::trace::testing
