// SPDX-License-Identifier: Apache-2.0
#include "trace/analyze_main.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "base/closest_name.h"
#include "base/file_util.h"
#include "base/strings.h"
#include "trace/analysis/cpu_profile.h"
#include "trace/analysis/graph_captures.h"
#include "trace/analysis/trace_diff.h"
#include "trace/analysis/what_if.h"
#include "trace/analyze_independent.h"
#include "trace/analyze_inputs.h"
#include "trace/analyzer.h"
#include "trace/reader/kineto_reader.h"
#include "trace/report/chrome_trace_merge.h"
#include "trace/report/html_report.h"
#include "trace/report/json_report.h"
#include "trace/report/perfetto_trace.h"
#include "trace/report/text_report.h"

namespace vigil::trace {
namespace {

// A progress bar on stderr, shown only when reading takes longer than a second (at once when
// `immediate`: --progress=always). Ends with the final state (100% once every byte was read),
// then the line is cleared.
class Progress {
 public:
  Progress(bool enabled, bool immediate, uint64_t total, FILE* err)
      : total_(total), err_(err), immediate_(immediate) {
    if (enabled && total > 0) thread_ = std::thread([this] { Run(); });
  }
  ~Progress() { Stop(); }
  std::atomic<uint64_t>* counter() { return &bytes_; }
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Draw() {
    double f = std::min(1.0, static_cast<double>(bytes_.load()) / static_cast<double>(total_));
    const int pct = static_cast<int>(f * 100);
    const int bar = pct * 30 / 100;  // From the printed percentage, so the two always agree.
    std::fprintf(err_, "\rreading traces [%-30s] %3d%%", std::string(bar, '#').c_str(), pct);
    std::fflush(err_);
  }

  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    if (!immediate_ && cv_.wait_for(lock, std::chrono::seconds(1), [this] { return done_; })) {
      return;
    }
    while (!done_) {
      Draw();
      cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return done_; });
    }
    Draw();
    std::fprintf(err_, "\r%60s\r", "");
    std::fflush(err_);
  }

  std::atomic<uint64_t> bytes_{0};
  uint64_t total_;
  FILE* err_;
  bool immediate_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

StatusOr<std::vector<RankTrace>> Load(const TraceInputs& inputs, const AnalyzeOptions& o,
                                      FILE* err) {
  bool tty = o.progress > 0 || (o.progress < 0 && ::isatty(::fileno(err)) == 1);
  Progress progress(tty, o.progress > 0, inputs.bytes, err);
  ReadOptions ro;
  ro.threads = o.threads;
  ro.progress_bytes = progress.counter();
  auto traces = ReadTraceFiles(inputs.files, ro);
  progress.Stop();
  return traces;
}

StatusOr<std::vector<RankTrace>> Load(const std::vector<std::string>& paths,
                                      const AnalyzeOptions& o, FILE* err) {
  VIGIL_ASSIGN_OR_RETURN(TraceInputs inputs, ExpandTraceInputs(paths));
  return Load(inputs, o, err);
}

// The checks that need no trace: output paths, the files --diff and --merge-snoop name, and
// the flags --independent does not go with. 0, or the exit code after saying why.
int CheckBeforeReading(const AnalyzeOptions& o, FILE* err) {
  using Flag = std::pair<const std::string*, const char*>;
  for (const auto& [path, flag] : {Flag{&o.json_path, "--json"}, Flag{&o.html_path, "--html"},
                                   Flag{&o.perfetto_path, "--perfetto"}}) {
    if (path->empty()) continue;
    if (o.independent && *path == "-") {
      std::fprintf(err,
                   "vigil analyze: %s -: --independent writes one report per file, to files "
                   "(give a name or a directory)\n",
                   flag);
      return 2;
    }
    if (o.independent) continue;  // One path per file: checked once the files are known.
    Status st = CheckOutputPath(*path);
    if (!st.ok()) {
      std::fprintf(err, "vigil analyze: %s: %s\n", flag, st.message().c_str());
      return 2;
    }
  }
  for (const auto& [path, flag] :
       {Flag{&o.diff_path, "--diff"}, Flag{&o.merge_snoop_path, "--merge-snoop"}}) {
    if (!path->empty() && !PathExists(*path)) {
      std::fprintf(err, "vigil analyze: %s: no such file or directory: %s\n", flag, path->c_str());
      return 2;
    }
  }
  if (o.independent && (!o.diff_path.empty() || !o.merge_snoop_path.empty())) {
    std::fprintf(err,
                 "vigil analyze: --independent analyses each file on its own; --diff and "
                 "--merge-snoop take the traces of one job\n");
    return 2;
  }
  return 0;
}

