// SPDX-License-Identifier: Apache-2.0
#include "fleet/ledger_gpu_query.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "base/time_util.h"
#include "fleet/ledger_window.h"

namespace vigil {
namespace {

using nlohmann::json;

constexpr int64_t kSteps[] = {60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400};

// A gauge's sum and count in a bucket; its mean, or null when nothing was reported.
struct Avg {
  double sum = 0;
  int64_t n = 0;
  void Add(double s, int64_t k) {
    sum += s;
    n += k;
  }
  json Mean() const { return n > 0 ? json(sum / static_cast<double>(n)) : json(); }
};

struct Point {
  double wall = 0, alloc = 0, busy = 0, energy = 0;  // Seconds and joules: they add up.
  Avg sm, flops, util, mem, mem_total, power, temp;
  void Add(const Point& o) {
    wall += o.wall;
    alloc += o.alloc;
    busy += o.busy;
    energy += o.energy;
    for (auto [a, b] : {std::pair{&sm, &o.sm},
                        {&flops, &o.flops},
                        {&util, &o.util},
                        {&mem, &o.mem},
                        {&mem_total, &o.mem_total},
                        {&power, &o.power},
                        {&temp, &o.temp}}) {
      a->Add(b->sum, b->n);
    }
  }
};

struct Gpu {
  int64_t id = 0;
  std::string uuid, model;
  int64_t last_seen_ns = 0;
  std::map<int64_t, Point> points;  // Bucket start (unix s) -> sums.
};

json PointJson(int64_t t, const Point& p) {
  // Power: the daemon's gauge; where a backend reports only energy, the integrated counter over
  // the reported time.
  json power = p.power.Mean();
  if (power.is_null() && p.wall > 0 && p.energy > 0) power = p.energy / p.wall;
  return json{{"t", t},
              {"reported_s", p.wall},
              {"allocated_s", p.alloc},
              {"busy_s", p.busy},
              {"energy_joules", p.energy},
              {"sm_active_ratio", p.sm.Mean()},
              {"flops_estimated", p.flops.Mean()},
              {"utilization_ratio", p.util.Mean()},
              {"memory_used_bytes", p.mem.Mean()},
              {"memory_total_bytes", p.mem_total.Mean()},
              {"power_watts", power},
              {"temperature_celsius", p.temp.Mean()}};
}

// Means over the whole window, each weighted by its samples (time for the ledger's seconds).
json SummaryJson(const Gpu& g) {
  Point s;
  for (const auto& [t, p] : g.points) s.Add(p);
  json out = PointJson(0, s);
  out.erase("t");
  return out;
}

}  // namespace

int64_t DefaultGpuStep(int64_t window_s) {
  for (int64_t step : kSteps) {
    if (window_s <= step * 360) return step;
  }
  return kSteps[std::size(kSteps) - 1];
}

StatusOr<json> QueryGpuSeries(Db& db, const GpuSeriesQuery& q) {
  const MinuteWindow window = ToMinutes(q.since_ns, q.until_ns);
  const int64_t since_s = window.since_s, until_s = window.until_s;
  if (until_s <= since_s) {
    return InvalidArgumentError("until must be after since");
  }
  const int64_t step = q.step_s > 0 ? q.step_s : DefaultGpuStep(until_s - since_s);
  if (step % 60 != 0) {
    return InvalidArgumentError("step: must be a whole number of minutes");
  }
  if ((until_s - since_s) / step > kMaxGpuPoints) {
    return InvalidArgumentError("step: " + std::to_string(step) + " s gives more than " +
                                std::to_string(kMaxGpuPoints) + " points over this window");
  }
  VIGIL_ASSIGN_OR_RETURN(
      Stmt gs, db.Prepare("SELECT g.gpu_id, g.uuid, g.gpu_model, g.last_seen_ns FROM gpus g JOIN"
                          " hosts s ON s.host_id=g.host_id WHERE s.name=?1 AND (?2='' OR"
                          " g.uuid=?2) ORDER BY g.uuid"));
  gs.Bind(1, q.host).Bind(2, q.gpu_uuid);
  std::vector<Gpu> gpus;
  std::map<int64_t, size_t> index;
  std::string in;
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, gs.Step());
    if (!row) break;
    index[gs.Int(0)] = gpus.size();
    gpus.push_back(Gpu{gs.Int(0), gs.Text(1), gs.Text(2), gs.Int(3), {}});
    in += (in.empty() ? "" : ",") + std::to_string(gs.Int(0));
  }
  if (gpus.empty()) {
    return NotFoundError(q.gpu_uuid.empty()
                             ? "host " + q.host + ": not in the ledger"
                             : "GPU " + q.gpu_uuid + " of host " + q.host + ": not in the ledger");
  }
  const std::string b = "(minute_s/" + std::to_string(step) + ")*" + std::to_string(step);
  const int64_t first_minute = window.first_minute_s;
  VIGIL_ASSIGN_OR_RETURN(
      Stmt ms, db.Prepare("SELECT " + b + " AS b, m.gpu_id, " + kMinuteGpuWall + ", " +
                          kMinuteJobAlloc + ", " + kMinuteJobBusy + ", " + kMinuteGpuEnergy +
                          ", sum(m.sm_sum), sum(m.sm_n), sum(m.flops_sum), sum(m.flops_n)"
                          " FROM ledger_minute m WHERE m.gpu_id IN (" +
                          in + ") AND m.minute_s>=?1 AND m.minute_s<?2 GROUP BY b, m.gpu_id"));
  ms.Bind(1, first_minute).Bind(2, window.end_minute_s);
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, ms.Step());
    if (!row) break;
    Point& p = gpus[index[ms.Int(1)]].points[std::max(ms.Int(0), since_s)];
    p.wall += ms.Real(2);
    p.alloc += ms.Real(3);
    p.busy += ms.Real(4);
    p.energy += ms.Real(5);
    p.sm.Add(ms.Real(6), ms.Int(7));
    p.flops.Add(ms.Real(8), ms.Int(9));
  }
  VIGIL_ASSIGN_OR_RETURN(Stmt gg,
                         db.Prepare("SELECT " + b +
                                    " AS b, gpu_id, sum(util_sum), sum(util_n), sum(mem_used_sum),"
                                    " sum(mem_used_n), sum(mem_total_sum), sum(mem_total_n),"
                                    " sum(power_sum), sum(power_n), sum(temp_sum), sum(temp_n)"
                                    " FROM gpu_minute_gauges WHERE gpu_id IN (" +
                                    in + ") AND minute_s>=?1 AND minute_s<?2 GROUP BY b, gpu_id"));
  gg.Bind(1, first_minute).Bind(2, window.end_minute_s);
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, gg.Step());
    if (!row) break;
    Point& p = gpus[index[gg.Int(1)]].points[std::max(gg.Int(0), since_s)];
    int column = 2;
    for (Avg* a : {&p.util, &p.mem, &p.mem_total, &p.power, &p.temp}) {
      a->Add(gg.Real(column), gg.Int(column + 1));
      column += 2;
    }
  }
  // The jobs that held these GPUs in the window, with the GPUs each held.
  VIGIL_ASSIGN_OR_RETURN(
      Stmt js, db.Prepare("SELECT j.job_id, j.team, j.user, j.model, j.framework, m.gpu_id,"
                          " min(m.minute_s), max(m.minute_s), sum(m.alloc_s), sum(m.busy_s)"
                          " FROM ledger_minute m JOIN jobs j ON j.job_key=m.job_key WHERE"
                          " m.job_key<>0 AND m.gpu_id IN (" +
                          in +
                          ") AND m.minute_s>=?1 AND m.minute_s<?2 AND m.alloc_s>0"
                          " GROUP BY j.job_id, m.gpu_id ORDER BY j.job_id, m.gpu_id"));
  js.Bind(1, first_minute).Bind(2, window.end_minute_s);
  std::map<std::string, json> jobs;
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, js.Step());
    if (!row) break;
    auto [it, fresh] = jobs.try_emplace(js.Text(0));
    json& j = it->second;
    const int64_t first = std::max(js.Int(6), since_s), last = std::min(js.Int(7) + 60, until_s);
    if (fresh) {
      j = json{{"job_id", js.Text(0)}, {"team", js.Text(1)},      {"user", js.Text(2)},
               {"model", js.Text(3)},  {"framework", js.Text(4)}, {"gpus", json::array()},
               {"first_s", first},     {"last_s", last},          {"allocated_gpu_hours", 0.0},
               {"busy_gpu_hours", 0.0}};
    }
    j["gpus"].push_back(gpus[index[js.Int(5)]].uuid);
    j["first_s"] = std::min(j["first_s"].get<int64_t>(), first);
    j["last_s"] = std::max(j["last_s"].get<int64_t>(), last);
    j["allocated_gpu_hours"] = j["allocated_gpu_hours"].get<double>() + js.Real(8) / 3600;
    j["busy_gpu_hours"] = j["busy_gpu_hours"].get<double>() + js.Real(9) / 3600;
  }
  json gpu_list = json::array();
  for (const Gpu& g : gpus) {
    json points = json::array();
    for (const auto& [t, p] : g.points) points.push_back(PointJson(t, p));
    gpu_list.push_back(json{{"gpu_uuid", g.uuid},
                            {"gpu_model", g.model},
                            {"last_seen", FormatTimestamp(g.last_seen_ns)},
                            {"summary", SummaryJson(g)},
                            {"points", std::move(points)}});
  }
  json job_list = json::array();
  for (auto& [id, j] : jobs) {
    j["first"] = FormatTimestamp(j["first_s"].get<int64_t>() * kNanosPerSecond);
    j["last"] = FormatTimestamp(j["last_s"].get<int64_t>() * kNanosPerSecond);
    job_list.push_back(std::move(j));
  }
  std::sort(job_list.begin(), job_list.end(), [](const json& x, const json& y) {
    return x["allocated_gpu_hours"].get<double>() > y["allocated_gpu_hours"].get<double>();
  });
  return json{{"host", q.host},
              {"since", FormatTimestamp(since_s * kNanosPerSecond)},
              {"until", FormatTimestamp(until_s * kNanosPerSecond)},
              {"since_s", since_s},
              {"until_s", until_s},
              {"step_s", step},
              {"gpus", std::move(gpu_list)},
              {"jobs", std::move(job_list)}};
}

}  // namespace vigil
