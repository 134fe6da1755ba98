// SPDX-License-Identifier: Apache-2.0
// `vigil fleet report --by team|model|user|job|framework|host|gpu_model --since 7d
//  [--until T] [--bucket 1d] [--format table|csv|json] [--fleet URL | --prometheus URL]`:
// GPU-hours (busy / held-but-idle / idle), energy and cost from vigil-fleet's /api/v1/attribution,
// the same numbers the service's API and dashboard show; with --prometheus the same report
// computed with PromQL from the remote-written counters (fleet_promql_report.h).
// `vigil fleet jobs [--since 7d]` and `vigil fleet job ID`: jobs with GPU-hours, MFU, model FLOP/s
// and step time; `vigil fleet hosts`: the reporting hosts. Talks to vigil-fleet and Prometheus only
// over their HTTP APIs.
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/http_authorization.h"
#include "base/secret_file.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "cli/cli_context.h"
#include "cli/fleet_endpoint.h"
#include "cli/fleet_profile_command.h"
#include "cli/fleet_promql_report.h"
#include "cli/fleet_render.h"

namespace vigil {
namespace {

struct ReportOptions {
  std::string by = "team";
  std::string since = "7d";
  std::string until;
  std::string bucket;
  std::string format = "table";
  std::string fleet;
  std::string token_file;
  std::string prometheus;
  std::string prometheus_auth_file;  // "bearer TOKEN" or "basic USER:PASSWORD"
  double price_per_gpu_hour = 0;
  std::string job_id;  // `vigil fleet job ID`.
  int limit = 100;
};

// GET of a vigil-fleet API path: the parsed reply, or an exit code after printing why.
int FleetGet(CliContext& ctx, const ReportOptions& o, const char* what, const std::string& path,
             const HttpParams& params, nlohmann::json* reply) {
  FleetCall call{what};
  call.path = path;
  call.params = params;
  return CallFleet(ctx, o.fleet, o.token_file, call, reply);
}

// "7d" (back from now) or Unix seconds, as vigil-fleet reads them.
constexpr int64_t kMaxUnixSeconds = int64_t{9'200'000'000};

StatusOr<int64_t> WindowTime(const std::string& text, const char* flag, int64_t now_s) {
  if (text.find_first_not_of("0123456789") == std::string::npos && text.size() >= 9) {
    // Unix seconds up to the year 2262 (what int64 nanoseconds reach).
    std::optional<int64_t> unix_s = ParseInt64(text);
    if (!unix_s || *unix_s > kMaxUnixSeconds) {
      return InvalidArgumentError(std::string(flag) + ": unix seconds out of range: " + text);
    }
    return *unix_s;
  }
  StatusOr<int64_t> d = ParseDuration(text);
  if (!d.ok()) {
    return InvalidArgumentError(std::string(flag) + ": want a duration like 7d or unix seconds");
  }
  return now_s - *d / kNanosPerSecond;
}

// The report computed with PromQL against Prometheus or VictoriaMetrics at o.prometheus
// (http[s]://HOST:PORT[/PATH-PREFIX]; https trusts the system's CAs or SSL_CERT_FILE).
int RunPromqlReportCommand(CliContext& ctx, const ReportOptions& o, nlohmann::json* reply) {
  const std::string& url = o.prometheus;
  const size_t scheme_end = url.rfind("https://", 0) == 0  ? 8
                            : url.rfind("http://", 0) == 0 ? 7
                                                           : 0;
  if (scheme_end == 0) {
    std::fprintf(stderr,
                 "vigil: fleet report: --prometheus must be http[s]://HOST:PORT[/PREFIX], got %s\n",
                 url.c_str());
    return kExitUsage;
  }
  const size_t slash = url.find('/', scheme_end);
  const std::string base = url.substr(0, slash);
  std::string prefix = slash == std::string::npos ? "" : url.substr(slash);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  PromqlReportRequest r;
  r.by = o.by;
  r.price_per_gpu_hour = o.price_per_gpu_hour;
  const int64_t now_s = UnixNanos() / kNanosPerSecond;
  StatusOr<int64_t> since = WindowTime(o.since, "--since", now_s);
  StatusOr<int64_t> until =
      o.until.empty() ? StatusOr<int64_t>(now_s) : WindowTime(o.until, "--until", now_s);
  if (!since.ok() || !until.ok()) {
    return ctx.Fail(!since.ok() ? since.status() : until.status(), "fleet report");
  }
  r.since_s = *since;
  r.until_s = *until;
  if (!o.bucket.empty()) {
    StatusOr<int64_t> bucket = ParseDuration(o.bucket);
    if (!bucket.ok()) return ctx.Fail(bucket.status(), "fleet report: --bucket");
    r.bucket_s = *bucket / kNanosPerSecond;
  }
  std::string authorization;
  if (!o.prometheus_auth_file.empty()) {
    (void)CheckSecretFile(o.prometheus_auth_file, "--prometheus-auth-file", false);
    StatusOr<std::string> auth = ReadAuthorizationFile(o.prometheus_auth_file);
    if (!auth.ok()) return ctx.Fail(auth.status(), "fleet report: --prometheus-auth-file");
    authorization = std::move(*auth);
  }
  bool unreachable = false, asked = false;
  PromqlFetch fetch = [&](const std::string& path,
                          const HttpParams& params) -> StatusOr<std::string> {
    asked = true;
    HttpRequest request;
    request.base_url = base;
    request.method = "POST";
    if (!authorization.empty()) request.headers.emplace_back("Authorization", authorization);
    request.path = prefix + path;
    request.form = params;
    request.timeout_ns = ctx.TimeoutNs();
    StatusOr<HttpReply> res = HttpExchange(request);
    if (!res.ok()) {
      unreachable = res.status().code() == StatusCode::kUnavailable;
      return unreachable ? UnavailableError("cannot reach " + url + ": " + res.status().message())
                         : res.status();
    }
    if (res->status != 200) {
      const nlohmann::json doc = nlohmann::json::parse(res->body, nullptr, false);
      const std::string why = !doc.is_discarded() && doc.is_object() && doc.contains("error")
                                  ? doc["error"].dump()
                                  : SanitizeForLog(res->body);
      return FailedPreconditionError("HTTP " + std::to_string(res->status) + ": " + why);
    }
    return std::move(res->body);
  };
  StatusOr<nlohmann::json> report = RunPromqlReport(r, fetch);
  if (!report.ok()) {
    std::fprintf(stderr, "vigil: fleet report: %s\n", report.status().ToString().c_str());
    return unreachable ? kExitUnreachable : !asked ? kExitUsage : kExitFailure;
  }
  *reply = std::move(*report);
  (*reply)["prometheus"] = url;
  return kExitOk;
}

int RunReport(CliContext& ctx, const ReportOptions& o) {
  nlohmann::json reply;
  int code;
  if (!o.prometheus.empty()) {
    code = RunPromqlReportCommand(ctx, o, &reply);
  } else {
    HttpParams params = {{"by", o.by}, {"since", o.since}};
    if (!o.until.empty()) params.emplace_back("until", o.until);
    if (!o.bucket.empty()) params.emplace_back("bucket", o.bucket);
    code = FleetGet(ctx, o, "fleet report", "/api/v1/attribution", params, &reply);
  }
  if (code != kExitOk) return code;
  std::string out = o.format == "json"  ? reply.dump(2) + "\n"
                    : o.format == "csv" ? RenderAttributionCsv(reply)
                                        : RenderAttributionTable(reply);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

int RunJobs(CliContext& ctx, const ReportOptions& o) {
  nlohmann::json reply;
  const int code = FleetGet(ctx, o, "fleet jobs", "/api/v1/jobs",
                            {{"since", o.since}, {"limit", std::to_string(o.limit)}}, &reply);
  if (code != kExitOk) return code;
  nlohmann::json hosts;  // Only to say why the list is empty.
  if (o.format != "json" && reply.value("jobs", nlohmann::json::array()).empty() &&
      FleetGet(ctx, o, "fleet jobs", "/api/v1/hosts", {}, &hosts) != kExitOk) {
    hosts = nullptr;
  }
  const std::string out = o.format == "json" ? reply.dump(2) + "\n" : RenderJobsTable(reply, hosts);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

int RunHosts(CliContext& ctx, const ReportOptions& o) {
  nlohmann::json reply;
  const int code = FleetGet(ctx, o, "fleet hosts", "/api/v1/hosts", {}, &reply);
  if (code != kExitOk) return code;
  const std::string out = o.format == "json" ? reply.dump(2) + "\n" : RenderHostsTable(reply);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

int RunJob(CliContext& ctx, const ReportOptions& o) {
  nlohmann::json reply;
  const int code =
      FleetGet(ctx, o, "fleet job", "/api/v1/jobs/" + PercentEncode(o.job_id), {}, &reply);
  if (code != kExitOk) return code;
  const std::string out = o.format == "json" ? reply.dump(2) + "\n" : RenderJob(reply);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

void AddFleetOptions(CLI::App* cmd, ReportOptions* o) {
  cmd->add_option("--fleet-url,--fleet", o->fleet,
                  "vigil-fleet URL (default $VIGIL_FLEET_URL or http://127.0.0.1:9480)")
      ->type_name("URL");
  cmd->add_option("--fleet-token-file", o->token_file, "File holding a vigil-fleet token");
}

}  // namespace

void AddFleetCommand(CLI::App& app, CliContext& ctx) {
  CLI::App* fleet = app.add_subcommand("fleet", "Fleet-wide GPU-hour attribution (vigil-fleet)");
  fleet->require_subcommand(1);
  auto opts = std::make_shared<ReportOptions>();
  CLI::App* report = fleet->add_subcommand(
      "report", "GPU-hours busy / held-but-idle / idle, energy and cost by a dimension");
  report->add_option("--by", opts->by, "Group by")
      ->check(CLI::IsMember({"team", "model", "user", "job", "framework", "host", "gpu_model"}))
      ->capture_default_str();
  report->add_option("--since", opts->since, "Window start: a duration back (7d) or unix seconds")
      ->capture_default_str();
  report->add_option("--until", opts->until, "Window end (default now)");
  report->add_option("--bucket", opts->bucket, "Split the window into buckets (1h, 1d)");
  report->add_option("--format", opts->format, "Output format")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  AddFleetOptions(report, opts.get());
  report->add_option("--prometheus", opts->prometheus,
                     "Compute the report with PromQL from Prometheus or VictoriaMetrics at this "
                     "URL (http://HOST:PORT[/PREFIX]) instead of asking vigil-fleet");
  report->add_option("--prometheus-auth-file", opts->prometheus_auth_file,
                     "With --prometheus: a file with one line, \"bearer TOKEN\" or \"basic "
                     "USER:PASSWORD\", for an engine behind authentication");
  report
      ->add_option("--price-per-gpu-hour", opts->price_per_gpu_hour,
                   "With --prometheus: the price for the cost column (vigil-fleet has its own)")
      ->check(CLI::NonNegativeNumber);
  report->callback([&ctx, opts] { RunCommand(ctx, [&] { return RunReport(ctx, *opts); }); });

  CLI::App* jobs = fleet->add_subcommand(
      "jobs", "Jobs by GPU-hours, with MFU, model FLOP/s and step time (libvigil_client)");
  jobs->add_option("--since", opts->since, "Window start: a duration back (7d) or unix seconds")
      ->capture_default_str();
  jobs->add_option("--limit", opts->limit, "At most this many jobs")->capture_default_str();
  jobs->add_option("--format", opts->format, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  AddFleetOptions(jobs, opts.get());
  jobs->callback([&ctx, opts] { RunCommand(ctx, [&] { return RunJobs(ctx, *opts); }); });

  CLI::App* hosts = fleet->add_subcommand("hosts", "The hosts whose vigild reports to vigil-fleet");
  hosts->add_option("--format", opts->format, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  AddFleetOptions(hosts, opts.get());
  hosts->callback([&ctx, opts] { RunCommand(ctx, [&] { return RunHosts(ctx, *opts); }); });

  CLI::App* job = fleet->add_subcommand("job", "One job over its whole life");
  job->add_option("job_id", opts->job_id, "Job id")->required();
  job->add_option("--format", opts->format, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  AddFleetOptions(job, opts.get());
  job->callback([&ctx, opts] { RunCommand(ctx, [&] { return RunJob(ctx, *opts); }); });

  AddFleetProfileCommands(fleet, ctx);  // `vigil fleet profile` and `profiles`.
}

}  // namespace vigil
