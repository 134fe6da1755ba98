// SPDX-License-Identifier: Apache-2.0
// The operator analyses on every shared real trace (../shared/traces), against computations
// written independently here: each thread's operator time as a plain interval union, the launch
// call's own "External id" (Kineto writes the innermost operator's), the GPU time summed from the
// table. Then the CPU-only captures, and an H100 vs MI300X diff of the same model.
#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "trace/analysis/cpu_op_breakdown.h"
#include "trace/analysis/op_attribution.h"
#include "trace/analysis/trace_diff.h"
#include "trace/analyzer.h"
#include "trace/reader/kineto_reader.h"
#include "trace/report/json_report.h"
#include "trace/report/text_report.h"

namespace vigil::trace {
namespace {

namespace fs = std::filesystem;

fs::path SharedTraces() { return fs::path(VIGIL_SHARED_DIR) / "traces"; }

std::vector<std::string> KinetoTraces() {
  std::vector<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(SharedTraces())) {
    const std::string p = entry.path().string();
    const std::string name = entry.path().filename().string();
    const bool json = name.ends_with(".json") || name.ends_with(".json.gz");
    if (!entry.is_regular_file() || !json) continue;
    // Not Kineto traces (README): execution trace, TraceLens run descriptions, HTA's output.
    if (name.find("_et.json") != std::string::npos || name == "execution_details.json" ||
        p.find("hta_reference") != std::string::npos) {
      continue;
    }
    out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Each thread's operator time as the union of its operator intervals (merge sorted intervals).
std::map<std::pair<int64_t, int64_t>, int64_t> UnionPerThread(const RankTrace& t) {
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<int64_t, int64_t>>> by_thread;
  const EventTable& e = t.events;
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.kind[i] != EventKind::kCpuOp) continue;
    if (t.strings.Get(e.name[i]).starts_with("ProfilerStep#")) continue;
    by_thread[{e.pid[i], e.tid[i]}].push_back({e.ts[i], e.ts[i] + std::max<int64_t>(0, e.dur[i])});
  }
  std::map<std::pair<int64_t, int64_t>, int64_t> out;
  for (auto& [thread, iv] : by_thread) {
    std::sort(iv.begin(), iv.end());
    int64_t total = 0, start = iv[0].first, end = iv[0].second;
    for (const auto& [s, f] : iv) {
      if (s > end) {
        total += end - start;
        start = s;
        end = f;
      } else {
        end = std::max(end, f);
      }
    }
    out[thread] = total + (end - start);
  }
  return out;
}

TEST(CpuOpsOnRealTraces, PropertiesHoldOnEveryTrace) {
  if (!fs::exists(SharedTraces())) GTEST_SKIP() << "no " << SharedTraces() << ": absent";
  const std::vector<std::string> files = KinetoTraces();
  ASSERT_GT(files.size(), 40u);
  const KernelClassifier classifier = KernelClassifier::Default();
  uint64_t launches_checked = 0, threads_checked = 0;
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    auto traces = ReadTraces(path);
    ASSERT_TRUE(traces.ok()) << traces.status().ToString();
    for (const RankTrace& t : *traces) {
      const OpAttribution a = AttributeKernels(t, classifier);
      const CpuOpBreakdown b = ComputeCpuOpBreakdown(t, a);
      // Self times partition each thread's operator time.
      const auto unions = UnionPerThread(t);
      ASSERT_EQ(b.threads.size(), unions.size());
      int64_t self_sum = 0;
      for (const OpStat& s : b.ops) {
        EXPECT_GE(s.self_ns, 0) << t.strings.Get(s.name);
        EXPECT_LE(s.self_ns, s.total_ns) << t.strings.Get(s.name);
        EXPECT_LE(s.gpu_ns, s.gpu_inclusive_ns) << t.strings.Get(s.name);
        self_sum += s.self_ns;
      }
      for (const ThreadOpTime& th : b.threads) {
        EXPECT_EQ(th.busy_ns, unions.at({th.pid, th.tid})) << th.pid << "/" << th.tid;
        ++threads_checked;
      }
      EXPECT_EQ(self_sum, b.busy_ns);
      for (const ModuleStat& s : b.modules) EXPECT_LE(s.self_ns, s.total_ns);
      // Categories cover every GPU event once.
      int64_t gpu_sum = 0, category_sum = 0, op_gpu_sum = 0;
      uint64_t category_count = 0;
      for (uint32_t g : t.links.gpu) gpu_sum += t.events.dur[g];
      for (const CategoryTime& c : a.by_category) {
        category_sum += c.ns;
        category_count += c.count;
      }
      for (const OpStat& s : b.ops) op_gpu_sum += s.gpu_ns;
      EXPECT_EQ(category_sum, gpu_sum);
      EXPECT_EQ(category_count, t.links.gpu.size());
      EXPECT_EQ(op_gpu_sum, b.gpu_attributed_ns);
      // The attributed operator is the one whose External id the launch call carries.
      std::map<std::tuple<int64_t, int64_t, int64_t>, int> op_ids;  // (pid, tid, id) -> rows
      for (uint32_t i = 0; i < t.events.size(); ++i) {
        if (IsOperatorRow(t, i) && t.events.external_id[i] >= 0) {
          ++op_ids[{t.events.pid[i], t.events.tid[i], t.events.external_id[i]}];
        }
      }
      for (size_t i = 0; i < a.size(); ++i) {
        const uint32_t launch = t.links.launcher[t.links.gpu[i]];
        if (launch == kNoIndex || a.via_graph[i]) continue;
        // Older Kineto wrote the correlation id there instead (no link to an operator).
        const int64_t id = t.events.external_id[launch];
        if (id < 0 || id == t.events.correlation[launch]) continue;
        auto it = op_ids.find({t.events.pid[launch], t.events.tid[launch], id});
        if (it == op_ids.end() || it->second != 1) continue;
        ASSERT_NE(a.op[i], kNoIndex) << "launch row " << launch;
        EXPECT_EQ(t.events.external_id[a.op[i]], id) << t.strings.Get(t.events.name[a.op[i]]);
        ++launches_checked;
      }
    }
  }
  std::printf("checked %llu threads and %llu launches over %zu traces\n",
              static_cast<unsigned long long>(threads_checked),
              static_cast<unsigned long long>(launches_checked), files.size());
  EXPECT_GT(launches_checked, 10000u);
}