Status Write(const std::string& path, const std::string& content) {
  if (path == "-") {
    std::fwrite(content.data(), 1, content.size(), stdout);
    return OkStatus();
  }
  return WriteFileAtomic(path, content);
}

}  // namespace

Status ApplyThreshold(std::string_view assignment, AnalysisConfig* c, InsightThresholds* t) {
  size_t eq = assignment.find('=');
  if (eq == std::string_view::npos) {
    return InvalidArgumentError("threshold must be name=value: " + std::string(assignment));
  }
  std::string_view name = Trim(assignment.substr(0, eq));
  auto value = ParseDouble(Trim(assignment.substr(eq + 1)));
  if (!value)
    return InvalidArgumentError("threshold value is not a number: " + std::string(assignment));
  double v = *value;
  if (name == "duration_ratio") {
    c->duration_ratio = v;
    return OkStatus();
  }
  const std::pair<const char*, int64_t*> ns[] = {
      {"kernel_wait_threshold_ns", &c->kernel_wait_threshold_ns},
      {"runtime_cutoff_ns", &c->runtime_cutoff_ns},
      {"launch_delay_cutoff_ns", &c->launch_delay_cutoff_ns},
      {"short_kernel_ns", &c->short_kernel_ns}};
  for (const auto& [n, p] : ns) {
    if (name == n) {
      *p = static_cast<int64_t>(v);
      return OkStatus();
    }
  }
  if (name == "top_kernels") {
    c->top_kernels = static_cast<int>(v);
    return OkStatus();
  }
  if (t->values().count(name) == 0) {
    std::vector<std::string> names = {"duration_ratio", "top_kernels"};
    for (const auto& entry : ns) names.emplace_back(entry.first);
    for (const auto& entry : t->values()) names.push_back(entry.first);
    const std::string near = ClosestName(name, names);
    return InvalidArgumentError("unknown threshold '" + std::string(name) + "'" +
                                (near.empty() ? "" : "; did you mean '" + near + "'?") +
                                " The thresholds are: " + Join(names, ", "));
  }
  return t->Set(name, v);
}

