// SPDX-License-Identifier: Apache-2.0
#include "trace/testing/analysed_ranks.h"

#include <string>

#include <gtest/gtest.h>

#include "trace/analyzer.h"
#include "trace/reader/kineto_reader.h"

namespace vigil::trace::testing {

std::unique_ptr<Analysed> AnalyseRanks(const std::vector<TraceBuilder>& ranks,
                                       const AnalysisConfig& config) {
  TempDir dir;
  for (size_t i = 0; i < ranks.size(); ++i) {
    dir.Write("rank-" + std::to_string(i) + ".json", ranks[i].Json());
  }
  auto a = std::make_unique<Analysed>();
  auto traces = ReadTraces(dir.path());
  EXPECT_TRUE(traces.ok()) << traces.status().ToString();
  if (!traces.ok()) return a;
  a->traces = std::move(*traces);
  a->report = Analyze(a->traces, config);
  return a;
}

}  // namespace vigil::trace::testing
