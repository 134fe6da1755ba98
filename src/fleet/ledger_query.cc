// SPDX-License-Identifier: Apache-2.0
#include "fleet/ledger_query.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <vector>

#include "base/time_util.h"
#include "fleet/ledger_window.h"
#include "metrics/gpu_hours_row.h"

namespace vigil {
namespace {

using nlohmann::json;

constexpr double kHour = 3600.0;

// GPU-seconds and joules of one (bucket, key): they add up across rollup and minute rows.
struct Sums {
  double wall = 0, alloc = 0, busy = 0, held = 0, energy = 0;
};
using Cells = std::map<std::pair<int64_t, std::string>, Sums>;

// A dimension's key column in the rollup query and in the minute query.
struct Column {
  std::string_view hour, minute;
};

StatusOr<Column> DimensionColumn(std::string_view by) {
  static const std::map<std::string_view, Column> kColumns = {
      {"team", {"j.team", "j.team"}},
      {"model", {"j.model", "j.model"}},
      {"user", {"j.user", "j.user"}},
      {"job", {"j.job_id", "j.job_id"}},
      {"framework", {"j.framework", "j.framework"}},
      {"rule", {"j.rule", "j.rule"}},
      {"host", {"s.name", "s.name"}},
      {"gpu_model", {"h.gpu_model", "g.gpu_model"}}};
  auto it = kColumns.find(by);
  if (it == kColumns.end()) {
    return InvalidArgumentError("by: unknown dimension \"" + std::string(by) +
                                "\" (team, model, user, job, framework, rule, host, gpu_model)");
  }
  return it->second;
}

// Adds the rows (bucket, key, wall, alloc, busy, held, energy) of `hour_sql` (the plan's rollup
// hours in its WHERE already) and of `minute_sql` over each of the plan's minute ranges (bound
// as ?1, ?2) to `cells`.
Status Collect(Db& db, const WindowPlan& plan, const std::string& hour_sql,
               const std::string& minute_sql, Cells* cells) {
  auto add = [cells](Stmt& st) -> Status {
    while (true) {
      VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) return OkStatus();
      Sums& c = (*cells)[{st.Int(0), st.Text(1)}];
      c.wall += st.Real(2);
      c.alloc += st.Real(3);
      c.busy += st.Real(4);
      c.held += st.Real(5);
      c.energy += st.Real(6);
    }
  };
  if (plan.hours_from < plan.hours_to) {
    VIGIL_ASSIGN_OR_RETURN(Stmt hours, db.Prepare(hour_sql));
    VIGIL_RETURN_IF_ERROR(add(hours));
  }
  if (plan.minute_ranges.empty()) return OkStatus();
  VIGIL_ASSIGN_OR_RETURN(Stmt minutes, db.Prepare(minute_sql));
  for (const auto& [from, to] : plan.minute_ranges) {
    minutes.Reset();
    minutes.Bind(1, from).Bind(2, to);
    VIGIL_RETURN_IF_ERROR(add(minutes));
  }
  return OkStatus();
}

StatusOr<WindowPlan> Plan(Db& db, int64_t since_ns, int64_t until_ns, int64_t bucket_s) {
  VIGIL_ASSIGN_OR_RETURN(int64_t cut, ReadMinuteCut(db));
  return PlanWindow(since_ns, until_ns, bucket_s, cut);
}

void AddTotals(json* out, double price) {
  double wall = 0, alloc = 0, busy = 0, held = 0, energy = 0;
  for (const json& r : (*out)["rows"]) {
    wall += r["gpu_hours"].get<double>();
    alloc += r["allocated_gpu_hours"].get<double>();
    busy += r["busy_gpu_hours"].get<double>();
    held += r["held_idle_gpu_hours"].get<double>();
    energy += r["energy_joules"].get<double>();
  }
  json t =
      GpuHoursRow("total", wall * kHour, alloc * kHour, busy * kHour, held * kHour, energy, price);
  t.erase("key");
  (*out)["totals"] = t;
}

void MergeInto(json* target, const json& fields) {
  for (const auto& [k, v] : fields.items()) (*target)[k] = v;
}

// Columns: job_key, job_id, user, team, model, framework, rule, first, last, gpus.
constexpr const char* kJobInfo =
    "SELECT j.job_key, j.job_id, j.user, j.team, j.model, j.framework, j.rule, j.first_seen_ns,"
    " j.last_seen_ns, (SELECT count(*) FROM job_gpus g WHERE g.job_key=j.job_key) FROM jobs j"
    " WHERE j.job_key=?1";

json JobJson(Stmt& st, const Sums& c, double price) {
  return json{{"job_id", st.Text(1)},
              {"user", st.Text(2)},
              {"team", st.Text(3)},
              {"model", st.Text(4)},
              {"framework", st.Text(5)},
              {"rule", st.Text(6)},
              {"first_seen", FormatTimestamp(st.Int(7))},
              {"last_seen", FormatTimestamp(st.Int(8))},
              {"duration_s", static_cast<double>(st.Int(8) - st.Int(7)) / 1e9},
              {"gpus", st.Int(9)},
              {"gpu_hours", c.alloc / kHour},
              {"busy_gpu_hours", c.busy / kHour},
              {"held_idle_gpu_hours", c.held / kHour},
              {"busy_ratio", c.alloc > 0 ? c.busy / c.alloc : 0.0},
              {"energy_joules", c.energy},
              {"cost", c.alloc / kHour * price}};
}

// Jobs with time in the window, largest `order` (allocated or held-idle seconds) first.
StatusOr<json> JobList(Db& db, double Sums::*order, int64_t since_ns, int64_t until_ns,
                       double price, int64_t limit) {
  VIGIL_ASSIGN_OR_RETURN(WindowPlan plan, Plan(db, since_ns, until_ns, 0));
  Cells cells;
  VIGIL_RETURN_IF_ERROR(Collect(
      db, plan,
      "SELECT 0, h.job_key, sum(h.alloc_s), sum(h.alloc_s), sum(h.busy_s), sum(h.held_idle_s),"
      " sum(h.energy_j) FROM job_hour h WHERE " +
          plan.HourFilter("h.hour_s") + " GROUP BY h.job_key",
      "SELECT 0, m.job_key, sum(m.alloc_s), sum(m.alloc_s), sum(m.busy_s), sum(m.held_idle_s),"
      " sum(m.energy_j) FROM ledger_minute m WHERE m.job_key<>0 AND m.minute_s>=?1 AND"
      " m.minute_s<?2 GROUP BY m.job_key",
      &cells));
  std::vector<std::pair<int64_t, Sums>> ranked;
  for (const auto& [key, c] : cells) ranked.emplace_back(std::stoll(key.second), c);
  std::sort(ranked.begin(), ranked.end(), [order](const auto& a, const auto& b) {
    if (a.second.*order != b.second.*order) return a.second.*order > b.second.*order;
    return a.first < b.first;
  });
  if (limit >= 0 && ranked.size() > static_cast<size_t>(limit)) ranked.resize(limit);
  VIGIL_ASSIGN_OR_RETURN(Stmt info, db.Prepare(kJobInfo));
  json jobs = json::array();
  for (const auto& [job_key, c] : ranked) {
    info.Reset();
    info.Bind(1, job_key);
    VIGIL_ASSIGN_OR_RETURN(bool row, info.Step());
    if (!row) continue;
    json job = JobJson(info, c, price);
    const std::string job_id = info.Text(1);
    VIGIL_ASSIGN_OR_RETURN(json eff, QueryJobEfficiency(db, job_id, plan.since_s, plan.until_s));
    MergeInto(&job, eff);
    jobs.push_back(std::move(job));
  }
  json out = plan.WindowJson();
  out["jobs"] = std::move(jobs);
  return out;
}

}  // namespace