// Both CPU-only captures (HTA's 30-event file and its fuller first version): the breakdown is
// there although no GPU work is.
TEST(CpuOpsOnRealTraces, CpuOnlyTraces) {
  const fs::path hta = SharedTraces() / "HolisticTraceAnalysis";
  const fs::path files[] = {
      hta / "tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
      hta / "history/05cd72fe/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"};
  for (const fs::path& f : files) {
    if (!fs::exists(f)) GTEST_SKIP() << "no " << f << ": the shared trace set is absent";
    SCOPED_TRACE(f.string());
    auto traces = ReadTraces(f.string());
    ASSERT_TRUE(traces.ok()) << traces.status().ToString();
    Report report = Analyze(*traces, AnalysisConfig{});
    const RankReport& r = report.ranks[0];
    const CpuOpBreakdown& b = r.cpu_ops;
    uint64_t ops = 0;
    for (uint32_t i = 0; i < r.trace->events.size(); ++i) ops += IsOperatorRow(*r.trace, i);
    EXPECT_EQ(b.operator_events, ops);
    EXPECT_GT(b.ops.size(), 0u);
    EXPECT_EQ(b.gpu_ns, 0);
    // gloo:all_reduce ranges (user annotations on the communication threads) are modules here.
    bool gloo = false;
    for (const ModuleStat& m : b.modules) gloo |= r.trace->strings.Get(m.name) == "gloo:all_reduce";
    EXPECT_TRUE(gloo);
    const std::string text = RenderTextSummary(report);
    EXPECT_NE(text.find("no GPU work"), std::string::npos);
    EXPECT_NE(text.find("CPU operators: "), std::string::npos) << text;
    auto j = nlohmann::json::parse(RenderJsonReport(report));
    EXPECT_EQ(j["ranks"][0]["cpu_ops"]["operator_events"].get<uint64_t>(), ops);
  }
}

