// SPDX-License-Identifier: Apache-2.0
#include "trace/analyze_main.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "base/file_util.h"
#include "base/strings.h"
#include "trace/analysis/graph_captures.h"
#include "trace/analysis/trace_diff.h"
#include "trace/analysis/what_if.h"
#include "trace/analyzer.h"
#include "trace/reader/kineto_reader.h"
#include "trace/report/html_report.h"
#include "trace/report/json_report.h"
#include "trace/report/perfetto_trace.h"
#include "trace/report/text_report.h"

namespace vigil::trace {
namespace {

uint64_t InputBytes(const std::string& path) {
  uint64_t total = 0;
  if (IsDirectory(path)) {
    auto files = ListTraceFiles(path, &total);
    return files.ok() ? total : 0;
  }
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

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

StatusOr<std::vector<RankTrace>> Load(const std::string& path, const AnalyzeOptions& o, FILE* err) {
  bool tty = o.progress > 0 || (o.progress < 0 && ::isatty(::fileno(err)) == 1);
  Progress progress(tty, o.progress > 0, InputBytes(path), err);
  ReadOptions ro;
  ro.threads = o.threads;
  ro.progress_bytes = progress.counter();
  auto traces = ReadTraces(path, ro);
  progress.Stop();
  return traces;
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
  return t->Set(name, v);
}

int RunAnalyze(const AnalyzeOptions& o, FILE* out, FILE* err) {
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
  auto traces = Load(o.input, o, err);
  if (!traces.ok()) {
    std::fprintf(err, "vigil analyze: %s\n", traces.status().ToString().c_str());
    return 1;
  }
  Report report = Analyze(*traces, config, thresholds);
  if (!o.quiet) std::fputs(RenderTextSummary(report).c_str(), out);
  if (!o.diff_path.empty()) {
    auto other = Load(o.diff_path, o, err);
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
    Status st = Write(w.path, w.render(report));
    if (!st.ok()) {
      std::fprintf(err, "vigil analyze: %s: %s\n", w.what, st.ToString().c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace vigil::trace
