// SPDX-License-Identifier: Apache-2.0
#include "trace/analyze_independent.h"

#include <algorithm>
#include <map>

#include "base/file_util.h"
#include "trace/analyzer.h"
#include "trace/report/html_report.h"
#include "trace/report/json_report.h"
#include "trace/report/perfetto_trace.h"
#include "trace/report/text_report.h"

namespace vigil::trace {
namespace {

struct PerFileOutput {
  const std::string* path;
  const char* flag;
  const char* dir_ext;
  std::string (*render)(const Report&);
};

std::vector<PerFileOutput> Outputs(const AnalyzeOptions& o) {
  const PerFileOutput all[] = {
      {&o.json_path, "--json", ".json", [](const Report& r) { return RenderJsonReport(r); }},
      {&o.html_path, "--html", ".html", [](const Report& r) { return RenderHtmlReport(r); }},
      {&o.perfetto_path, "--perfetto", ".perfetto.json",
       [](const Report& r) { return RenderPerfettoTrace(r); }}};
  std::vector<PerFileOutput> given;
  for (const PerFileOutput& w : all) {
    if (!w.path->empty()) given.push_back(w);
  }
  return given;
}

}  // namespace

std::string TraceStem(std::string_view file) {
  const size_t slash = file.find_last_of('/');
  std::string_view name = slash == std::string_view::npos ? file : file.substr(slash + 1);
  if (name.ends_with(".gz")) name.remove_suffix(3);
  if (name.ends_with(".json")) name.remove_suffix(5);
  return std::string(name);
}

std::string PerFileOutputPath(const std::string& out, const std::string& file,
                              std::string_view dir_ext) {
  const std::string stem = TraceStem(file);
  if (out.ends_with('/')) return out + stem + std::string(dir_ext);
  if (IsDirectory(out)) return out + "/" + stem + std::string(dir_ext);
  const size_t slash = out.find_last_of('/');
  const size_t dot = out.find_last_of('.');
  // A dot in the file name (not a leading one) starts its extension.
  const size_t name_at = slash == std::string::npos ? 0 : slash + 1;
  if (dot == std::string::npos || dot <= name_at) return out + "-" + stem;
  return out.substr(0, dot) + "-" + stem + out.substr(dot);
}

int CheckPerFileOutputs(const TraceInputs& inputs, const AnalyzeOptions& o, FILE* err) {
  const std::vector<PerFileOutput> outputs = Outputs(o);
  if (outputs.empty()) return 0;
  std::map<std::string, std::string> by_stem;
  for (const std::string& file : inputs.files) {
    auto [it, fresh] = by_stem.try_emplace(TraceStem(file), file);
    if (!fresh) {
      std::fprintf(err,
                   "vigil analyze: --independent: %s and %s would write the same reports (both "
                   "are named %s); rename one, or analyse them in separate runs\n",
                   it->second.c_str(), file.c_str(), it->first.c_str());
      return 2;
    }
  }
  for (const PerFileOutput& w : outputs) {
    if (w.path->ends_with('/') && !IsDirectory(*w.path)) {
      // A directory named with a trailing '/' is made when missing.
      Status made = MakeDirs(*w.path);
      if (!made.ok()) {
        std::fprintf(err, "vigil analyze: %s: %s\n", w.flag, made.message().c_str());
        return 2;
      }
    }
  }
  for (const PerFileOutput& w : outputs) {
    for (const std::string& file : inputs.files) {
      Status st = CheckOutputPath(PerFileOutputPath(*w.path, file, w.dir_ext));
      if (!st.ok()) {
        std::fprintf(err, "vigil analyze: %s: %s\n", w.flag, st.message().c_str());
        return 2;
      }
    }
  }
  return 0;
}

int RunIndependent(const TraceInputs& inputs, const AnalyzeOptions& o, const AnalysisConfig& config,
                   const InsightThresholds& thresholds, const TraceLoader& load, FILE* out,
                   FILE* err) {
  const std::vector<PerFileOutput> outputs = Outputs(o);
  int code = 0;
  for (size_t i = 0; i < inputs.files.size(); ++i) {
    const std::string& file = inputs.files[i];
    TraceInputs one;
    one.files = {file};
    auto traces = load(one);
    if (!traces.ok()) {
      std::fprintf(err, "vigil analyze: %s\n", traces.status().ToString().c_str());
      code = std::max(code, 1);
      continue;
    }
    const Report report = Analyze(*traces, config, thresholds);
    if (!o.quiet) {
      std::fprintf(out, "%s== %s (%zu of %zu, analysed on its own) ==\n", i == 0 ? "" : "\n",
                   file.c_str(), i + 1, inputs.files.size());
      std::fputs(RenderTextSummary(report).c_str(), out);
    }
    for (const PerFileOutput& w : outputs) {
      const std::string path = PerFileOutputPath(*w.path, file, w.dir_ext);
      Status st = WriteFileAtomic(path, w.render(report));
      if (!st.ok()) {
        std::fprintf(err, "vigil analyze: %s: %s\n", w.flag, st.ToString().c_str());
        code = std::max(code, 1);
        continue;
      }
      std::fprintf(out, "Wrote %s report of %s to %s\n", w.flag + 2, file.c_str(), path.c_str());
    }
    if (o.each_report) code = std::max(code, o.each_report(file, RenderJsonReport(report)));
  }
  return code;
}

}  // namespace vigil::trace