// The same HuggingFace model on an H100 and an MI300X: cuBLAS and hipBLASLt name their GEMMs
// differently, yet the operators match call for call and every category is compared.
TEST(CpuOpsOnRealTraces, DiffAcrossVendorsMatchesOperators) {
  const fs::path dir = SharedTraces() / "TraceLens/tests/traces";
  const std::string model = "gaunernst_bert-small-uncased__1016001.json.gz";
  if (!fs::exists(dir / "h100" / model)) GTEST_SKIP() << "the shared trace set is absent";
  auto h100 = ReadTraces((dir / "h100" / model).string());
  auto mi300 = ReadTraces((dir / "mi300" / model).string());
  ASSERT_TRUE(h100.ok() && mi300.ok());
  Report base = Analyze(*h100, AnalysisConfig{});
  Report test = Analyze(*mi300, AnalysisConfig{});
  base.diff = DiffReports(base, test);
  const TraceDiff& d = *base.diff;
  EXPECT_FALSE(d.SameVendor());
  EXPECT_EQ(d.base_runtime, "cuda");
  EXPECT_EQ(d.test_runtime, "hip");
  auto find = [&](KernelCategory c, std::string_view op) -> const OperatorDelta* {
    for (const OperatorDelta& o : d.operators) {
      if (o.category == c && o.op == op) return &o;
    }
    return nullptr;
  };
  const OperatorDelta* gemm = find(KernelCategory::kGemm, "aten::addmm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->base_count, 26u);
  EXPECT_EQ(gemm->test_count, 26u);
  const OperatorDelta* attention =
      find(KernelCategory::kAttention, "aten::_flash_attention_forward");
  ASSERT_NE(attention, nullptr);
  EXPECT_EQ(attention->base_count, 4u);
  EXPECT_EQ(attention->test_count, 4u);
  EXPECT_EQ(d.operators_base_only + d.operators_test_only, 0u);
  EXPECT_EQ(d.matched_base_ns, base.ranks[0].attribution.gpu_ns);
  std::map<KernelCategory, const CategoryDelta*> cats;
  for (const CategoryDelta& c : d.categories) cats[c.category] = &c;
  for (KernelCategory c : {KernelCategory::kGemm, KernelCategory::kAttention,
                           KernelCategory::kNormalization, KernelCategory::kElementwise}) {
    ASSERT_TRUE(cats.count(c)) << KernelCategoryName(c);
    EXPECT_GT(cats[c]->base_ns, 0) << KernelCategoryName(c);
    EXPECT_GT(cats[c]->test_ns, 0) << KernelCategoryName(c);
    EXPECT_EQ(cats[c]->base_count, cats[c]->test_count) << KernelCategoryName(c);
  }
  // --json carries the diff (it wrote nothing of it before).
  auto j = nlohmann::json::parse(RenderJsonReport(base));
  ASSERT_TRUE(j.contains("diff"));
  EXPECT_EQ(j["diff"]["test"]["runtime"], "hip");
  EXPECT_FALSE(j["diff"]["same_vendor"].get<bool>());
  EXPECT_EQ(j["diff"]["categories"].size(), d.categories.size());
  EXPECT_EQ(j["diff"]["operators"]["matched"].get<uint64_t>(), d.operators_matched);
  const std::string text = RenderTraceDiff(d);
  EXPECT_NE(text.find("matched by category and launching operator"), std::string::npos) << text;
  EXPECT_NE(text.find("kernels by name: not compared"), std::string::npos) << text;
}

}  // namespace
}  // namespace vigil::trace
