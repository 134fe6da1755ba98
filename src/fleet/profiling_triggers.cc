// SPDX-License-Identifier: Apache-2.0
#include "fleet/profiling_triggers.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>

#include <fmt/format.h>

#include "base/logging.h"
#include "base/time_util.h"

namespace vigil {
namespace {

using nlohmann::json;

constexpr int64_t kHourNs = int64_t{3600} * 1000000000;

}  // namespace

StatusOr<std::vector<JobUtilisation>> ReadJobUtilisation(Db& db, int64_t now_ns,
                                                         int64_t window_ns) {
  // Whole minutes only: the current one is still filling.
  const int64_t until_s = now_ns / 1000000000 / 60 * 60;
  const int64_t from_s = until_s - window_ns / 1000000000;
  VIGIL_ASSIGN_OR_RETURN(Stmt st,
                         db.Prepare("SELECT j.job_id, m.minute_s, sum(m.alloc_s), sum(m.busy_s)"
                                    " FROM ledger_minute m JOIN jobs j ON j.job_key=m.job_key"
                                    " WHERE m.job_key<>0 AND m.minute_s>=?1 AND m.minute_s<?2"
                                    " GROUP BY j.job_id, m.minute_s ORDER BY 1, 2"));
  st.Bind(1, from_s).Bind(2, until_s);
  std::map<std::string, std::vector<std::pair<double, double>>> minutes;
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    if (st.Real(2) > 0) minutes[st.Text(0)].emplace_back(st.Real(2), st.Real(3));
  }
  VIGIL_ASSIGN_OR_RETURN(Stmt seen,
                         db.Prepare("SELECT min(first_seen_ns), max(last_seen_ns) FROM jobs"
                                    " WHERE job_id=?1"));
  std::vector<JobUtilisation> out;
  for (const auto& [job, rows] : minutes) {
    JobUtilisation u;
    u.job_id = job;
    u.minutes = static_cast<int64_t>(rows.size());
    double sum = 0, sum2 = 0;
    for (const auto& [alloc, busy] : rows) {
      u.alloc_s += alloc;
      u.busy_s += busy;
      const double r = std::clamp(busy / alloc, 0.0, 1.0);
      sum += r;
      sum2 += r * r;
    }
    const double n = static_cast<double>(rows.size());
    u.mean_ratio = u.alloc_s > 0 ? u.busy_s / u.alloc_s : 0;
    u.stddev_ratio = std::sqrt(std::max(0.0, sum2 / n - (sum / n) * (sum / n)));
    seen.Bind(1, job);
    VIGIL_ASSIGN_OR_RETURN(bool has, seen.Step());
    if (has) {
      u.first_seen_ns = seen.Int(0);
      u.last_seen_ns = seen.Int(1);
    }
    seen.Reset();
    out.push_back(std::move(u));
  }
  return out;
}

StatusOr<json> QueryProfilingDecisions(Db& db, int64_t limit) {
  VIGIL_ASSIGN_OR_RETURN(Stmt st,
                         db.Prepare("SELECT time_ns, job_id, decision, reason, request_id FROM"
                                    " profiling_decisions ORDER BY time_ns DESC, decision_id DESC"
                                    " LIMIT ?1"));
  st.Bind(1, limit);
  json out = json::array();
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    json d{{"time", FormatTimestamp(st.Int(0))},
           {"job_id", st.Text(1)},
           {"decision", st.Text(2)},
           {"reason", st.Text(3)}};
    if (!st.Text(4).empty()) d["request_id"] = st.Text(4);
    out.push_back(std::move(d));
  }
  return json{{"decisions", out}};
}

ProfilingTriggers::ProfilingTriggers(ProfilingTriggerOptions options, LedgerStore* store,
                                     ProfilingService* service)
    : options_(options), store_(store), service_(service) {}

ProfilingTriggers::~ProfilingTriggers() { Stop(); }

Status ProfilingTriggers::Record(const ProfilingDecision& d, int64_t now_ns) {
  VIGIL_LOG_INFO("profiling trigger: job_id={} decision={} reason={} request_id={}", d.job_id,
                 d.decision, d.reason, d.request_id);
  return store_
      ->Write<int64_t>([&](Db& db) -> StatusOr<int64_t> {
        VIGIL_ASSIGN_OR_RETURN(
            Stmt st, db.Prepare("INSERT INTO profiling_decisions (time_ns, job_id, decision,"
                                " reason, request_id) VALUES (?1,?2,?3,?4,?5)"));
        st.Bind(1, now_ns).Bind(2, d.job_id).Bind(3, d.decision).Bind(4, d.reason);
        st.Bind(5, d.request_id);
        VIGIL_RETURN_IF_ERROR(st.Run());
        return int64_t{0};
      })
      .status();
}

