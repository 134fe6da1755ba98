// SPDX-License-Identifier: Apache-2.0
#include "fleet/ledger_query.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <vector>

#include "base/time_util.h"
#include "metrics/gpu_hours_row.h"

namespace vigil {
namespace {

using nlohmann::json;

constexpr double kHour = 3600.0;

struct Window {
  int64_t h0 = 0, h1 = 0;  // [h0, h1) in unix seconds, whole hours.
};

Window HourWindow(int64_t since_ns, int64_t until_ns) {
  const int64_t s = since_ns / 1000000000;
  const int64_t u = (until_ns + 999999999) / 1000000000;
  return {s - ((s % 3600) + 3600) % 3600, u + (3600 - ((u % 3600) + 3600) % 3600) % 3600};
}

StatusOr<std::string> JobColumn(std::string_view by) {
  static const std::map<std::string_view, std::string_view> kColumns = {
      {"team", "j.team"},  {"model", "j.model"},         {"user", "j.user"},
      {"job", "j.job_id"}, {"framework", "j.framework"}, {"rule", "j.rule"},
      {"host", "s.name"},  {"gpu_model", "h.gpu_model"}};
  auto it = kColumns.find(by);
  if (it == kColumns.end()) {
    return InvalidArgumentError("by: unknown dimension \"" + std::string(by) +
                                "\" (team, model, user, job, framework, rule, host, gpu_model)");
  }
  return std::string(it->second);
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

json JobJson(Stmt& st, double price) {
  // Columns: job_key, job_id, user, team, model, framework, rule, first, last, gpus,
  //          alloc, busy, held, energy.
  const double alloc = st.Real(10), busy = st.Real(11), held = st.Real(12);
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
              {"gpu_hours", alloc / kHour},
              {"busy_gpu_hours", busy / kHour},
              {"held_idle_gpu_hours", held / kHour},
              {"busy_ratio", alloc > 0 ? busy / alloc : 0.0},
              {"energy_joules", st.Real(13)},
              {"cost", alloc / kHour * price}};
}

constexpr const char* kJobSelect =
    "SELECT j.job_key, j.job_id, j.user, j.team, j.model, j.framework, j.rule, j.first_seen_ns,"
    " j.last_seen_ns, (SELECT count(*) FROM job_gpus g WHERE g.job_key=j.job_key),"
    " sum(h.alloc_s), sum(h.busy_s), sum(h.held_idle_s), sum(h.energy_j)"
    " FROM job_hour h JOIN jobs j ON j.job_key=h.job_key WHERE h.hour_s>=?1 AND h.hour_s<?2 ";

void MergeInto(json* target, const json& fields) {
  for (const auto& [k, v] : fields.items()) (*target)[k] = v;
}

StatusOr<json> JobList(Db& db, const std::string& order, int64_t since_ns, int64_t until_ns,
                       double price, int64_t limit) {
  const Window w = HourWindow(since_ns, until_ns);
  VIGIL_ASSIGN_OR_RETURN(
      Stmt st, db.Prepare(std::string(kJobSelect) + "GROUP BY j.job_key ORDER BY " + order +
                          " DESC LIMIT ?3"));
  st.Bind(1, w.h0).Bind(2, w.h1).Bind(3, limit);
  json jobs = json::array();
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    json job = JobJson(st, price);
    VIGIL_ASSIGN_OR_RETURN(json eff, QueryJobEfficiency(db, st.Text(1), w.h0, w.h1));
    MergeInto(&job, eff);
    jobs.push_back(std::move(job));
  }
  return json{{"since", FormatTimestamp(w.h0 * 1000000000)},
              {"until", FormatTimestamp(w.h1 * 1000000000)},
              {"jobs", jobs}};
}

}  // namespace