StatusOr<json> QueryAttribution(Db& db, const AttributionQuery& q) {
  VIGIL_ASSIGN_OR_RETURN(Column column, DimensionColumn(q.by));
  if (q.bucket_s < 0 || q.bucket_s % 3600 != 0) {
    return InvalidArgumentError("bucket: must be a whole number of hours");
  }
  VIGIL_ASSIGN_OR_RETURN(WindowPlan plan, Plan(db, q.since_ns, q.until_ns, q.bucket_s));
  const std::string hb = plan.BucketOf("h.hour_s") + " AS b, ";
  const std::string mb = plan.BucketOf("m.minute_s") + " AS b, ";
  const std::string hours = " WHERE " + plan.HourFilter("h.hour_s") + " GROUP BY b, k";
  const std::string minutes = " m.minute_s>=?1 AND m.minute_s<?2 GROUP BY b, k";
  // A job's row: its allocated time is its wall time.
  auto job_sums = [](const std::string& t) {
    return " AS k, sum(" + t + ".alloc_s), sum(" + t + ".alloc_s), sum(" + t + ".busy_s), sum(" +
           t + ".held_idle_s), sum(" + t + ".energy_j)";
  };
  const bool by_host = q.by == "host" || q.by == "gpu_model";
  Cells cells;
  if (by_host) {
    VIGIL_RETURN_IF_ERROR(
        Collect(db, plan,
                "SELECT " + hb + std::string(column.hour) +
                    " AS k, sum(h.wall_s), sum(h.alloc_s), sum(h.busy_s), sum(h.held_idle_s),"
                    " sum(h.energy_j) FROM host_hour h JOIN hosts s ON s.host_id=h.host_id" +
                    hours,
                "SELECT " + mb + std::string(column.minute) + " AS k, " + kMinuteGpuWall + ", " +
                    kMinuteJobAlloc + ", " + kMinuteJobBusy + ", " + kMinuteJobHeld + ", " +
                    kMinuteGpuEnergy +
                    " FROM ledger_minute m JOIN gpus g ON g.gpu_id=m.gpu_id JOIN hosts s ON"
                    " s.host_id=g.host_id WHERE" +
                    minutes,
                &cells));
  } else {
    VIGIL_RETURN_IF_ERROR(Collect(
        db, plan,
        "SELECT " + hb + std::string(column.hour) + job_sums("h") +
            " FROM job_hour h JOIN jobs j ON j.job_key=h.job_key" + hours,
        "SELECT " + mb + std::string(column.minute) + job_sums("m") +
            " FROM ledger_minute m JOIN jobs j ON j.job_key=m.job_key WHERE m.job_key<>0 AND" +
            minutes,
        &cells));
    // GPU time no job held: the wall time of every GPU minus what jobs were allocated.
    Cells all;
    VIGIL_RETURN_IF_ERROR(Collect(
        db, plan,
        "SELECT " + hb + "'' AS k, sum(h.wall_s), sum(h.alloc_s), 0, 0, 0 FROM host_hour h" + hours,
        "SELECT " + mb + "'' AS k, " + kMinuteGpuWall + ", " + kMinuteJobAlloc +
            ", 0, 0, 0 FROM ledger_minute m WHERE" + minutes,
        &all));
    for (const auto& [key, c] : all) {
      const double idle_s = NonNegative(c.wall - c.alloc);
      if (idle_s > 0) cells[{key.first, kUnallocatedKey}] = Sums{.wall = idle_s};
    }
  }
  std::vector<std::pair<int64_t, json>> rows;
  for (const auto& [key, c] : cells) {
    rows.emplace_back(key.first, GpuHoursRow(key.second, c.wall, c.alloc, c.busy, c.held, c.energy,
                                             q.price_per_gpu_hour));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return a.second["gpu_hours"].template get<double>() >
           b.second["gpu_hours"].template get<double>();
  });
  json out = plan.WindowJson();
  MergeInto(&out, json{{"by", q.by},
                       {"bucket_s", q.bucket_s},
                       {"price_per_gpu_hour", q.price_per_gpu_hour},
                       {"rows", json::array()}});
  for (auto& [b, row] : rows) {
    if (q.bucket_s > 0) {
      row["bucket_start"] = FormatTimestamp(b * kNanosPerSecond);
      row["bucket_start_s"] = b;
    }
    if (q.by == "job" && row["key"] != kUnallocatedKey) {
      const int64_t from = q.bucket_s > 0 ? b : plan.since_s;
      const int64_t to = q.bucket_s > 0 ? std::min(b + q.bucket_s, plan.until_s) : plan.until_s;
      VIGIL_ASSIGN_OR_RETURN(json eff,
                             QueryJobEfficiency(db, row["key"].get<std::string>(), from, to));
      MergeInto(&row, eff);
    }
    out["rows"].push_back(std::move(row));
  }
  AddTotals(&out, q.price_per_gpu_hour);
  return out;
}

