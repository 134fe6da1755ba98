// SPDX-License-Identifier: Apache-2.0
// `vigil fleet report --by team|model|user|job|framework|host|gpu_model --since 7d
//  [--until T] [--bucket 1d] [--format table|csv|json] [--fleet URL]`: GPU-hours (busy /
// held-but-idle / idle), energy and cost from vigil-fleet's /api/v1/attribution, the same numbers
// the service's API and dashboard show. Talks to vigil-fleet only over its HTTP API.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <httplib.h>

#include "base/file_util.h"
#include "base/strings.h"
#include "cli/cli_context.h"
#include "cli/format.h"

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
};

std::string DefaultFleetUrl() {
  const char* env = std::getenv("VIGIL_FLEET_URL");
  return env && *env ? env : "http://127.0.0.1:9480";
}

// The token is the last field of the first non-comment line ("TOKEN" or "HOST TOKEN").
StatusOr<std::string> ReadToken(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, 1 << 16));
  std::string_view rest = text, line;
  while (NextLine(&rest, &line)) {
    line = Trim(line.substr(0, line.find('#')));
    if (!line.empty()) return std::string(SplitWhitespace(line).back());
  }
  return InvalidArgumentError("token file " + path + ": no token");
}

std::string Fixed(const nlohmann::json& row, const char* key, double scale = 1) {
  return fmt::format("{:.2f}", row.value(key, 0.0) * scale);
}

std::string RenderTable(const nlohmann::json& reply, bool bucketed) {
  std::string header = reply.value("by", "key");
  for (char& c : header) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::vector<std::string> columns = {header, "GPU-HOURS",  "BUSY", "HELD-IDLE",
                                      "IDLE", "ENERGY-KWH", "COST"};
  if (bucketed) columns.insert(columns.begin(), "BUCKET");
  TextTable table(columns);
  for (size_t i = bucketed ? 2 : 1; i < columns.size(); ++i) table.AlignRight(i);
  auto add = [&](const nlohmann::json& row, const std::string& key, const std::string& bucket) {
    std::vector<std::string> cells = {key,
                                      Fixed(row, "gpu_hours"),
                                      Fixed(row, "busy_gpu_hours"),
                                      Fixed(row, "held_idle_gpu_hours"),
                                      Fixed(row, "idle_gpu_hours"),
                                      Fixed(row, "energy_joules", 1 / 3.6e6),
                                      Fixed(row, "cost")};
    if (bucketed) cells.insert(cells.begin(), bucket);
    table.AddRow(std::move(cells));
  };
  for (const nlohmann::json& row : reply.value("rows", nlohmann::json::array())) {
    add(row, row.value("key", ""), row.value("bucket_start", ""));
  }
  add(reply.value("totals", nlohmann::json::object()), "TOTAL", "");
  return fmt::format("GPU-hours by {} from {} to {}\n", reply.value("by", ""),
                     reply.value("since", ""), reply.value("until", "")) +
         table.Render();
}

std::string RenderCsv(const nlohmann::json& reply, bool bucketed) {
  static const char* kFields[] = {"gpu_hours",
                                  "allocated_gpu_hours",
                                  "busy_gpu_hours",
                                  "held_idle_gpu_hours",
                                  "idle_gpu_hours",
                                  "energy_joules",
                                  "cost"};
  std::string out = reply.value("by", "key");
  if (bucketed) out += ",bucket_start";
  for (const char* f : kFields) out += std::string(",") + f;
  out += "\n";
  for (const nlohmann::json& row : reply.value("rows", nlohmann::json::array())) {
    std::string key = row.value("key", "");
    if (key.find_first_of(",\"\n") != std::string::npos) {
      std::string quoted = "\"";
      for (char c : key) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
      key = quoted + "\"";
    }
    out += key;
    if (bucketed) out += "," + row.value("bucket_start", "");
    for (const char* f : kFields) out += "," + fmt::format("{}", row.value(f, 0.0));
    out += "\n";
  }
  return out;
}

int RunReport(CliContext& ctx, const ReportOptions& o) {
  const std::string url = o.fleet.empty() ? DefaultFleetUrl() : o.fleet;
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    std::fprintf(stderr, "vigil: fleet report: --fleet must be http[s]://HOST:PORT, got %s\n",
                 url.c_str());
    return kExitUsage;
  }
  httplib::Client client(url);
  const auto timeout = std::chrono::nanoseconds(ctx.TimeoutNs());
  client.set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  client.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  httplib::Headers headers;
  if (!o.token_file.empty()) {
    StatusOr<std::string> token = ReadToken(o.token_file);
    if (!token.ok()) return ctx.Fail(token.status(), "fleet report");
    headers.emplace("Authorization", "Bearer " + *token);
  }
  httplib::Params params = {{"by", o.by}, {"since", o.since}};
  if (!o.until.empty()) params.emplace("until", o.until);
  if (!o.bucket.empty()) params.emplace("bucket", o.bucket);
  httplib::Result res = client.Get("/api/v1/attribution", params, headers);
  if (!res) {
    std::fprintf(stderr, "vigil: fleet report: cannot reach vigil-fleet at %s: %s\n", url.c_str(),
                 httplib::to_string(res.error()).c_str());
    return kExitUnreachable;
  }
  const nlohmann::json reply = nlohmann::json::parse(res->body, nullptr, false);
  if (res->status != 200 || reply.is_discarded()) {
    const std::string why = !reply.is_discarded() && reply.contains("error")
                                ? reply["error"].get<std::string>()
                                : SanitizeForLog(res->body);
    std::fprintf(stderr, "vigil: fleet report: HTTP %d: %s\n", res->status, why.c_str());
    return res->status == 400 ? kExitUsage : kExitFailure;
  }
  const bool bucketed = reply.value("bucket_s", 0) > 0;
  std::string out = o.format == "json"  ? reply.dump(2) + "\n"
                    : o.format == "csv" ? RenderCsv(reply, bucketed)
                                        : RenderTable(reply, bucketed);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
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
  report->add_option("--fleet", opts->fleet,
                     "vigil-fleet URL (default $VIGIL_FLEET_URL or http://127.0.0.1:9480)");
  report->add_option("--fleet-token-file", opts->token_file, "File holding a vigil-fleet token");
  report->callback([&ctx, opts] { RunCommand(ctx, [&] { return RunReport(ctx, *opts); }); });
}

}  // namespace vigil
