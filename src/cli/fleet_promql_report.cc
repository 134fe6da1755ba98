// SPDX-License-Identifier: Apache-2.0
#include "cli/fleet_promql_report.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "base/strings.h"
#include "base/time_util.h"
#include "metrics/gpu_hours_row.h"

namespace vigil {
namespace {

using nlohmann::json;

constexpr double kHour = 3600.0;
constexpr const char* kUnallocated = "(unallocated)";  // As vigil-fleet names it.

bool JobDimension(std::string_view by) { return by != "host" && by != "gpu_model"; }

std::string Range(int64_t s) { return fmt::format("{}s", s); }

// sum by (label) (increase(metric[range])); for gpu_model the counters (which carry no GPU
// model) are joined to vigil_gpu_up's gpu_model on (host, gpu_uuid).
std::string SumIncrease(std::string_view metric, const std::string& label, int64_t range_s) {
  const std::string inc = fmt::format("increase({}[{}])", metric, Range(range_s));
  if (label != "gpu_model" || metric == "vigil_gpu_energy_joules_total") {
    return fmt::format("sum by ({}) ({})", label, inc);
  }
  return fmt::format(
      "sum by (gpu_model) ({} * on (host, gpu_uuid) group_left (gpu_model) "
      "group by (host, gpu_uuid, gpu_model) (last_over_time(vigil_gpu_up[{}])))",
      inc, Range(range_s));
}

// Per GPU: seconds vigil_gpu_up was present minus seconds allocated (a GPU with no allocation
// series counts whole), clamped at 0, summed by `label` ("" = everything).
std::string IdleSeconds(const std::string& label, int64_t range_s) {
  const int64_t res = PromqlIdleResolution(range_s);
  const std::string present = fmt::format(
      "sum_over_time((group by (host, gpu_uuid, gpu_model) (vigil_gpu_up))[{}:{}]) * {}",
      Range(range_s), Range(res), res);
  const std::string allocated = fmt::format(
      "(sum by (host, gpu_uuid) (increase(vigil_gpu_allocated_seconds_total[{0}])) or "
      "group by (host, gpu_uuid) (last_over_time(vigil_gpu_up[{0}])) * 0)",
      Range(range_s));
  const std::string per_gpu =
      fmt::format("clamp_min({} - on (host, gpu_uuid) group_left () {}, 0)", present, allocated);
  return label.empty() ? fmt::format("sum ({})", per_gpu)
                       : fmt::format("sum by ({}) ({})", label, per_gpu);
}

std::string Mean(std::string_view metric, int64_t range_s) {
  return fmt::format("avg by (job_id) (avg_over_time({}[{}]))", metric, Range(range_s));
}

struct Cells {
  double alloc = 0, busy = 0, held = 0, energy = 0, idle = 0;
  std::optional<double> mfu, flops_per_step, step_s, dspib;
};

json Optional(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

StatusOr<std::string> PromqlGroupLabel(std::string_view by) {
  if (by == "job") return std::string("job_id");
  for (const char* d : {"team", "model", "user", "framework", "host", "gpu_model"}) {
    if (by == d) return std::string(d);
  }
  return InvalidArgumentError("by: unknown dimension \"" + std::string(by) +
                              "\" (team, model, user, job, framework, host, gpu_model)");
}

int64_t PromqlIdleResolution(int64_t range_s) {
  return std::max<int64_t>(15, (range_s + 4999) / 5000);
}

StatusOr<std::vector<PromqlQuery>> BuildPromqlQueries(std::string_view by, int64_t range_s) {
  VIGIL_ASSIGN_OR_RETURN(std::string label, PromqlGroupLabel(by));
  if (range_s <= 0) {
    return InvalidArgumentError("the window must be at least one second long");
  }
  const bool jobs = JobDimension(by);
  std::vector<PromqlQuery> q = {
      {PromqlColumn::kAllocatedS, SumIncrease("vigil_gpu_allocated_seconds_total", label, range_s)},
      {PromqlColumn::kBusyS, SumIncrease("vigil_gpu_busy_seconds_total", label, range_s)},
      {PromqlColumn::kHeldIdleS, SumIncrease("vigil_gpu_held_idle_seconds_total", label, range_s)},
      // Job dimensions show the energy attributed to jobs, hosts and models the device's.
      {PromqlColumn::kEnergyJ,
       SumIncrease(jobs ? "vigil_job_gpu_energy_joules_total" : "vigil_gpu_energy_joules_total",
                   label, range_s)},
      {PromqlColumn::kIdleS, IdleSeconds(jobs ? "" : label, range_s)}};
  if (by == "job") {
    q.push_back({PromqlColumn::kMfu, Mean("vigil_job_mfu_ratio", range_s)});
    q.push_back({PromqlColumn::kFlopsPerStep, Mean("vigil_job_model_flops", range_s)});
    q.push_back({PromqlColumn::kStepS, Mean("vigil_job_step_seconds", range_s)});
    q.push_back({PromqlColumn::kDeviceSecondsPerInputByte,
                 Mean("vigil_job_device_seconds_per_input_byte", range_s)});
  }
  return q;
}

StatusOr<std::vector<PromqlPoint>> ParsePromqlReply(std::string_view body,
                                                    const std::string& label) {
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return InvalidArgumentError("not a JSON object: " + SanitizeForLog(body));
  }
  if (doc.value("status", "") != "success") {
    return FailedPreconditionError(doc.value("errorType", "error") + ": " +
                                   doc.value("error", SanitizeForLog(body)));
  }
  const json& data = doc.contains("data") ? doc["data"] : json();
  const std::string type = data.is_object() ? data.value("resultType", "") : "";
  if (type != "vector" && type != "matrix" && type != "scalar") {
    return InvalidArgumentError("unexpected resultType \"" + type + "\"");
  }
  std::vector<PromqlPoint> out;
  auto add = [&](const std::string& key, const json& pair) -> Status {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_string()) {
      return InvalidArgumentError("malformed sample " + SanitizeForLog(pair.dump()));
    }
    const std::optional<double> v = ParseDouble(pair[1].get<std::string>());
    if (v && std::isfinite(*v)) {
      out.push_back({key, std::llround(pair[0].get<double>()), *v});
    }
    return OkStatus();
  };
  if (type == "scalar") {
    VIGIL_RETURN_IF_ERROR(add("", data["result"]));
    return out;
  }
  if (!data.contains("result") || !data["result"].is_array()) {
    return InvalidArgumentError("reply has no result array");
  }
  for (const json& series : data["result"]) {
    std::string key;
    if (series.contains("metric") && series["metric"].is_object()) {
      const json& m = series["metric"];
      if (m.contains(label) && m[label].is_string()) key = m[label].get<std::string>();
    }
    if (type == "vector") {
      VIGIL_RETURN_IF_ERROR(add(key, series.value("value", json())));
    } else {
      for (const json& pair : series.value("values", json::array())) {
        VIGIL_RETURN_IF_ERROR(add(key, pair));
      }
    }
  }
  return out;
}

json AssemblePromqlReport(
    const PromqlReportRequest& r,
    const std::vector<std::pair<PromqlColumn, std::vector<PromqlPoint>>>& results) {
  const bool jobs = JobDimension(r.by);
  std::map<std::pair<int64_t, std::string>, Cells> cells;
  for (const auto& [column, points] : results) {
    for (const PromqlPoint& p : points) {
      const int64_t bucket = r.bucket_s > 0 ? p.time_s - r.bucket_s : 0;
      const bool counts = column != PromqlColumn::kMfu && column != PromqlColumn::kFlopsPerStep &&
                          column != PromqlColumn::kStepS &&
                          column != PromqlColumn::kDeviceSecondsPerInputByte;
      const std::string key = column == PromqlColumn::kIdleS && jobs ? kUnallocated : p.key;
      if (!counts && !cells.count({bucket, key})) continue;  // Only jobs that held GPUs.
      Cells& c = cells[{bucket, key}];
      switch (column) {
        case PromqlColumn::kAllocatedS:
          c.alloc += p.value;
          break;
        case PromqlColumn::kBusyS:
          c.busy += p.value;
          break;
        case PromqlColumn::kHeldIdleS:
          c.held += p.value;
          break;
        case PromqlColumn::kEnergyJ:
          c.energy += p.value;
          break;
        case PromqlColumn::kIdleS:
          c.idle += p.value;
          break;
        case PromqlColumn::kMfu:
          c.mfu = p.value;
          break;
        case PromqlColumn::kFlopsPerStep:
          c.flops_per_step = p.value;
          break;
        case PromqlColumn::kStepS:
          c.step_s = p.value;
          break;
        case PromqlColumn::kDeviceSecondsPerInputByte:
          c.dspib = p.value;
          break;
      }
    }
  }
  std::vector<std::pair<int64_t, json>> rows;
  for (const auto& [k, c] : cells) {
    const auto& [bucket, key] = k;
    const double wall = jobs && key != kUnallocated ? c.alloc : c.alloc + c.idle;
    if (jobs && key == kUnallocated && NonNegative(c.idle) == 0) continue;
    json row = GpuHoursRow(key, wall, c.alloc, c.busy, c.held, c.energy, r.price_per_gpu_hour);
    if (r.by == "job" && key != kUnallocated) {
      row["mfu_ratio"] = Optional(c.mfu);
      row["model_flops_per_step"] = Optional(c.flops_per_step);
      row["step_seconds"] = Optional(c.step_s);
      row["device_seconds_per_input_byte"] = Optional(c.dspib);
      row["model_flops_per_second"] = c.flops_per_step && c.step_s && *c.step_s > 0
                                          ? json(*c.flops_per_step / *c.step_s)
                                          : json(nullptr);
    }
    rows.emplace_back(bucket, std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return a.second["gpu_hours"].template get<double>() >
           b.second["gpu_hours"].template get<double>();
  });
  json out{{"by", r.by},
           {"since", FormatTimestamp(r.since_s * kNanosPerSecond)},
           {"until", FormatTimestamp(r.until_s * kNanosPerSecond)},
           {"bucket_s", r.bucket_s},
           {"price_per_gpu_hour", r.price_per_gpu_hour},
           {"source", "prometheus"},
           {"rows", json::array()}};
  double gpu_h = 0, alloc_h = 0, busy_h = 0, held_h = 0, energy = 0;
  for (auto& [bucket, row] : rows) {
    if (r.bucket_s > 0) {
      row["bucket_start"] = FormatTimestamp(bucket * kNanosPerSecond);
      row["bucket_start_s"] = bucket;
    }
    gpu_h += row["gpu_hours"].get<double>();
    alloc_h += row["allocated_gpu_hours"].get<double>();
    busy_h += row["busy_gpu_hours"].get<double>();
    held_h += row["held_idle_gpu_hours"].get<double>();
    energy += row["energy_joules"].get<double>();
    out["rows"].push_back(std::move(row));
  }
  json totals = GpuHoursRow("total", gpu_h * kHour, alloc_h * kHour, busy_h * kHour, held_h * kHour,
                            energy, r.price_per_gpu_hour);
  totals.erase("key");
  out["totals"] = std::move(totals);
  const int64_t range = r.bucket_s > 0 ? r.bucket_s : r.until_s - r.since_s;
  json notes = json::array();
  notes.push_back(fmt::format(
      "idle_gpu_hours: seconds vigil_gpu_up was present, sampled every {}s, minus allocated "
      "seconds, per GPU (vigil-fleet's ledger counts exact report intervals)",
      PromqlIdleResolution(range)));
  notes.push_back(
      "increase() may extrapolate up to half a report interval at the ends of a series "
      "(Prometheus)");
  if (r.price_per_gpu_hour <= 0) {
    notes.push_back("cost: 0, no --price-per-gpu-hour given");
  }
  out["notes"] = std::move(notes);
  return out;
}

StatusOr<json> RunPromqlReport(const PromqlReportRequest& r, const PromqlFetch& fetch) {
  if (r.until_s <= r.since_s) {
    return InvalidArgumentError("--since must be before --until");
  }
  if (r.bucket_s < 0 || (r.bucket_s > 0 && r.bucket_s < 60)) {
    return InvalidArgumentError("--bucket must be at least 1m");
  }
  VIGIL_ASSIGN_OR_RETURN(std::string label, PromqlGroupLabel(r.by));
  const int64_t range = r.bucket_s > 0 ? r.bucket_s : r.until_s - r.since_s;
  VIGIL_ASSIGN_OR_RETURN(std::vector<PromqlQuery> queries, BuildPromqlQueries(r.by, range));
  std::vector<std::pair<PromqlColumn, std::vector<PromqlPoint>>> results;
  for (const PromqlQuery& q : queries) {
    // With buckets each step evaluates the bucket that ends there; buckets align to multiples of
    // bucket_s.
    const int64_t first =
        r.bucket_s > 0 ? r.since_s - ((r.since_s % r.bucket_s) + r.bucket_s) % r.bucket_s : 0;
    StatusOr<std::string> body =
        r.bucket_s > 0
            ? fetch("/api/v1/query_range",
                    {{"query", q.expr},
                     {"start", std::to_string(first + r.bucket_s)},
                     {"end", std::to_string(first + (r.until_s - first + r.bucket_s - 1) /
                                                        r.bucket_s * r.bucket_s)},
                     {"step", std::to_string(r.bucket_s)}})
            : fetch("/api/v1/query", {{"query", q.expr}, {"time", std::to_string(r.until_s)}});
    if (!body.ok()) return body.status().WithContext("query " + q.expr);
    StatusOr<std::vector<PromqlPoint>> points = ParsePromqlReply(
        *body, q.column == PromqlColumn::kIdleS && JobDimension(r.by) ? "" : label);
    if (!points.ok()) return points.status().WithContext("query " + q.expr);
    results.emplace_back(q.column, std::move(*points));
  }
  json out = AssemblePromqlReport(r, results);
  json exprs = json::array();
  for (const PromqlQuery& q : queries) exprs.push_back(q.expr);
  out["queries"] = std::move(exprs);
  return out;
}

}  // namespace vigil