StatusOr<json> QueryJobEfficiency(Db& db, const std::string& job_id, int64_t from_s, int64_t to_s) {
  VIGIL_ASSIGN_OR_RETURN(Stmt st,
                         db.Prepare("SELECT sum(mfu_sum), sum(mfu_n), sum(flops_sum), sum(flops_n),"
                                    " sum(step_s_sum), sum(step_n), sum(dspib_sum), sum(dspib_n)"
                                    " FROM job_minute_metrics"
                                    " WHERE job_id=?1 AND minute_s>=?2 AND minute_s<?3"));
  st.Bind(1, job_id).Bind(2, from_s).Bind(3, to_s);
  VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
  auto mean = [&](int sum, int n) {
    return row && !st.IsNull(n) && st.Int(n) > 0
               ? json(st.Real(sum) / static_cast<double>(st.Int(n)))
               : json(nullptr);
  };
  json out{{"mfu_ratio", mean(0, 1)},
           {"model_flops_per_step", mean(2, 3)},
           {"step_seconds", mean(4, 5)},
           {"model_flops_per_second", nullptr},
           {"device_seconds_per_input_byte", mean(6, 7)}};
  if (out["model_flops_per_step"].is_number() && out["step_seconds"].is_number() &&
      out["step_seconds"].get<double>() > 0) {
    out["model_flops_per_second"] =
        out["model_flops_per_step"].get<double>() / out["step_seconds"].get<double>();
  }
  return out;
}

