// SPDX-License-Identifier: Apache-2.0
#include "trace/analyses.h"

#include <algorithm>

#include "hwspec/gpu_specs.h"
#include "trace/analysis/work_model/op_models.h"
#include "trace/insights/rules.h"
#include "trace/report/html_sections.h"
#include "trace/report/json_sections.h"
#include "trace/report/op_sections.h"
#include "trace/report/roofline_report.h"
#include "trace/report/text_sections.h"
#include "trace/report/what_if_report.h"

namespace vigil::trace {
namespace {

using Config = AnalysisConfig;

void Steps(const RankTrace& t, const Config&, RankReport* r) {
  for (const Step& s : t.links.steps) {
    StepReport sr;
    sr.number = s.number;
    sr.ts = s.ts;
    sr.dur = s.dur;
    int64_t from = s.ts, to = s.ts + s.dur;
    if (r->unit_ns != 1) {
      from = (from + r->unit_ns - 1) / r->unit_ns;
      to = to / r->unit_ns;
    }
    std::vector<size_t> subset = SelectLaunchedIn(r->view, from, to);
    sr.temporal = ComputeTemporalBreakdown(r->view, &subset);
    r->steps.push_back(sr);
  }
}

// HTA-compatible mode computes the launch, queue and bandwidth summaries on HTA's rows.
void Launch(const RankTrace& t, const Config& c, RankReport* r) {
  r->launch =
      c.hta_compat ? ComputeLaunchStatsHta(t, BuildHtaRows(t), c) : ComputeLaunchStats(t, c);
}
// The launch queue and copy bandwidth summaries read the same HTA rows: built once for both.
void Counters(const RankTrace& t, const Config& c, RankReport* r) {
  HtaRows rows;
  if (c.hta_compat) rows = BuildHtaRows(t);
  r->queue_length = ComputeQueueLength(t, c.hta_compat ? &rows : nullptr);
  r->memory_bw = ComputeMemoryBandwidth(t, c.hta_compat ? &rows : nullptr);
}

// GEMM kernels that miss the tensor cores (efficiency.h's test) run at the tensor-core rate the
// advice names: TF32 over FP32 where the GPU has TF32, else FP16; 2x on a GPU not in the table.
WhatIfResult ProjectGemmOnTensorCores(const RankTrace& t, const PathGraph& graph,
                                      const CriticalPath& measured) {
  double factor = 2;
  const GpuSpec* gpu = t.meta.devices.empty() ? nullptr : FindGpuSpec(t.meta.devices[0].name);
  if (gpu != nullptr && gpu->PeakFlops(GpuPipe::kFp32) > 0) {
    double tensor = gpu->PeakFlops(GpuPipe::kTf32Tensor) > 0 ? gpu->PeakFlops(GpuPipe::kTf32Tensor)
                                                             : gpu->PeakFlops(GpuPipe::kFp16Tensor);
    if (tensor > 0) factor = tensor / gpu->PeakFlops(GpuPipe::kFp32);
  }
  auto match = [&](uint32_t, uint32_t row) {
    if (t.events.kind[row] != EventKind::kKernel) return false;
    std::string_view name = t.strings.Get(t.events.name[row]);
    return IsGemmKernel(name) && !IsTensorCoreKernel(name);
  };
  return ProjectFaster(graph, measured, "gemm_on_tensor_cores", match, factor);
}

// The critical path and the what-if projections share one dependency graph of the rank's events,
// built once here (it is as large as the trace, so it is not kept). Runs after the roofline, whose
// per-kernel times the "every kernel at its roofline" projection replays, and after the
// attribution, whose kernel categories `--what-if attention=2x` names.
void CriticalPathAndWhatIf(const RankTrace& t, const Config& c, RankReport* r) {
  const PathGraph graph = BuildPathGraph(t, c.classifier);
  r->critical_path = CriticalPathOf(graph);
  auto specs = ParseWhatIfSpecs(c.what_if);
  // `--what-if NAME=Fx` names a kernel category (kernel_category.h), from the attribution.
  std::vector<KernelCategory> category;
  if (specs.ok() && !specs->empty()) {
    category.assign(t.events.size(), KernelCategory::kOther);
    for (size_t i = 0; i < r->attribution.size(); ++i) {
      category[t.links.gpu[i]] = r->attribution.category[i];
    }
  }
  auto category_of = [&](const RankTrace&, uint32_t row) {
    return row < category.size() ? KernelCategoryName(category[row]) : std::string_view();
  };
  r->what_if = ComputeWhatIfs(graph, r->critical_path,
                              specs.ok() ? *specs : std::vector<WhatIfSpec>(), category_of);
  if (r->efficiency.gemm_no_tc_time > 0) {
    r->what_if.projections.push_back(ProjectGemmOnTensorCores(t, graph, r->critical_path));
  }
  if (!r->roofline.kernel_roofline_ns.empty()) {
    std::vector<int64_t> roofline_ns(t.events.size(), -1);
    for (const auto& [row, ns] : r->roofline.kernel_roofline_ns) roofline_ns[row] = ns;
    r->what_if.projections.push_back(ProjectRoofline(graph, r->critical_path, roofline_ns));
  }
}

// Kernel categories use our kernel patterns in both modes (HTA's rules know only NCCL).
void CpuOps(const RankTrace& t, const Config& c, RankReport* r) {
  static const KernelClassifier kDefault = KernelClassifier::Default();
  r->attribution = AttributeKernels(t, c.hta_compat ? kDefault : c.classifier);
  r->cpu_ops = ComputeCpuOpBreakdown(t, r->attribution);
}

// % of roofline, after the efficiency analysis, whose roofline figure it sets. HTA has no
// roofline, and its view repeats rows (HTA's duplicates): default mode only.
void ComputeRoofline(const RankTrace& t, const Config& c, RankReport* r) {
  if (!c.roofline || c.hta_compat) return;
  r->roofline = AnalyzeRoofline(t, r->view, ModelOperator, c.graph_captures.get());
  SetRooflinePct(r->roofline, &r->efficiency);
}

// Every per-rank analysis, in computing (and JSON) order.
constexpr RankAnalysis kRankAnalyses[] = {
    {"temporal_breakdown",
     [](const RankTrace&, const Config&, RankReport* r) {
       r->temporal = ComputeTemporalBreakdown(r->view);
     },
     JsonTemporal, TextTemporal, HtmlTemporal, 1, 1},
    {"steps", Steps, JsonSteps, nullptr, HtmlSteps, 0, 3},
    {"idle_breakdown",
     [](const RankTrace&, const Config& c, RankReport* r) {
       r->idle =
           ComputeIdleBreakdown(r->view, c.kernel_wait_threshold_ns / r->unit_ns, c.hta_compat);
     },
     JsonIdle, TextIdle, HtmlIdle, 2, 2},
    {"kernel_breakdown",
     [](const RankTrace& t, const Config& c, RankReport* r) {
       r->kernels = ComputeKernelBreakdown(r->view, t.strings, c.top_kernels, c.duration_ratio);
     },
     JsonKernels, TextKernels, HtmlKernels, 3, 4},
    {"comm_comp_overlap",
     [](const RankTrace&, const Config&, RankReport* r) {
       r->overlap = ComputeCommOverlap(r->view);
     },
     JsonOverlap, nullptr, nullptr, 0, 0},
    {"launch_stats", Launch, JsonLaunch, TextLaunch, nullptr, 5, 0},
    {"memcpy",
     [](const RankTrace& t, const Config&, RankReport* r) { r->memcpy = AnalyzeMemcpy(t); },
     JsonMemcpy, nullptr, nullptr, 0, 0},
    {"syncs",
     [](const RankTrace& t, const Config&, RankReport* r) { r->syncs = AnalyzeSyncPoints(t); },
     JsonSyncs, nullptr, nullptr, 0, 0},
    {"workload",
     [](const RankTrace& t, const Config&, RankReport* r) { r->workload = DetectWorkload(t); },
     JsonWorkload, nullptr, nullptr, 0, 0},
    {"launch_bound",
     [](const RankTrace&, const Config& c, RankReport* r) {
       r->launch_bound = AnalyzeLaunchBound(r->view, c.short_kernel_ns / r->unit_ns);
     },
     JsonLaunchBound, nullptr, nullptr, 0, 0},
    {"kernel_sequences",
     [](const RankTrace&, const Config&, RankReport* r) {
       r->sequences = FindKernelSequences(r->view);
     },
     JsonKernelSequences, nullptr, nullptr, 0, 0},
    {"user_annotations",
     [](const RankTrace& t, const Config&, RankReport* r) {
       r->annotations = AnalyzeUserAnnotations(t);
     },
     JsonUserAnnotations, nullptr, nullptr, 0, 0},
    {"memory_timeline",
     [](const RankTrace& t, const Config&, RankReport* r) { r->memory = AnalyzeMemoryTimeline(t); },
     JsonMemoryTimeline, nullptr, HtmlMemoryTimeline, 0, 6},
    {"efficiency",
     [](const RankTrace& t, const Config&, RankReport* r) {
       r->efficiency = AnalyzeEfficiency(t, r->view);
     },
     JsonEfficiency, TextEfficiency, nullptr, 9, 0},
    {"roofline", ComputeRoofline, WriteRooflineJson,
     [](const RankReport& r, const TextOptions&, std::string* out) { RenderRooflineText(r, out); },
     [](const RankReport& r, std::string* h) { *h += HtmlRoofline(r); }, 10, 10},
    {"cpu_ops", CpuOps, WriteCpuOpsJson,
     [](const RankReport& r, const TextOptions& o, std::string* out) {
       *out += RenderCpuOpsText(r, o.top_kernels);
     },
     [](const RankReport& r, std::string* h) { *h += HtmlCpuOps(r); }, 4, 5},
    {"critical_path", CriticalPathAndWhatIf, JsonCriticalPath, TextCriticalPath, HtmlCriticalPath,
     6, 7},
    {"queue_length", Counters, JsonQueueLength, TextCounters, HtmlCounters, 8, 9},
    {"memory_bandwidth", nullptr /* with the queue length */, JsonMemoryBandwidth, nullptr, nullptr,
     0, 0},
    {"what_if", nullptr /* with the critical path */, WriteRankWhatIf,
     [](const RankReport& r, const TextOptions&, std::string* out) {
       AppendRankWhatIfText(r, out);
     },
     nullptr, 7, 0},
    {"gpu_timeline", nullptr /* draws the view and the critical path */, nullptr, nullptr,
     HtmlGpuTimeline, 0, 8},
};

constexpr ReportAnalysis kReportAnalyses[] = {
    {"cross_rank",
     [](const std::vector<RankTrace>&, const InsightThresholds& th, Report* report) {
       ComputeCrossRank(report->ranks, &report->cross, th.Get("straggler_pct"));
     },
     JsonCrossRank, TextCrossRank, HtmlCrossRank},
    {"multi_rank_critical_path",
     [](const std::vector<RankTrace>& traces, const InsightThresholds& th, Report* report) {
       if (traces.size() < 2) return;
       std::vector<const RankTrace*> ptrs;
       for (const RankTrace& t : traces) ptrs.push_back(&t);
       report->multi_path = ComputeMultiRankCriticalPath(ptrs, report->config.classifier);
       ApplyArrivalStragglers(ptrs, report->multi_path.matches, th.Get("straggler_pct"),
                              &report->cross);
     },
     JsonMultiRankPath, TextMultiRankPath, HtmlMultiRankPath},
};

std::vector<const RankAnalysis*> Ordered(bool text) {
  std::vector<const RankAnalysis*> out;
  for (const RankAnalysis& a : kRankAnalyses) {
    if (text ? a.text != nullptr : a.html != nullptr) out.push_back(&a);
  }
  std::stable_sort(out.begin(), out.end(), [&](const RankAnalysis* a, const RankAnalysis* b) {
    return text ? a->text_order < b->text_order : a->html_order < b->html_order;
  });
  return out;
}

}  // namespace

std::span<const RankAnalysis> RankAnalyses() { return kRankAnalyses; }
std::span<const ReportAnalysis> ReportAnalyses() { return kReportAnalyses; }

const std::vector<const RankAnalysis*>& RankAnalysesInTextOrder() {
  static const std::vector<const RankAnalysis*> order = Ordered(true);
  return order;
}

const std::vector<const RankAnalysis*>& RankAnalysesInHtmlOrder() {
  static const std::vector<const RankAnalysis*> order = Ordered(false);
  return order;
}

}  // namespace vigil::trace