StatusOr<json> QueryAttribution(Db& db, const AttributionQuery& q) {
  VIGIL_ASSIGN_OR_RETURN(std::string column, JobColumn(q.by));
  if (q.bucket_s < 0 || q.bucket_s % 3600 != 0) {
    return InvalidArgumentError("bucket: must be a whole number of hours");
  }
  const Window w = HourWindow(q.since_ns, q.until_ns);
  const std::string bucket =
      q.bucket_s > 0 ? "(h.hour_s/" + std::to_string(q.bucket_s) + ")*" + std::to_string(q.bucket_s)
                     : "0";
  const bool by_host = q.by == "host" || q.by == "gpu_model";
  json out{{"by", q.by},
           {"since", FormatTimestamp(w.h0 * 1000000000)},
           {"until", FormatTimestamp(w.h1 * 1000000000)},
           {"bucket_s", q.bucket_s},
           {"price_per_gpu_hour", q.price_per_gpu_hour},
           {"rows", json::array()}};
  std::vector<std::pair<int64_t, json>> rows;
  if (by_host) {
    VIGIL_ASSIGN_OR_RETURN(
        Stmt st, db.Prepare("SELECT " + bucket + " AS b, " + column +
                            " AS k, sum(h.wall_s), sum(h.alloc_s), sum(h.busy_s),"
                            " sum(h.held_idle_s), sum(h.energy_j) FROM host_hour h JOIN hosts s"
                            " ON s.host_id=h.host_id WHERE h.hour_s>=?1 AND h.hour_s<?2"
                            " GROUP BY b, k"));
    st.Bind(1, w.h0).Bind(2, w.h1);
    while (true) {
      VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      rows.emplace_back(st.Int(0), GpuHoursRow(st.Text(1), st.Real(2), st.Real(3), st.Real(4),
                                               st.Real(5), st.Real(6), q.price_per_gpu_hour));
    }
  } else {
    VIGIL_ASSIGN_OR_RETURN(
        Stmt st, db.Prepare("SELECT " + bucket + " AS b, " + column +
                            " AS k, sum(h.alloc_s), sum(h.busy_s), sum(h.held_idle_s),"
                            " sum(h.energy_j) FROM job_hour h JOIN jobs j ON j.job_key=h.job_key"
                            " WHERE h.hour_s>=?1 AND h.hour_s<?2 GROUP BY b, k"));
    st.Bind(1, w.h0).Bind(2, w.h1);
    while (true) {
      VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      rows.emplace_back(st.Int(0), GpuHoursRow(st.Text(1), st.Real(2), st.Real(2), st.Real(3),
                                               st.Real(4), st.Real(5), q.price_per_gpu_hour));
    }
    // GPU time no job held: the wall time of every GPU minus what jobs were allocated.
    VIGIL_ASSIGN_OR_RETURN(
        Stmt idle, db.Prepare("SELECT " + bucket +
                              " AS b, sum(h.wall_s), sum(h.alloc_s), sum(h.energy_j) FROM"
                              " host_hour h WHERE h.hour_s>=?1 AND h.hour_s<?2 GROUP BY b"));
    idle.Bind(1, w.h0).Bind(2, w.h1);
    while (true) {
      VIGIL_ASSIGN_OR_RETURN(bool row, idle.Step());
      if (!row) break;
      const double idle_s = NonNegative(idle.Real(1) - idle.Real(2));
      if (idle_s > 0) {
        rows.emplace_back(idle.Int(0),
                          GpuHoursRow(kUnallocatedKey, idle_s, 0, 0, 0, 0, q.price_per_gpu_hour));
      }
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return a.second["gpu_hours"].template get<double>() >
           b.second["gpu_hours"].template get<double>();
  });
  for (auto& [b, row] : rows) {
    if (q.bucket_s > 0) {
      row["bucket_start"] = FormatTimestamp(b * 1000000000);
      row["bucket_start_s"] = b;
    }
    if (q.by == "job" && row["key"] != kUnallocatedKey) {
      const int64_t from = q.bucket_s > 0 ? std::max(b, w.h0) : w.h0;
      const int64_t to = q.bucket_s > 0 ? std::min(b + q.bucket_s, w.h1) : w.h1;
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
  return JobList(db, "sum(h.alloc_s)", since_ns, until_ns, price, limit);
}

StatusOr<json> QueryTopWasters(Db& db, int64_t since_ns, int64_t until_ns, double price,
                               int64_t limit) {
  VIGIL_ASSIGN_OR_RETURN(json out,
                         JobList(db, "sum(h.held_idle_s)", since_ns, until_ns, price, limit));
  for (json& j : out["jobs"]) {
    j["held_idle_cost"] = j["held_idle_gpu_hours"].get<double>() * price;
  }
  return out;
}

}  // namespace vigil