StatusOr<json> QueryJobs(Db& db, int64_t since_ns, int64_t until_ns, double price, int64_t limit) {
  return JobList(db, &Sums::alloc, since_ns, until_ns, price, limit);
}

StatusOr<JobAllocation> QueryJobAllocation(Db& db, int64_t since_ns, int64_t until_ns) {
  VIGIL_ASSIGN_OR_RETURN(WindowPlan plan, Plan(db, since_ns, until_ns, 0));
  Cells cells;
  VIGIL_RETURN_IF_ERROR(
      Collect(db, plan,
              "SELECT 0, j.job_id, 0, sum(h.alloc_s), 0, 0, 0 FROM job_hour h JOIN jobs j ON"
              " j.job_key=h.job_key WHERE " +
                  plan.HourFilter("h.hour_s") + " GROUP BY j.job_id",
              "SELECT 0, j.job_id, 0, sum(m.alloc_s), 0, 0, 0 FROM ledger_minute m JOIN jobs j ON"
              " j.job_key=m.job_key WHERE m.job_key<>0 AND m.minute_s>=?1 AND m.minute_s<?2"
              " GROUP BY j.job_id",
              &cells));
  JobAllocation out{.window = plan.WindowJson(), .alloc_s = {}};
  for (const auto& [key, c] : cells) out.alloc_s[key.second] += c.alloc;
  return out;
}

StatusOr<json> QueryTopWasters(Db& db, int64_t since_ns, int64_t until_ns, double price,
                               int64_t limit) {
  VIGIL_ASSIGN_OR_RETURN(json out, JobList(db, &Sums::held, since_ns, until_ns, price, limit));
  for (json& j : out["jobs"]) {
    j["held_idle_cost"] = j["held_idle_gpu_hours"].get<double>() * price;
  }
  return out;
}

}  // namespace vigil
