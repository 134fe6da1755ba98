// SPDX-License-Identifier: Apache-2.0
#include "cli/fleet_render.h"

#include <cctype>
#include <vector>

#include <fmt/format.h>

#include "base/strings.h"
#include "cli/format.h"

namespace vigil {
namespace {

using nlohmann::json;

std::string Fixed(const json& row, const char* key, double scale = 1) {
  const json& v = row.contains(key) ? row[key] : json();
  return fmt::format("{:.2f}", (v.is_number() ? v.get<double>() : 0.0) * scale);
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool HasEfficiency(const json& reply) {
  for (const json& row : reply.value("rows", json::array())) {
    if (row.contains("mfu_ratio")) return true;
  }
  return false;
}

// MFU as a percentage, model FLOP/s in TFLOP/s, step time in seconds, device-seconds per GB of
// input (the topline metric, from vigil_job_device_seconds_per_input_byte); "-" when unknown.
std::vector<std::string> EfficiencyCells(const json& row) {
  auto num = [&](const char* key) -> const json* {
    return row.contains(key) && row[key].is_number() ? &row[key] : nullptr;
  };
  const json* mfu = num("mfu_ratio");
  const json* flops = num("model_flops_per_second");
  const json* step = num("step_seconds");
  const json* dspib = num("device_seconds_per_input_byte");
  return {mfu ? FormatPercent(mfu->get<double>()) : "-",
          flops ? fmt::format("{:.2f}", flops->get<double>() / 1e12) : "-",
          step ? fmt::format("{:.3f}", step->get<double>()) : "-",
          dspib ? fmt::format("{:.4g}", dspib->get<double>() * 1e9) : "-"};
}

std::string CsvCell(const json& v) {
  if (v.is_null()) return "";
  if (v.is_number()) return fmt::format("{}", v.get<double>());
  std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::string RenderAttributionTable(const json& reply) {
  const bool bucketed = reply.value("bucket_s", 0) > 0;
  const bool efficiency = HasEfficiency(reply);
  std::vector<std::string> columns = {Upper(reply.value("by", "key")),
                                      "GPU-HOURS",
                                      "BUSY",
                                      "HELD-IDLE",
                                      "IDLE",
                                      "ENERGY-KWH",
                                      "COST"};
  if (efficiency) columns.insert(columns.end(), {"MFU", "TFLOP/S", "STEP-S", "DEV-S/GB"});
  if (bucketed) columns.insert(columns.begin(), "BUCKET");
  TextTable table(columns);
  for (size_t i = bucketed ? 2 : 1; i < columns.size(); ++i) table.AlignRight(i);
  auto add = [&](const json& row, const std::string& key, const std::string& bucket) {
    std::vector<std::string> cells = {key,
                                      Fixed(row, "gpu_hours"),
                                      Fixed(row, "busy_gpu_hours"),
                                      Fixed(row, "held_idle_gpu_hours"),
                                      Fixed(row, "idle_gpu_hours"),
                                      Fixed(row, "energy_joules", 1 / 3.6e6),
                                      Fixed(row, "cost")};
    if (efficiency) {
      for (std::string& c : EfficiencyCells(row)) cells.push_back(std::move(c));
    }
    if (bucketed) cells.insert(cells.begin(), bucket);
    table.AddRow(std::move(cells));
  };
  for (const json& row : reply.value("rows", json::array())) {
    add(row, row.value("key", ""), row.value("bucket_start", ""));
  }
  add(reply.value("totals", json::object()), "TOTAL", "");
  std::string out = fmt::format(
      "GPU-hours by {} from {} to {}{}\n", reply.value("by", ""), reply.value("since", ""),
      reply.value("until", ""),
      reply.contains("source") ? " (" + reply.value("source", "") + ")" : std::string());
  out += table.Render();
  if (reply.value("rows", json::array()).empty()) {
    out +=
        "note: no GPU-hours in this window: no host reported GPU samples in it (`vigil fleet "
        "hosts` lists the hosts that report); try a longer --since\n";
  }
  const json edges = reply.value("whole_hour_edges", json::array());
  if (edges.is_array() && !edges.empty()) {
    std::vector<std::string> names;
    for (const json& e : edges) names.push_back(e.is_string() ? e.get<std::string>() : "");
    out += "note: the minute rows of this window's " + Join(names, " and ") +
           " edge are past the ledger's retention: counted to the whole hour (asked " +
           reply.value("asked_since", "") + " to " + reply.value("asked_until", "") + ")\n";
  }
  for (const json& note : reply.value("notes", json::array())) {
    if (note.is_string()) out += "note: " + note.get<std::string>() + "\n";
  }
  return out;
}

std::string RenderAttributionCsv(const json& reply) {
  static const char* kFields[] = {"gpu_hours",
                                  "allocated_gpu_hours",
                                  "busy_gpu_hours",
                                  "held_idle_gpu_hours",
                                  "idle_gpu_hours",
                                  "energy_joules",
                                  "cost"};
  static const char* kEfficiency[] = {"mfu_ratio", "model_flops_per_second", "step_seconds",
                                      "device_seconds_per_input_byte"};
  const bool bucketed = reply.value("bucket_s", 0) > 0;
  const bool efficiency = HasEfficiency(reply);
  std::string out = reply.value("by", "key");
  if (bucketed) out += ",bucket_start";
  for (const char* f : kFields) out += std::string(",") + f;
  if (efficiency) {
    for (const char* f : kEfficiency) out += std::string(",") + f;
  }
  out += "\n";
  for (const json& row : reply.value("rows", json::array())) {
    out += CsvCell(row.value("key", json("")));
    if (bucketed) out += "," + row.value("bucket_start", "");
    for (const char* f : kFields) out += "," + fmt::format("{}", row.value(f, 0.0));
    if (efficiency) {
      for (const char* f : kEfficiency) out += "," + CsvCell(row.value(f, json()));
    }
    out += "\n";
  }
  return out;
}

// Why a listing is empty when no host has reported at all.
constexpr const char* kNoHostsYet =
    "no host has reported to this vigil-fleet yet: run vigild with --fleet-url URL (fleet_url "
    "in its config file) on each GPU host, then check `vigil status` there for the fleet sink";

std::string RenderHostsTable(const json& reply) {
  const json hosts = reply.value("hosts", json::array());
  if (hosts.empty()) return std::string("No hosts: ") + kNoHostsYet + ".\n";
  TextTable table({"HOST", "GPUS", "HEALTH", "LAST-SEEN", "AGO-S", "VIGILD"});
  table.AlignRight(1);
  table.AlignRight(4);
  for (const json& h : hosts) {
    table.AddRow({h.value("host", ""), fmt::format("{}", h.value("gpu_count", 0)),
                  h.value("health", ""), h.value("last_seen", ""),
                  fmt::format("{:.0f}", h.value("last_seen_ago_s", 0.0)),
                  h.value("daemon_version", "")});
  }
  return table.Render();
}

std::string RenderJobsTable(const json& reply, const json& hosts) {
  if (reply.value("jobs", json::array()).empty()) {
    const std::string window =
        fmt::format("from {} to {}", reply.value("since", ""), reply.value("until", ""));
    if (!hosts.is_object()) return "No jobs " + window + ".\n";
    const size_t n = hosts.value("hosts", json::array()).size();
    if (n == 0) return "No jobs " + window + ": " + kNoHostsYet + ".\n";
    return fmt::format(
        "No jobs {}: {} host(s) report, but none ran a GPU process with a job id in this window "
        "(job ids come from $VIGIL_JOB_ID, $SLURM_JOB_ID and the other sources of "
        "docs/attribution.md); try a longer "
        "--since, or `vigil fleet hosts`.\n",
        window, n);
  }
  TextTable table({"JOB", "USER", "TEAM", "MODEL", "FRAMEWORK", "GPUS", "GPU-HOURS", "BUSY",
                   "HELD-IDLE", "MFU", "TFLOP/S", "STEP-S", "DEV-S/GB"});
  for (size_t i = 5; i < 13; ++i) table.AlignRight(i);
  for (const json& j : reply.value("jobs", json::array())) {
    std::vector<std::string> cells = {
        j.value("job_id", ""), j.value("user", ""),        j.value("team", ""),
        j.value("model", ""),  j.value("framework", ""),   fmt::format("{}", j.value("gpus", 0)),
        Fixed(j, "gpu_hours"), Fixed(j, "busy_gpu_hours"), Fixed(j, "held_idle_gpu_hours")};
    for (std::string& c : EfficiencyCells(j)) cells.push_back(std::move(c));
    table.AddRow(std::move(cells));
  }
  return fmt::format("Jobs from {} to {}\n", reply.value("since", ""), reply.value("until", "")) +
         table.Render();
}

std::string RenderJob(const json& job) {
  const std::vector<std::string> eff = EfficiencyCells(job);
  std::string out = fmt::format("job {}\n", job.value("job_id", ""));
  for (const json& id : job.value("identities", json::array())) {
    out += fmt::format("  user {}  team {}  model {}  framework {}  rule {}\n",
                       id.value("user", ""), id.value("team", ""), id.value("model", ""),
                       id.value("framework", ""), id.value("rule", ""));
  }
  out += fmt::format("first seen       {}\nlast seen        {}\n", job.value("first_seen", ""),
                     job.value("last_seen", ""));
  out += fmt::format("GPUs             {}\n", job.value("gpus", json::array()).size());
  out += fmt::format("GPU-hours        {} (busy {}, held-idle {})\n", Fixed(job, "gpu_hours"),
                     Fixed(job, "busy_gpu_hours"), Fixed(job, "held_idle_gpu_hours"));
  out += fmt::format("energy           {} kWh\n", Fixed(job, "energy_joules", 1 / 3.6e6));
  out += fmt::format("cost             {}\n", Fixed(job, "cost"));
  out += fmt::format("MFU              {}\n", eff[0]);
  out += fmt::format("model TFLOP/s    {}\n", eff[1]);
  out += fmt::format("step seconds     {}\n", eff[2]);
  out += fmt::format("device-s per GB  {}\n", eff[3]);
  return out;
}

}  // namespace vigil
