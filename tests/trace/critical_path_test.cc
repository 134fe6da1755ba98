// SPDX-License-Identifier: Apache-2.0
// The critical path, the what-if projections, the insights' gains and the stragglers on every
// real trace of ../shared/traces: properties that must hold on any input, HTA's critical path on
// its end-to-end reference, and the traces that showed each defect. Skips where the set is absent.
#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include "trace/analysis/what_if.h"
#include "trace/analyzer.h"
#include "trace/reader/kineto_reader.h"

namespace vigil::trace {
namespace {

namespace fs = std::filesystem;

fs::path Shared() { return fs::path(VIGIL_SHARED_DIR) / "traces"; }

// Every trace file (one rank each), and every directory holding several ranks' traces.
std::vector<fs::path> TraceFiles() {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(Shared())) {
    const std::string p = e.path().string();
    if (!e.is_regular_file() || p.find("/hta_reference/") != std::string::npos) continue;
    if (p.find("execution_details") != std::string::npos) continue;
    if ((p.size() > 5 && p.compare(p.size() - 5, 5, ".json") == 0) ||
        (p.size() > 8 && p.compare(p.size() - 8, 8, ".json.gz") == 0)) {
      out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// GPU idle on the union of all streams within [from, to], from the trace itself.
int64_t GpuIdle(const RankTrace& t, int64_t from, int64_t to) {
  std::vector<std::pair<int64_t, int64_t>> v;
  for (uint32_t r : t.links.gpu) v.emplace_back(t.events.ts[r], t.events.end(r));
  std::sort(v.begin(), v.end());
  int64_t busy = 0, cur_lo = 0, cur_hi = INT64_MIN;
  auto flush = [&] {
    if (cur_hi > cur_lo)
      busy += std::max<int64_t>(0, std::min(cur_hi, to) - std::max(cur_lo, from));
  };
  for (const auto& [lo, hi] : v) {
    if (lo > cur_hi) {
      flush();
      cur_lo = lo;
      cur_hi = hi;
    } else {
      cur_hi = std::max(cur_hi, hi);
    }
  }
  flush();
  return (to - from) - busy;
}

void CheckRank(const RankReport& r, const std::string& what) {
  SCOPED_TRACE(what);
  const RankTrace& t = *r.trace;
  const CriticalPath& p = r.critical_path;
  const int64_t span = t.links.last_end - t.links.first_ts;
  EXPECT_GE(p.Length(), 0);
  EXPECT_EQ(p.gpu_compute + p.gpu_comm + p.gpu_memory + p.cpu + p.sync + p.gaps, p.Length());
  EXPECT_LE(p.Length(), span);
  for (int64_t part : {p.gpu_compute, p.gpu_comm, p.gpu_memory, p.cpu, p.sync, p.gaps}) {
    EXPECT_GE(part, 0);
  }
  const int64_t idle = p.Length() > 0 ? GpuIdle(t, p.start, p.end) : 0;
  EXPECT_GE(idle, 0);
  EXPECT_LE(idle, p.Length());
  // The path's GPU segments are disjoint and busy: never more GPU time than the window had.
  EXPECT_LE(p.Gpu(), p.Length() - idle);
  if (p.BoundBy().rfind("gpu", 0) == 0 && p.cpu + p.sync <= p.Length() / 100) {
    // GPU-bound with the host off the path: the GPU's share of the path is at least its busy
    // share of the window (docs/critical-path.md: with the host on the path, queued GPU work
    // drains off it).
    EXPECT_GE(static_cast<double>(p.Gpu()) + 1e-6 * p.Length(), p.Length() - idle)
        << "path GPU " << p.Gpu() << " busy " << p.Length() - idle << " of " << p.Length();
  }
  for (const WhatIfResult& w : r.what_if.projections) {
    SCOPED_TRACE(w.name);
    ASSERT_TRUE(w.valid) << w.note;
    EXPECT_EQ(w.measured_ns, p.Length());
    EXPECT_GE(w.GainNs(), 0);
    EXPECT_LE(w.GainNs(), w.removable_ns);
    EXPECT_EQ(w.path.gpu_compute + w.path.gpu_comm + w.path.gpu_memory + w.path.cpu + w.path.sync +
                  w.path.gaps,
              w.path.Length());
    if (w.name == "gpu_idle_removed") {
      EXPECT_LE(w.removable_ns, idle);
    }
  }
  EXPECT_GE(r.what_if.replayed_device_ns, 0);
  EXPECT_LE(r.what_if.replayed_device_ns, span);
}

// The gains the insights claim: within [0, 100] %, and those that remove GPU idle within it.
void CheckInsights(const Report& report, const std::string& what) {
  SCOPED_TRACE(what);
  for (const Insight& in : report.insights) {
    EXPECT_GE(in.estimated_gain_pct, 0) << in.id;
    EXPECT_LE(in.estimated_gain_pct, 100) << in.id;
    if (in.id != "launch_bound" && in.id != "excessive_sync" && in.id != "low_gpu_utilization" &&
        in.id != "dataloader_bottleneck") {
      continue;
    }
    for (const RankReport& r : report.ranks) {
      if (in.title.find("Rank " + std::to_string(r.rank) + " ") == std::string::npos) continue;
      const CriticalPath& p = r.critical_path;
      if (p.Length() <= 0) continue;
      const double idle_pct = 100.0 * GpuIdle(*r.trace, p.start, p.end) / p.Length();
      EXPECT_LE(in.estimated_gain_pct, idle_pct + 1e-9) << in.id << ": " << in.title;
    }
  }
}

TEST(CriticalPathRealTest, PropertiesHoldOnEveryTrace) {
  if (!fs::exists(Shared()))
    GTEST_SKIP() << "no " << Shared() << ": the shared trace set is absent";
  int analysed = 0;
  for (const fs::path& f : TraceFiles()) {
    auto traces = ReadTraces(f.string());
    if (!traces.ok() || traces->empty()) continue;  // not a Kineto trace (execution traces)
    Report report = Analyze(*traces, AnalysisConfig());
    for (const RankReport& r : report.ranks) CheckRank(r, f.string());
    CheckInsights(report, f.string());
    ++analysed;
  }
  EXPECT_GT(analysed, 40);
}

// Directories of several ranks' traces.
std::vector<fs::path> MultiRankDirs() {
  std::map<fs::path, int> n;
  for (const fs::path& f : TraceFiles()) {
    const std::string name = f.filename().string();
    if (name.find("rank") != std::string::npos || name.find("worker") != std::string::npos) {
      ++n[f.parent_path()];
    }
  }
  std::vector<fs::path> out;
  for (const auto& [dir, count] : n) {
    if (count >= 2) out.push_back(dir);
  }
  return out;
}

TEST(CriticalPathRealTest, StragglerIsTheLastArriverOnEveryMultiRankTrace) {
  if (!fs::exists(Shared()))
    GTEST_SKIP() << "no " << Shared() << ": the shared trace set is absent";
  int checked = 0;
  for (const fs::path& dir : MultiRankDirs()) {
    SCOPED_TRACE(dir.string());
    auto traces = ReadTraces(dir.string());
    if (!traces.ok() || traces->size() < 2) continue;
    Report report = Analyze(*traces, AnalysisConfig());
    const MultiRankCriticalPath& p = report.multi_path;
    if (!p.valid || p.matches.collectives.empty()) continue;
    ++checked;
    // Independently: per rank, the time the others waited for it alone at each collective
    // (its kernel's start, aligned, minus the second-last start).
    std::vector<int64_t> late(traces->size(), 0);
    for (const MatchedCollective& c : p.matches.collectives) {
      std::vector<std::pair<int64_t, uint32_t>> a;
      for (const CollectiveMember& m : c.members) {
        if (!p.matches.aligned[m.rank_index]) continue;
        a.emplace_back((*traces)[m.rank_index].events.ts[m.row] + p.matches.offset_ns[m.rank_index],
                       m.rank_index);
      }
      if (a.size() < 2) continue;
      std::sort(a.begin(), a.end());
      late[a.back().second] += a.back().first - a[a.size() - 2].first;
    }
    const auto last = std::max_element(late.begin(), late.end()) - late.begin();
    if (late[static_cast<size_t>(last)] > 0) {
      ASSERT_FALSE(report.cross.stragglers.empty());
      EXPECT_EQ(report.cross.stragglers.front().metric, "arrival");
      EXPECT_EQ(report.cross.stragglers.front().rank,
                (*traces)[static_cast<size_t>(last)].meta.rank);
      EXPECT_EQ(report.cross.stragglers.front().late_ns, late[static_cast<size_t>(last)]);
    }
    // Where the path runs through a collective that another rank reached later, it crosses.
    bool through_late = false;
    for (const PathSegment& seg : p.segments) {
      for (const MatchedCollective& c : p.matches.collectives) {
        int64_t mine = INT64_MIN, latest = INT64_MIN;
        for (const CollectiveMember& m : c.members) {
          if (!p.matches.aligned[m.rank_index]) continue;
          const int64_t a =
              (*traces)[m.rank_index].events.ts[m.row] + p.matches.offset_ns[m.rank_index];
          latest = std::max(latest, a);
          if (m.rank_index == seg.rank_index && m.row == seg.row) mine = a;
        }
        through_late = through_late || (mine != INT64_MIN && latest > mine);
      }
    }
    if (through_late) {
      EXPECT_GT(p.crossings.size(), 0u);
    }

    // The joined path and its projections.
    int64_t sum = 0;
    for (int64_t v : p.by_category) sum += v;
    EXPECT_EQ(sum, p.Length());
    for (const WhatIfResult& w : p.what_if) {
      SCOPED_TRACE(w.name);
      EXPECT_GE(w.GainNs(), 0);
      EXPECT_LE(w.GainNs(), w.removable_ns);
    }
  }
  EXPECT_GE(checked, 2);  // DLRM's 8 ranks and HTA's two sampled ranks
}

// HTA's critical path on its end-to-end reference (the events its output marks critical).
struct HtaPath {
  int64_t start = INT64_MAX, end = INT64_MIN, gpu = 0;
};

HtaPath ReadHtaPath(const fs::path& file) {
  HtaPath p;
  gzFile gz = gzopen(file.string().c_str(), "rb");
  if (gz == nullptr) return p;
  std::string text;
  char buf[1 << 16];
  for (int n; (n = gzread(gz, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  gzclose(gz);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return p;
  for (const auto& e : j["traceEvents"]) {
    if (e.value("ph", "") != "X" || !e.contains("args") || !e["args"].contains("critical"))
      continue;
    auto ns = [](const nlohmann::json& v) {
      return v.is_number_integer() ? v.get<int64_t>() * 1000
                                   : static_cast<int64_t>(v.get<double>() * 1000);
    };
    const int64_t ts = ns(e["ts"]), dur = ns(e["dur"]);
    p.start = std::min(p.start, ts);
    p.end = std::max(p.end, ts + dur);
    const std::string cat = e.value("cat", "");
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") p.gpu += dur;
  }
  return p;
}

TEST(CriticalPathRealTest, MatchesHtaOnItsEndToEndReference) {
  const fs::path dir =
      Shared() / "HolisticTraceAnalysis/tests/data/critical_path/end_to_end/simple_add";
  if (!fs::exists(dir)) GTEST_SKIP() << "no " << dir << ": the shared trace set is absent";
  const HtaPath hta = ReadHtaPath(dir / "output/overlaid_critical_path_trace.json.gz");
  ASSERT_LT(hta.start, hta.end);
  auto traces = ReadTraces((dir / "input/trace.json.gz").string());
  ASSERT_TRUE(traces.ok()) << traces.status().ToString();
  Report report = Analyze(*traces, AnalysisConfig());
  const CriticalPath& p = report.ranks[0].critical_path;
  const double hta_len = static_cast<double>(hta.end - hta.start);
  EXPECT_NEAR(static_cast<double>(p.Length()), hta_len, 0.005 * hta_len);
  EXPECT_EQ(p.start, hta.start);
  // Bound by: HTA's path is almost all CPU (its GPU events are a fraction of a percent).
  EXPECT_GT(hta_len - static_cast<double>(hta.gpu), static_cast<double>(hta.gpu));
  EXPECT_EQ(p.BoundBy(), "cpu");
  EXPECT_LT(static_cast<double>(p.Gpu()), 0.005 * hta_len);
}

TEST(CriticalPathRealTest, MoeTraceIsBoundByTheGpuItWaitsFor) {
  // The host waits in cudaStreamSynchronize for a GPU that is 55 % busy: that wait is GPU time on
  // the path, not CPU time (the path read "bound by cpu" with 90 ms of GPU on 1.02 s before).
  const fs::path f =
      Shared() / "SwitchTransformers/result/trace_100Kpar_4exp_8batch_128seq_1024.json.gz";
  if (!fs::exists(f)) GTEST_SKIP() << "no " << f << ": the shared trace set is absent";
  auto traces = ReadTraces(f.string());
  ASSERT_TRUE(traces.ok()) << traces.status().ToString();
  Report report = Analyze(*traces, AnalysisConfig());
  const CriticalPath& p = report.ranks[0].critical_path;
  EXPECT_EQ(p.BoundBy(), "gpu_compute");
  EXPECT_GT(p.Gpu(), p.Length() / 2);
  EXPECT_GT(p.sync_edges, 0u);
  // The sync insight's gain is bounded by the GPU idle on the path (about 19 %, not 68.8 %).
  for (const Insight& in : report.insights) {
    if (in.id == "excessive_sync") {
      EXPECT_LT(in.estimated_gain_pct, 20);
    }
  }
}

TEST(CriticalPathRealTest, HipGraphTraceDoesNotCollapse) {
  // MI300X, hipGraphLaunch: the path used to stop after 2 events (45 us); the graph's kernels
  // are now reached through their launch.
  const fs::path f =
      Shared() /
      "TraceLens/tests/traces/inference/xdit_flux.1_aiter_sage/profile_trace_rank_0.json.gz";
  if (!fs::exists(f)) GTEST_SKIP() << "no " << f << ": the shared trace set is absent";
  auto traces = ReadTraces(f.string());
  ASSERT_TRUE(traces.ok()) << traces.status().ToString();
  Report report = Analyze(*traces, AnalysisConfig());
  const RankTrace& t = (*traces)[0];
  const CriticalPath& p = report.ranks[0].critical_path;
  EXPECT_GT(t.links.graph_kernels, 0u);
  EXPECT_GT(p.rows.size(), 1000u);
  EXPECT_GT(p.Length(), (t.links.last_end - t.links.first_ts) / 2);
  EXPECT_GT(p.Gpu(), p.Length() / 2);
}

TEST(CriticalPathRealTest, DlrmCrossRankPathCrossesToTheLastArriver) {
  const fs::path dir = Shared() / "param/et_replay/tests/inputs/dlrm_kineto";
  if (!fs::exists(dir)) GTEST_SKIP() << "no " << dir << ": the shared trace set is absent";
  auto traces = ReadTraces(dir.string());
  ASSERT_TRUE(traces.ok()) << traces.status().ToString();
  ASSERT_EQ(traces->size(), 8u);
  Report report = Analyze(*traces, AnalysisConfig());
  const MultiRankCriticalPath& p = report.multi_path;
  ASSERT_TRUE(p.valid) << p.note;
  ASSERT_GT(p.crossings.size(), 0u);  // 0 before, with 100 % of the path on one rank
  for (const RankPathShare& s : p.ranks) EXPECT_LT(s.pct, 100.0);
  // The path crosses to the rank that arrived last.
  for (const PathCrossing& x : p.crossings) {
    const MatchedCollective& c = p.matches.collectives[x.collective];
    for (const CollectiveMember& m : c.members) {
      EXPECT_LE((*traces)[m.rank_index].events.ts[m.row] + p.matches.offset_ns[m.rank_index],
                x.arrival);
    }
  }
}

}  // namespace
}  // namespace vigil::trace
