// SPDX-License-Identifier: Apache-2.0
#include "cli/analysis_upload.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "base/file_util.h"
#include "base/http_exchange.h"
#include "base/strings.h"
#include "cli/fleet_endpoint.h"
#include "trace/analyze_inputs.h"

namespace vigil {
namespace {

constexpr size_t kMaxReportBytes = 64 << 20;

// The first trace file of a directory (sorted names), or the input itself.
std::string FirstTraceFile(const std::string& input) {
  if (!IsDirectory(input)) return input;
  StatusOr<std::vector<std::string>> names = ListDir(input);
  if (!names.ok()) return "";
  std::sort(names->begin(), names->end());
  for (const std::string& n : *names) {
    if (n.ends_with(".json") || n.ends_with(".json.gz")) return JoinPath(input, n);
  }
  return "";
}

std::string Hostname() {
  char name[256] = {};
  return gethostname(name, sizeof(name) - 1) == 0 ? std::string(name) : std::string();
}

// A temporary file for the report when the user asked for none (or for stdout).
StatusOr<std::string> TempReportPath() {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/vigil-analyze-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) return InternalError("cannot create a temporary file for the report");
  close(fd);
  return path;
}

int Upload(CliContext& ctx, const AnalysisUploadFlags& flags, const std::string& job_id,
           const std::string& input, const std::string& report, FILE* out, FILE* err) {
  HttpRequest request;
  request.base_url = flags.url;
  request.method = "POST";
  request.body = report;
  request.gzip = true;  // Reports compress ~10x.
  request.timeout_ns = std::max<int64_t>(ctx.TimeoutNs(), 30LL * 1000000000);
  const std::string& token_file = flags.token_file.empty() ? ctx.token_file : flags.token_file;
  if (!token_file.empty()) {
    StatusOr<std::string> token = ReadFleetToken(token_file);
    if (!token.ok()) return ctx.Fail(token.status(), "analyze --upload");
    request.headers.emplace_back("Authorization", "Bearer " + *token);
  }
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(input, ec);
  HttpParams params = {
      {"job_id", job_id}, {"host", Hostname()}, {"trace_path", ec ? input : abs.string()}};
  if (!flags.reason.empty()) params.emplace_back("reason", flags.reason);
  request.path = WithQuery("/api/v1/analyses", params);
  StatusOr<HttpReply> res = HttpExchange(request);
  if (!res.ok()) {
    switch (res.status().code()) {
      case StatusCode::kInvalidArgument:
        std::fprintf(err, "vigil: analyze: --upload: not a vigil-fleet URL: %s\n",
                     flags.url.c_str());
        return kExitUsage;
      case StatusCode::kUnavailable:
        PrintFleetUnreachable(err, "analyze --upload", flags.url, res.status().message());
        return kExitUnreachable;
      default:
        std::fprintf(err, "vigil: analyze: --upload: %s\n", res.status().message().c_str());
        return kExitFailure;
    }
  }
  const nlohmann::json reply = nlohmann::json::parse(res->body, nullptr, false);
  if (res->status != 200 || reply.is_discarded() || !reply.contains("id")) {
    const std::string why = !reply.is_discarded() && reply.contains("error")
                                ? reply["error"].get<std::string>()
                                : SanitizeForLog(res->body);
    std::fprintf(err, "vigil: analyze: upload to %s: HTTP %d: %s\n", flags.url.c_str(), res->status,
                 why.c_str());
    return kExitFailure;
  }
  std::fprintf(out, "Uploaded to %s as analysis %lld of job %s\n", flags.url.c_str(),
               static_cast<long long>(reply["id"].get<int64_t>()), job_id.c_str());
  return kExitOk;
}

// --independent: each file is its own job's trace, so each report is uploaded on its own, to
// the job in that file's metadata (checked for every file before any analysis).
int UploadEach(CliContext& ctx, trace::AnalyzeOptions options, const AnalysisUploadFlags& flags,
               FILE* out, FILE* err) {
  if (!flags.job_id.empty()) {
    std::fprintf(err,
                 "vigil: analyze: --upload with --independent sends each file's report to the job "
                 "in its own metadata; --job-id names one job\n");
    return kExitUsage;
  }
  std::vector<std::string> paths = {options.input};
  paths.insert(paths.end(), options.more_inputs.begin(), options.more_inputs.end());
  StatusOr<trace::TraceInputs> inputs = trace::ExpandTraceInputs(paths);
  if (!inputs.ok()) return trace::RunAnalyze(options, out, err);  // Which says why.
  std::map<std::string, std::string> job_ids;
  for (const std::string& file : inputs->files) {
    const std::string job_id = JobIdFromTrace(file);
    if (job_id.empty()) {
      std::fprintf(err,
                   "vigil: analyze: --upload with --independent: %s carries no job_id metadata "
                   "(each report goes to its own file's job)\n",
                   file.c_str());
      return kExitUsage;
    }
    job_ids[file] = job_id;
  }
  options.each_report = [&](const std::string& file, const std::string& report) {
    return Upload(ctx, flags, job_ids[file], file, report, out, err);
  };
  return trace::RunAnalyze(options, out, err);
}

}  // namespace

