// SPDX-License-Identifier: Apache-2.0
// `vigil top`'s CPU line from two /proc/stat samples, turned into series the way proc_cpu does
// (ticks / USER_HZ, cpu="all" for the host-wide line), with the percentages worked out by hand;
// and the process, GPU-process, narrow and sort parts of a frame.
#include <gtest/gtest.h>

#include "cli/top_view.h"

namespace vigil {
namespace {

constexpr const char* kModes[] = {"user",   "nice", "system",  "idle",
                                  "iowait", "irq",  "softirq", "steal"};

// One /proc/stat line ("cpu  a b c ...") sampled at t_ns, as proc_cpu's counter series.
void AddSample(std::vector<SeriesView>* series, const std::string& cpu,
               const std::vector<double>& ticks, int64_t t_ns) {
  for (size_t i = 0; i < ticks.size(); ++i) {
    SeriesView* s = nullptr;
    for (SeriesView& existing : *series) {
      if (existing.labels["cpu"] == cpu && existing.labels["mode"] == kModes[i]) s = &existing;
    }
    if (s == nullptr) {
      series->push_back({});
      s = &series->back();
      s->name = "vigil_host_cpu_seconds_total";
      s->kind = "counter";
      s->labels = {{"cpu", cpu}, {"mode", kModes[i]}};
    }
    s->points.push_back({t_ns, ticks[i] / 100.0});  // USER_HZ 100.
  }
}

TEST(TopCpuTest, HtopSplitFromTwoProcStatSamples) {
  // Two CPUs sampled 2 s apart: 400 ticks of CPU time in all (2 CPUs x 2 s x 100 Hz).
  //   cpu  10000 500 3000 80000 1000 100 200 50     (t = 10 s)
  //   cpu  10160 520 3040 80100 1040 108 220 62    (t = 12 s)
  // Deltas: user 160, nice 20, system 40, idle 100, iowait 40, irq 8, softirq 20, steal 12
  // = 400 ticks. Shares: usr 40.0%, nice 5.0%, sys 10.0%, irq 2.0%, sirq 5.0%, wait 10.0%,
  // steal 3.0%; busy = 1 - (100 + 40) / 400 = 65.0%.
  std::vector<SeriesView> range;
  AddSample(&range, "all", {10000, 500, 3000, 80000, 1000, 100, 200, 50}, 10'000'000'000);
  AddSample(&range, "all", {10160, 520, 3040, 80100, 1040, 108, 220, 62}, 12'000'000'000);
  TopData d;
  d.rates = RatesFromRange(range);
  d.latest = range;
  // Per-CPU series only count CPUs; their time must not be added to the host-wide sum.
  AddSample(&d.latest, "0", {5000, 250, 1500, 40000, 500, 50, 100, 25}, 12'000'000'000);
  AddSample(&d.latest, "1", {5000, 250, 1500, 40000, 500, 50, 100, 25}, 12'000'000'000);
  d.rates[R"(vigil_host_cpu_seconds_total{cpu="0",mode="user"})"] = 0.8;
  const std::string frame = RenderTop(d, {});
  EXPECT_NE(frame.find("CPU     65.0% busy  (2 cpus)\n"), std::string::npos) << frame;
  EXPECT_NE(frame.find("usr 40.0% nice 5.0% sys 10.0% irq 2.0% sirq 5.0% wait 10.0% steal 3.0%"),
            std::string::npos)
      << frame;
}

TEST(TopCpuTest, KernelWithoutStealShowsTheModesItHas) {
  // A 2.6.11-era line with 7 fields: no steal. 100 ticks: user 50, idle 50.
  std::vector<SeriesView> range;
  AddSample(&range, "all", {0, 0, 0, 0, 0, 0, 0}, 0);
  AddSample(&range, "all", {50, 0, 0, 50, 0, 0, 0}, 1'000'000'000);
  TopData d;
  d.rates = RatesFromRange(range);
  d.latest = range;
  const std::string frame = RenderTop(d, {});
  EXPECT_NE(frame.find("CPU     50.0% busy  (1 cpus)"), std::string::npos) << frame;
  EXPECT_EQ(frame.find("steal"), std::string::npos) << frame;
}

SeriesView Gauge(std::string name, std::map<std::string, std::string> labels, double v) {
  SeriesView s;
  s.name = std::move(name);
  s.labels = std::move(labels);
  s.points = {{1, v}};
  return s;
}

TopData ProcessFrame() {
  TopData d;
  d.processes = nlohmann::json::parse(R"({"processes":[
    {"pid":101,"comm":"python3","job_id":"j1","user":"alice","reason":"gpu"},
    {"pid":202,"comm":"torchrun","job_id":"j2","user":"bob","reason":"pattern"},
    {"pid":303,"comm":"python3","job_id":"j3","user":"carol","reason":"gpu"}]})");
  const std::map<std::string, std::string> g0 = {{"gpu_uuid", "GPU-0"}, {"gpu_index", "0"}};
  auto proc = [](const char* comm, const char* job) {
    return std::map<std::string, std::string>{{"comm", comm}, {"job_id", job}};
  };
  d.latest = {
      Gauge("vigil_process_resident_memory_bytes", proc("python3", "j1"), 1 << 20),
      Gauge("vigil_process_resident_memory_bytes", proc("torchrun", "j2"), 4 << 20),
      Gauge("vigil_process_resident_memory_bytes", proc("python3", "j3"), 2 << 20),
      Gauge("vigil_process_count", proc("python3", "j3"), 2),
      Gauge("vigil_process_cpu_user_seconds_total", proc("python3", "j1"), 10),
      Gauge("vigil_process_cpu_system_seconds_total", proc("python3", "j1"), 1),
      Gauge("vigil_process_cpu_user_seconds_total", proc("torchrun", "j2"), 5),
      Gauge("vigil_gpu_utilization_ratio", g0, 0.5),
      Gauge("vigil_gpu_process_memory_used_bytes",
            {{"gpu_uuid", "GPU-0"}, {"gpu_index", "0"}, {"pid", "101"}, {"job_id", "j1"}},
            3.0 * (1 << 30)),
      Gauge("vigil_gpu_process_memory_used_bytes",
            {{"gpu_uuid", "GPU-0"}, {"gpu_index", "0"}, {"pid", "303"}, {"job_id", "j3"}},
            5.0 * (1 << 30)),
  };
  d.rates = {{R"(vigil_process_cpu_user_seconds_total{comm="python3",job_id="j1"})", 1.5},
             {R"(vigil_process_cpu_system_seconds_total{comm="python3",job_id="j1"})", 0.25},
             {R"(vigil_process_cpu_user_seconds_total{comm="torchrun",job_id="j2"})", 0.5}};
  return d;
}

TEST(TopCpuTest, ProcessesShowCpuAndRssAndSortByKey) {
  const TopData d = ProcessFrame();
  std::string frame = RenderTop(d, {});
  // CPU of one CPU: user + system rates 1.5 + 0.25 = 175%.
  EXPECT_NE(frame.find("175.0%"), std::string::npos) << frame;
  EXPECT_NE(frame.find("2.0 MiB*"), std::string::npos) << frame;  // Group of two python3 in j3.
  EXPECT_NE(frame.find("* CPU and RSS of all processes"), std::string::npos) << frame;
  EXPECT_LT(frame.find("alice"), frame.find("bob")) << frame;  // By CPU: 175% before 50%.
  TopLayout by_mem;
  by_mem.sort = TopSort::kMemory;
  frame = RenderTop(d, by_mem);
  EXPECT_LT(frame.find("bob"), frame.find("alice")) << frame;  // 4 MiB before 1 MiB.
  // GPU processes: user and command joined by pid, biggest GPU memory first.
  const size_t gpu_table = frame.find("GPU MEM");
  ASSERT_NE(gpu_table, std::string::npos) << frame;
  EXPECT_LT(frame.find("carol", gpu_table), frame.find("alice", gpu_table)) << frame;
  EXPECT_NE(frame.find("5.0 GiB", gpu_table), std::string::npos) << frame;
  TopLayout by_pid;
  by_pid.sort = TopSort::kPid;
  frame = RenderTop(d, by_pid);
  EXPECT_LT(frame.find("alice", frame.find("GPU MEM")), frame.find("carol", frame.find("GPU MEM")));
}

TEST(TopCpuTest, NarrowLayoutsKeepTheKeyColumnsWithinTheWidth) {
  const TopData d = ProcessFrame();
  for (int width : {60, 80}) {
    TopLayout layout;
    layout.width = width;
    layout.keys = true;
    const std::string frame = RenderTop(d, layout);
    size_t start = 0;
    while (start < frame.size()) {
      const size_t end = frame.find('\n', start);
      EXPECT_LE(end - start, static_cast<size_t>(width)) << frame.substr(start, end - start);
      start = end + 1;
    }
    EXPECT_NE(frame.find("RSS"), std::string::npos) << width << "\n" << frame;
    EXPECT_NE(frame.find("GPU MEM"), std::string::npos) << width << "\n" << frame;
    EXPECT_NE(frame.find("? help"), std::string::npos) << width << "\n" << frame;
    EXPECT_EQ(frame.find("FRAMEWORK"), std::string::npos) << width << "\n" << frame;
  }
}

TEST(TopCpuTest, HelpListsTheKeys) {
  TopLayout layout;
  layout.help = true;
  TopSort sort = TopSort::kCpu;
  ASSERT_TRUE(TopSortForKey('m', &sort));
  EXPECT_EQ(sort, TopSort::kMemory);
  EXPECT_FALSE(TopSortForKey('x', &sort));
  const std::string frame = RenderTop(ProcessFrame(), layout);
  EXPECT_NE(frame.find("m  sort by resident memory"), std::string::npos) << frame;
  EXPECT_NE(frame.find("q  quit"), std::string::npos) << frame;
  EXPECT_EQ(frame.find("PID"), std::string::npos) << frame;
}

}  // namespace
}  // namespace vigil
