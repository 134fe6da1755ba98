// SPDX-License-Identifier: Apache-2.0
// The CPU-profile summary on a hand-written profile: self and total samples counted by hand,
// recursion counted once per stack, the process root left out, the window compared with the
// trace's on Unix time; and the files it refuses.
#include "trace/analysis/cpu_profile.h"

#include <gtest/gtest.h>

#include "trace/analyzer.h"
#include "trace/model/linker.h"
#include "trace/reader/kineto_reader.h"
#include "trace/report/text_report.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

// 10 samples: main>step>loader (6, step recursing once), main>step>forward (3), kernel leaf (1).
// Frames: 0 train.py (process), 1 main, 2 train_step, 3 next_batch, 4 forward, 5 read_[k].
std::string Profile(int64_t start_unix_ns, int64_t duration_ns, std::string_view pids = "[100]") {
  return R"({"event": "cpu-clock", "frequency_hz": 99, "start_unix_ns": )" +
         std::to_string(start_unix_ns) + R"(, "duration_ns": )" + std::to_string(duration_ns) +
         R"(, "python_samples": 9, "gil_samples": 8, "pids": )" + std::string(pids) +
         R"json(, "frames": [
      {"name": "python3", "label": "python3", "kind": "process"},
      {"name": "main", "label": "main (train.py:50)", "kind": "python"},
      {"name": "train_step", "label": "train_step (train.py:42)", "kind": "python"},
      {"name": "next_batch", "label": "next_batch (data.py:7)", "kind": "python"},
      {"name": "forward", "label": "forward (model.py:17)", "kind": "python"},
      {"name": "read", "label": "read_[k]", "kind": "kernel"}],
    "stacks": [
      {"frames": [0, 1, 2, 2, 3], "count": 6},
      {"frames": [0, 1, 2, 4], "count": 3},
      {"frames": [0, 1, 2, 3, 5], "count": 1}]})json";
}

// A trace of pid 100 from 1 s to 3 s after its base time.
RankTrace Trace(const TempDir& dir, int64_t base_ns) {
  TraceBuilder b;
  b.Cpu("cpu_op", "aten::mm", 1'000'000, 2'000'000);
  b.TopLevel(R"("baseTimeNanoseconds": )" + std::to_string(base_ns));
  auto t = ReadTraceFile(dir.Write("trace.json", b.Json()));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  LinkTrace(&*t);
  return std::move(*t);
}

constexpr int64_t kBase = 1'700'000'000'000'000'000;

TEST(CpuProfileTest, CountsSelfAndTotalByHand) {
  TempDir dir;
  auto p = LoadCpuProfile(dir.Write("p.json", Profile(kBase + 2'000'000'000, 4'000'000'000)));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ((*p)->total_samples, 10u);
  const RankTrace t = Trace(dir, kBase);
  const CpuProfileSummary s = SummarizeCpuProfile(**p, t);
  ASSERT_EQ(s.top_self.size(), 3u);
  EXPECT_EQ(s.top_self[0].label, "next_batch (data.py:7)");
  EXPECT_EQ(s.top_self[0].self, 6u);
  EXPECT_EQ(s.top_self[0].total, 7u);
  EXPECT_EQ(s.top_self[1].label, "forward (model.py:17)");
  EXPECT_EQ(s.top_self[1].self, 3u);
  EXPECT_EQ(s.top_self[2].label, "read_[k]");
  ASSERT_FALSE(s.top_total.empty());
  EXPECT_EQ(s.top_total[0].total, 10u);  // main and train_step: every sample, recursion once
  EXPECT_EQ(s.top_total[1].total, 10u);
  for (const CpuFunction& f : s.top_total) EXPECT_NE(f.label, "python3");  // the process root
  // Trace: base+1 s .. base+3 s; profile: base+2 s .. base+6 s: 1 s in common.
  EXPECT_DOUBLE_EQ(s.trace_seconds, 2.0);
  EXPECT_DOUBLE_EQ(s.overlap_seconds, 1.0);
  EXPECT_DOUBLE_EQ(s.profile_seconds, 4.0);
  EXPECT_EQ(s.python_samples, 9u);
}

TEST(CpuProfileTest, AProfileOfAnotherMomentSaysSo) {
  TempDir dir;
  auto p = LoadCpuProfile(dir.Write("p.json", Profile(kBase + 60'000'000'000, 1'000'000'000)));
  ASSERT_TRUE(p.ok());
  const RankTrace t = Trace(dir, kBase);
  EXPECT_DOUBLE_EQ(SummarizeCpuProfile(**p, t).overlap_seconds, 0.0);
}

TEST(CpuProfileTest, ShownOnlyForTheRanksItSampled) {
  TempDir dir;
  std::vector<RankTrace> traces;
  traces.push_back(Trace(dir, kBase));
  AnalysisConfig config;
  auto other = LoadCpuProfile(dir.Write("o.json", Profile(kBase, 1, "[7]")));
  ASSERT_TRUE(other.ok());
  config.cpu_profile = *other;
  EXPECT_FALSE(Analyze(traces, config).ranks[0].cpu_profile.computed);
  auto ours = LoadCpuProfile(dir.Write("p.json", Profile(kBase, 1)));
  ASSERT_TRUE(ours.ok());
  config.cpu_profile = *ours;
  const Report r = Analyze(traces, config);
  ASSERT_TRUE(r.ranks[0].cpu_profile.computed);
  const std::string text = RenderTextSummary(r);
  EXPECT_NE(text.find("host CPU profile: 10 samples (cpu-clock at 99 Hz)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("60.0% self  70.0% total  next_batch (data.py:7)"), std::string::npos)
      << text;
}

TEST(CpuProfileTest, RefusesWhatIsNotAProfile) {
  TempDir dir;
  EXPECT_FALSE(LoadCpuProfile(dir.Write("a.json", "{\"traceEvents\": []}")).ok());
  EXPECT_FALSE(LoadCpuProfile(dir.Write("b.json", "not json")).ok());
  EXPECT_FALSE(LoadCpuProfile(dir.Write("c.json", R"({"frames": [], "stacks": [{"frames": [3],
      "count": 1}]})"))
                   .ok());
  EXPECT_FALSE(LoadCpuProfile(dir.path() + "/missing.json").ok());
}

}  // namespace
}  // namespace vigil::trace