void AddAnalysisUploadFlags(CLI::App* cmd, AnalysisUploadFlags* flags) {
  cmd->add_option("--upload,--fleet-url", flags->url,
                  "Upload the JSON report to vigil-fleet at URL (http://HOST:PORT)")
      ->type_name("URL");
  cmd->add_option("--job-id", flags->job_id,
                  "Job the uploaded analysis belongs to (default: the trace's job_id metadata)");
  cmd->add_option("--reason", flags->reason, "Why this trace was taken (shown with the upload)");
  cmd->add_option("--fleet-token-file", flags->token_file,
                  "File holding a vigil-fleet token for --upload (default: --token-file)");
}

std::string JobIdFromTrace(const std::string& input) {
  const std::string file = FirstTraceFile(input);
  if (file.empty()) return "";
  gzFile gz = gzopen(file.c_str(), "rb");  // Reads plain files as they are.
  if (gz == nullptr) return "";
  std::string head(1 << 20, '\0');
  const int n = gzread(gz, head.data(), static_cast<unsigned>(head.size()));
  gzclose(gz);
  head.resize(n > 0 ? static_cast<size_t>(n) : 0);
  // Metadata is written ahead of "traceEvents"; look no further.
  const std::string_view text = std::string_view(head).substr(0, head.find("\"traceEvents\""));
  for (const char* key : {"\"job_id\"", "\"jobId\"", "\"jobID\""}) {
    const size_t at = text.find(key);
    if (at == std::string_view::npos) continue;
    std::string_view rest = Trim(text.substr(at + std::strlen(key)));
    if (rest.empty() || rest[0] != ':') continue;
    rest = Trim(rest.substr(1));
    size_t end = 0;
    if (!rest.empty() && rest[0] == '"') {
      end = rest.find('"', 1);
      if (end == std::string_view::npos || end > 257) continue;
      const std::string_view id = rest.substr(1, end - 1);
      if (!id.empty() && id.find('\\') == std::string_view::npos) return std::string(id);
      continue;
    }
    while (end < rest.size() && end < 20 && rest[end] >= '0' && rest[end] <= '9') ++end;
    if (end > 0) return std::string(rest.substr(0, end));
  }
  return "";
}

int AnalyzeAndUpload(CliContext& ctx, trace::AnalyzeOptions options,
                     const AnalysisUploadFlags& flags, FILE* out, FILE* err) {
  if (flags.url.empty()) {
    if (!flags.job_id.empty() || !flags.reason.empty() || !flags.token_file.empty()) {
      std::fprintf(err,
                   "vigil: analyze: --job-id, --reason and --fleet-token-file go with --upload\n");
      return kExitUsage;
    }
    return trace::RunAnalyze(options, out, err);
  }
  if (flags.url.rfind("http://", 0) != 0 && flags.url.rfind("https://", 0) != 0) {
    std::fprintf(err, "vigil: analyze: --upload must be http://HOST:PORT, got %s\n",
                 flags.url.c_str());
    return kExitUsage;
  }
  if (options.independent) return UploadEach(ctx, std::move(options), flags, out, err);
  const std::string job_id = flags.job_id.empty() ? JobIdFromTrace(options.input) : flags.job_id;
  if (job_id.empty()) {
    std::fprintf(err, "vigil: analyze: --upload needs --job-id: %s carries no job_id metadata\n",
                 options.input.c_str());
    return kExitUsage;
  }
  // The report goes where the user asked (--json FILE) or to a temporary file.
  std::string temp;
  const bool to_stdout = options.json_path == "-";
  if (options.json_path.empty() || to_stdout) {
    StatusOr<std::string> path = TempReportPath();
    if (!path.ok()) return ctx.Fail(path.status(), "analyze --upload");
    temp = *path;
    options.json_path = temp;
  }
  int code = trace::RunAnalyze(options, out, err);
  StatusOr<std::string> report = code == kExitOk ? ReadSmallFile(options.json_path, kMaxReportBytes)
                                                 : StatusOr<std::string>(std::string());
  if (!temp.empty()) std::remove(temp.c_str());
  if (code != kExitOk) return code;
  if (!report.ok()) return ctx.Fail(report.status(), "analyze --upload: read the report");
  if (to_stdout) std::fwrite(report->data(), 1, report->size(), out);
  return Upload(ctx, flags, job_id, options.input, *report, to_stdout ? err : out, err);
}

}  // namespace vigil