int RunAnalyze(const AnalyzeOptions& o, FILE* out, FILE* err) {
  if (int code = CheckBeforeReading(o, err); code != 0) return code;
  AnalysisConfig config;
  InsightThresholds thresholds;
  config.hta_compat = o.hta_compat;
  config.roofline = !o.no_roofline;
  for (const std::string& a : o.thresholds) {
    Status st = ApplyThreshold(a, &config, &thresholds);
    if (!st.ok()) {
      std::fprintf(err, "vigil analyze: %s\n", st.message().c_str());
      return 2;
    }
  }
  if (!o.kernel_patterns_path.empty()) {
    auto text = ReadSmallFile(o.kernel_patterns_path);
    Status st = text.ok() ? config.classifier.AddRules(*text) : text.status();
    if (!st.ok()) {
      std::fprintf(err, "vigil analyze: --kernel-patterns: %s\n", st.ToString().c_str());
      return 2;
    }
  }
  if (!o.merge_snoop_path.empty() && o.perfetto_path.empty()) {
    std::fprintf(err, "vigil analyze: --merge-snoop needs --perfetto FILE to merge into\n");
    return 2;
  }
  if (!o.what_if.empty()) {
    auto specs = ParseWhatIfSpecs(o.what_if);
    if (!specs.ok()) {
      std::fprintf(err, "vigil analyze: --what-if: %s\n", specs.status().message().c_str());
      return 2;
    }
    config.what_if = o.what_if;
  }
  if (!o.graph_captures_path.empty()) {
    auto captures = LoadGraphCaptures(o.graph_captures_path);
    if (!captures.ok()) {
      std::fprintf(err, "vigil analyze: --graph-captures: %s\n",
                   captures.status().ToString().c_str());
      return 1;
    }
    config.graph_captures = *captures;
  }
  if (!o.cpu_profile_path.empty()) {
    auto profile = LoadCpuProfile(o.cpu_profile_path);
    if (!profile.ok()) {
      std::fprintf(err, "vigil analyze: --cpu-profile: %s\n", profile.status().ToString().c_str());
      return 1;
    }
    config.cpu_profile = *profile;
  }
  std::vector<std::string> paths = {o.input};
  paths.insert(paths.end(), o.more_inputs.begin(), o.more_inputs.end());
  auto inputs = ExpandTraceInputs(paths);
  if (!inputs.ok()) {
    std::fprintf(err, "vigil analyze: %s\n", inputs.status().ToString().c_str());
    return 1;
  }
  if (o.independent) {
    if (int code = CheckPerFileOutputs(*inputs, o, err); code != 0) return code;
    return RunIndependent(
        *inputs, o, config, thresholds, [&](const TraceInputs& one) { return Load(one, o, err); },
        out, err);
  }
  auto traces = Load(*inputs, o, err);
  if (!traces.ok()) {
    std::fprintf(err, "vigil analyze: %s\n", traces.status().ToString().c_str());
    return 1;
  }
  if (!o.same_job) {
    const std::string why = WhyNotOneJob(*traces, config.classifier);
    if (!why.empty()) {
      std::fprintf(err,
                   "vigil analyze: these %zu traces are not one job's ranks: %s. Analyse each "
                   "on its own with --independent, or give the files of one job.\n",
                   traces->size(), why.c_str());
      return 2;
    }
  }
  Report report = Analyze(*traces, config, thresholds);
  if (!o.quiet) std::fputs(RenderTextSummary(report).c_str(), out);
  if (!o.diff_path.empty()) {
    auto other = Load(std::vector<std::string>{o.diff_path}, o, err);
    if (!other.ok()) {
      std::fprintf(err, "vigil analyze: --diff: %s\n", other.status().ToString().c_str());
      return 1;
    }
    Report test = Analyze(*other, config, thresholds);
    std::fputs("\n", out);
    report.diff = DiffReports(report, test);
    std::fputs(RenderTraceDiff(*report.diff).c_str(), out);
  }
  struct Output {
    const std::string& path;
    const char* what;
    std::string (*render)(const Report&);
  };
  const Output outputs[] = {
      {o.json_path, "--json", [](const Report& r) { return RenderJsonReport(r); }},
      {o.html_path, "--html", [](const Report& r) { return RenderHtmlReport(r); }},
      {o.perfetto_path, "--perfetto", [](const Report& r) { return RenderPerfettoTrace(r); }}};
  for (const Output& w : outputs) {
    if (w.path.empty()) continue;
    std::string text = w.render(report);
    if (&w.path == &o.perfetto_path && !o.merge_snoop_path.empty()) {
      // The snoop trace is on Unix time; the Perfetto output on the (first) rank's clock.
      const TraceMeta* meta = report.ranks.empty() ? nullptr : &report.ranks.front().trace->meta;
      const int64_t base_ns = meta != nullptr && meta->has_base_time ? meta->base_time_ns : 0;
      StatusOr<size_t> merged = MergeChromeTraceFile(o.merge_snoop_path, base_ns, &text);
      if (!merged.ok()) {
        std::fprintf(err, "vigil analyze: --merge-snoop: %s\n", merged.status().ToString().c_str());
        return 1;
      }
    }
    Status st = Write(w.path, text);
    if (!st.ok()) {
      std::fprintf(err, "vigil analyze: %s: %s\n", w.what, st.ToString().c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace vigil::trace
