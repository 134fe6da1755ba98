// SPDX-License-Identifier: Apache-2.0
// QueryWorkflows of analysis_store.h: fleet workflow characterisation from stored analyses.
// Each job's shares are its analyses' GPU-seconds summed (trace-time weighted); the fleet's are
// the jobs' shares weighted by the job's ledger GPU-hours in the window (counted exactly, as
// ledger_query.h counts windows), or by its traced GPU-hours when the ledger does not know the job.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "base/time_util.h"
#include "fleet/analysis_store.h"
#include "fleet/ledger_query.h"

namespace vigil {
namespace {

using nlohmann::json;

constexpr const char* kSeverities[] = {"info", "warning", "critical"};
constexpr const char* kShareKeys[] = {"compute", "communication", "memory", "idle", "other"};
constexpr int kShares = 5;

struct JobAgg {
  int64_t analyses = 0, latest = 0;
  double span_s = 0;
  double seconds[kShares] = {};
  double weight_h = 0;  // GPU-hours the job's shares are weighted with.
  bool from_ledger = false;
  double roofline_s = 0, replayed_s = 0, kernel_s = 0, modelled_s = 0;
};

// The job's % of roofline over its analyses (summed roofline time over summed replayed device
// time) and the share of kernel time a work model covers; null where not known.
json RooflineJson(const JobAgg& j) {
  return json{{"roofline_pct", j.replayed_s > 0 ? json(100 * j.roofline_s / j.replayed_s) : json()},
              {"roofline_coverage", j.kernel_s > 0 ? json(j.modelled_s / j.kernel_s) : json()}};
}

struct InsightAgg {
  std::string title;
  int severity = 0;
  int64_t analyses = 0, fired = 0;
  double gain_sum = 0, gpu_hours = 0;
  std::vector<std::string> jobs;
};

json SharesJson(const double* seconds, double span) {
  json out = json::object();
  for (int k = 0; k < kShares; ++k) out[kShareKeys[k]] = span > 0 ? seconds[k] / span : 0.0;
  return out;
}

}  // namespace

StatusOr<json> QueryWorkflows(Db& db, int64_t since_ns, int64_t until_ns, int64_t limit) {
  std::map<std::string, JobAgg> jobs;
  VIGIL_ASSIGN_OR_RETURN(
      Stmt per_job,
      db.Prepare("SELECT job_id, count(*), sum(span_s), sum(compute_s), sum(comm_s),"
                 " sum(memory_s), sum(idle_s), sum(other_s), max(analysis_id), sum(roofline_s),"
                 " sum(replayed_s), sum(kernel_s), sum(modelled_s) FROM analyses"
                 " WHERE received_ns>=?1 AND received_ns<?2 GROUP BY job_id"));
  per_job.Bind(1, since_ns).Bind(2, until_ns);
  int64_t analyses = 0;
  double trace_s = 0;
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, per_job.Step());
    if (!row) break;
    JobAgg& j = jobs[per_job.Text(0)];
    j.analyses = per_job.Int(1);
    j.span_s = per_job.Real(2);
    for (int k = 0; k < kShares; ++k) j.seconds[k] = per_job.Real(3 + k);
    j.latest = per_job.Int(8);
    j.roofline_s = per_job.Real(9);
    j.replayed_s = per_job.Real(10);
    j.kernel_s = per_job.Real(11);
    j.modelled_s = per_job.Real(12);
    j.weight_h = j.span_s / 3600;
    analyses += j.analyses;
    trace_s += j.span_s;
  }
  // The ledger's GPU-hours of those jobs over the window, counted as the ledger queries count it.
  VIGIL_ASSIGN_OR_RETURN(JobAllocation ledger, QueryJobAllocation(db, since_ns, until_ns));
  for (const auto& [job_id, alloc_s] : ledger.alloc_s) {
    auto it = jobs.find(job_id);
    if (it == jobs.end() || alloc_s <= 0) continue;
    it->second.weight_h = alloc_s / 3600;
    it->second.from_ledger = true;
  }
  double total_w = 0, ledger_w = 0, fleet[kShares] = {};
  for (const auto& [id, j] : jobs) {
    if (j.span_s <= 0) continue;  // No GPU work traced: no shares to weight.
    total_w += j.weight_h;
    if (j.from_ledger) ledger_w += j.weight_h;
    for (int k = 0; k < kShares; ++k) fleet[k] += j.weight_h * j.seconds[k] / j.span_s;
  }
  json shares = json::object();
  for (int k = 0; k < kShares; ++k) shares[kShareKeys[k]] = total_w > 0 ? fleet[k] / total_w : 0.0;

  // Insights: per (insight, job), then folded per insight.
  std::map<std::string, InsightAgg> insights;
  VIGIL_ASSIGN_OR_RETURN(
      Stmt ins,
      db.Prepare("SELECT i.insight, a.job_id, count(DISTINCT a.analysis_id), max(CASE i.severity"
                 " WHEN 'critical' THEN 2 WHEN 'warning' THEN 1 ELSE 0 END),"
                 " sum(i.estimated_gain_pct), count(*), max(i.title) FROM analysis_insights i"
                 " JOIN analyses a ON a.analysis_id=i.analysis_id WHERE a.received_ns>=?1 AND"
                 " a.received_ns<?2 GROUP BY i.insight, a.job_id"));
  ins.Bind(1, since_ns).Bind(2, until_ns);
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, ins.Step());
    if (!row) break;
    InsightAgg& a = insights[ins.Text(0)];
    const std::string job = ins.Text(1);
    a.jobs.push_back(job);
    a.analyses += ins.Int(2);
    a.severity = std::max(a.severity, static_cast<int>(ins.Int(3)));
    a.gain_sum += ins.Real(4);
    a.fired += ins.Int(5);
    if (a.title.empty()) a.title = ins.Text(6);
    a.gpu_hours += jobs.count(job) ? jobs[job].weight_h : 0;
  }
  std::vector<std::pair<std::string, InsightAgg>> ranked(insights.begin(), insights.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.second.jobs.size() != b.second.jobs.size()) {
      return a.second.jobs.size() > b.second.jobs.size();
    }
    if (a.second.analyses != b.second.analyses) return a.second.analyses > b.second.analyses;
    return a.second.gpu_hours > b.second.gpu_hours;
  });
  json insight_rows = json::array();
  for (auto& [id, a] : ranked) {
    if (static_cast<int64_t>(insight_rows.size()) >= limit) break;
    std::sort(a.jobs.begin(), a.jobs.end());
    insight_rows.push_back(json{{"id", id},
                                {"title", a.title},
                                {"severity", kSeverities[a.severity]},
                                {"jobs", a.jobs.size()},
                                {"job_ids", a.jobs},
                                {"analyses", a.analyses},
                                {"gpu_hours", a.gpu_hours},
                                {"mean_estimated_gain_pct", a.fired ? a.gain_sum / a.fired : 0}});
  }

  // Top jobs: what the best fix of the job's latest analysis could win, in GPU-hours.
  VIGIL_ASSIGN_OR_RETURN(Stmt best,
                         db.Prepare("SELECT insight, title, severity, estimated_gain_pct FROM"
                                    " analysis_insights WHERE analysis_id=?1 ORDER BY"
                                    " estimated_gain_pct DESC, seq LIMIT 1"));
  json top = json::array();
  for (const auto& [id, j] : jobs) {
    best.Reset();
    best.Bind(1, j.latest);
    VIGIL_ASSIGN_OR_RETURN(bool row, best.Step());
    const double gain = row ? best.Real(3) : 0.0;
    json entry{{"job_id", id},
               {"analyses", j.analyses},
               {"latest_analysis_id", j.latest},
               {"gpu_hours", j.weight_h},
               {"weight_source", j.from_ledger ? "ledger" : "trace"},
               {"traced_gpu_hours", j.span_s / 3600},
               {"shares", SharesJson(j.seconds, j.span_s)},
               {"estimated_gain_pct", gain},
               {"estimated_gain_gpu_hours", j.weight_h * gain / 100}};
    entry.update(RooflineJson(j));
    entry["top_insight"] =
        row ? json{{"id", best.Text(0)}, {"title", best.Text(1)}, {"severity", best.Text(2)}}
            : json(nullptr);
    top.push_back(std::move(entry));
  }
  std::stable_sort(top.begin(), top.end(), [](const json& a, const json& b) {
    const double ga = a["estimated_gain_gpu_hours"].get<double>();
    const double gb = b["estimated_gain_gpu_hours"].get<double>();
    if (ga != gb) return ga > gb;
    return a["estimated_gain_pct"].get<double>() > b["estimated_gain_pct"].get<double>();
  });
  if (static_cast<int64_t>(top.size()) > limit) top.erase(top.begin() + limit, top.end());
  return json{{"since", FormatTimestamp(since_ns)},
              {"until", FormatTimestamp(until_ns)},
              {"analyses", analyses},
              {"jobs", jobs.size()},
              {"weight_gpu_hours", total_w},
              {"ledger_gpu_hours", ledger_w},
              {"traced_gpu_hours", trace_s / 3600},
              {"ledger_window", std::move(ledger.window)},
              {"shares", shares},
              {"insights", insight_rows},
              {"top_jobs", top}};
}

}  // namespace vigil
