// SPDX-License-Identifier: Apache-2.0
#include "fleet/ledger_window.h"

#include <algorithm>

#include "base/time_util.h"

namespace vigil {
namespace {

constexpr int64_t kHourS = 3600;

int64_t Floor(int64_t t, int64_t grain) { return FloorDiv(t, grain) * grain; }
int64_t Ceil(int64_t t, int64_t grain) { return -Floor(-t, grain); }

}  // namespace

MinuteWindow ToMinutes(int64_t since_ns, int64_t until_ns) {
  MinuteWindow w;
  w.since_s = FloorDiv(since_ns, kNanosPerSecond);
  w.until_s = FloorDiv(until_ns, kNanosPerSecond);
  w.first_minute_s = Floor(w.since_s, 60);
  w.end_minute_s = Ceil(w.until_s, 60);
  return w;
}

WindowPlan PlanWindow(int64_t since_ns, int64_t until_ns, int64_t bucket_s, int64_t minute_cut_s) {
  const MinuteWindow mw = ToMinutes(since_ns, until_ns);
  WindowPlan p;
  p.asked_since_s = mw.since_s;
  p.asked_until_s = mw.until_s;
  p.bucket_s = bucket_s;
  int64_t s = mw.first_minute_s;
  int64_t u = std::max(mw.end_minute_s, s);
  // An edge whose minute rows are (partly) gone is counted as its whole hour. Once since is
  // inside the kept minutes, so is every later minute.
  if (s % kHourS != 0 && s < minute_cut_s) {
    s = Floor(s, kHourS);
    p.since_widened = true;
  }
  if (u % kHourS != 0 && std::max(s, Floor(u, kHourS)) < minute_cut_s) {
    u = Ceil(u, kHourS);
    p.until_widened = true;
  }
  p.since_s = s;
  p.until_s = u;
  p.hours_from = Ceil(s, kHourS);
  p.hours_to = std::max(Floor(u, kHourS), p.hours_from);
  // Buckets start at since: off the hour, each boundary cuts an hour in two.
  p.split_origin = Floor(s, kHourS);
  p.split_every = bucket_s > 0 && s % kHourS != 0 ? bucket_s : 0;
  for (int64_t h = Floor(s, kHourS); h < u; h += kHourS) {
    const bool split = p.split_every > 0 && (h - p.split_origin) % p.split_every == 0;
    if (h >= p.hours_from && h < p.hours_to && !split) continue;  // From the rollup.
    const int64_t from = std::max(h, s), to = std::min(h + kHourS, u);
    if (from >= to) continue;
    if (!p.minute_ranges.empty() && p.minute_ranges.back().second == from) {
      p.minute_ranges.back().second = to;
    } else {
      p.minute_ranges.emplace_back(from, to);
    }
  }
  return p;
}

std::string WindowPlan::HourFilter(std::string_view column) const {
  const std::string c(column);
  std::string sql =
      c + ">=" + std::to_string(hours_from) + " AND " + c + "<" + std::to_string(hours_to);
  if (split_every > 0) {
    sql += " AND (" + c + "-" + std::to_string(split_origin) + ")%" + std::to_string(split_every) +
           "<>0";
  }
  return sql;
}

std::string WindowPlan::BucketOf(std::string_view column) const {
  if (bucket_s <= 0) return "0";
  const std::string s = std::to_string(since_s), b = std::to_string(bucket_s);
  return "(" + s + "+((" + std::string(column) + "-" + s + ")/" + b + ")*" + b + ")";
}

nlohmann::json WindowPlan::WindowJson() const {
  nlohmann::json edges = nlohmann::json::array();
  if (since_widened) edges.push_back("since");
  if (until_widened) edges.push_back("until");
  return {{"since", FormatTimestamp(since_s * kNanosPerSecond)},
          {"until", FormatTimestamp(until_s * kNanosPerSecond)},
          {"since_s", since_s},
          {"until_s", until_s},
          {"asked_since", FormatTimestamp(asked_since_s * kNanosPerSecond)},
          {"asked_until", FormatTimestamp(asked_until_s * kNanosPerSecond)},
          {"whole_hour_edges", std::move(edges)}};
}

StatusOr<int64_t> ReadMinuteCut(Db& db) {
  VIGIL_ASSIGN_OR_RETURN(
      Stmt st, db.Prepare("SELECT cut_s FROM retention_cuts WHERE table_name='ledger_minute'"));
  VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.Int(0) : 0;
}

}  // namespace vigil