// A skip for the same job and kind of reason within the last hour is not recorded again.
StatusOr<bool> ProfilingTriggers::RecentlyRecorded(const ProfilingDecision& d, int64_t now_ns) {
  const std::string kind = d.reason.substr(0, d.reason.find(':'));
  return store_->Read<bool>([&](Db& db) -> StatusOr<bool> {
    VIGIL_ASSIGN_OR_RETURN(
        Stmt st, db.Prepare("SELECT 1 FROM profiling_decisions WHERE job_id=?1 AND decision=?2"
                            " AND time_ns>?3 AND substr(reason, 1, length(?4))=?4 LIMIT 1"));
    st.Bind(1, d.job_id).Bind(2, d.decision).Bind(3, now_ns - kHourNs).Bind(4, kind);
    return st.Step();
  });
}

StatusOr<std::vector<ProfilingDecision>> ProfilingTriggers::Check(int64_t now_ns) {
  std::lock_guard lock(mu_);
  VIGIL_ASSIGN_OR_RETURN(std::vector<JobUtilisation> jobs,
                         store_->Read<std::vector<JobUtilisation>>([&](Db& db) {
                           return ReadJobUtilisation(db, now_ns, options_.window_ns);
                         }));
  const double window_min = static_cast<double>(options_.window_ns) / 60e9;
  std::vector<ProfilingDecision> decisions;
  for (const JobUtilisation& u : jobs) {
    const bool running = now_ns - u.last_seen_ns <= options_.recent_ns &&
                         now_ns - u.first_seen_ns >= options_.min_running_ns;
    const bool covered = static_cast<double>(u.minutes) >= options_.min_coverage * window_min;
    const bool steady = u.stddev_ratio <= options_.max_stddev;
    if (!running || !covered || !steady || u.mean_ratio >= options_.busy_below ||
        service_->EverProfiled(u.job_id)) {
      continue;
    }
    const std::string why = fmt::format("low_utilization: busy {:.0f}% over {:.0f} min",
                                        u.mean_ratio * 100, window_min);
    ProfilingDecision d{u.job_id, "skipped", "", ""};
    const int64_t used = service_->CountAuto(now_ns - kHourNs);
    if (used >= options_.max_per_hour) {
      d.reason = fmt::format("budget: {} automatic requests in the last hour (max {}); {}", used,
                             options_.max_per_hour, why);
    } else {
      ProfilingRequestSpec spec;
      spec.job_id = u.job_id;
      spec.duration_ms = options_.duration_ms;
      spec.reason = why;
      spec.trigger = "auto";
      StatusOr<ProfilingRequest> r = service_->Create(spec);
      if (r.ok()) {
        d.decision = "fired";
        d.reason = why;
        d.request_id = r->request_id;
      } else {
        d.reason = "refused: " + r.status().message() + "; " + why;
      }
    }
    if (d.decision == "skipped") {
      VIGIL_ASSIGN_OR_RETURN(bool seen, RecentlyRecorded(d, now_ns));
      if (seen) continue;
    }
    VIGIL_RETURN_IF_ERROR(Record(d, now_ns));
    decisions.push_back(std::move(d));
  }
  return decisions;
}

void ProfilingTriggers::Start() {
  thread_ = std::jthread([this](std::stop_token stop) {
    std::mutex m;
    std::condition_variable_any cv;
    while (!stop.stop_requested()) {
      {
        std::unique_lock lock(m);
        cv.wait_for(lock, stop, std::chrono::nanoseconds(options_.every_ns), [] { return false; });
      }
      if (stop.stop_requested()) return;
      StatusOr<std::vector<ProfilingDecision>> d = Check(UnixNanos());
      if (!d.ok()) {
        VIGIL_LOG_EVERY_N_SEC(WARN, 300, "profiling triggers failed: err={}",
                              d.status().ToString());
      }
    }
  });
}

void ProfilingTriggers::Stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
}

}  // namespace vigil
