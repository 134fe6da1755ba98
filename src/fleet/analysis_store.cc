// SPDX-License-Identifier: Apache-2.0
#include "fleet/analysis_store.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "base/gzip.h"
#include "base/time_util.h"
#include "fleet/ingest_batch.h"

namespace vigil {
namespace {

using nlohmann::json;

constexpr const char* kColumns =
    "a.analysis_id, a.job_id, a.host, a.received_ns, a.trace_start_ns, a.trace_end_ns, a.source,"
    " a.reason, a.trace_path, a.ranks, a.steps, a.span_s, a.compute_s, a.comm_s, a.memory_s,"
    " a.idle_s, a.other_s, a.report_bytes";

double Num(const json& obj, const char* key) {
  if (!obj.is_object()) return 0;
  auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : 0.0;
}

bool ValidText(std::string_view s, size_t max) {
  if (s.size() > max) return false;
  return std::none_of(s.begin(), s.end(),
                      [](char c) { return static_cast<unsigned char>(c) < 0x20; });
}

// Widens [*lo, *hi] (unix ns) with [ts_us, ts_us + dur_us] on a rank's clock.
void Widen(const json& obj, const char* ts_key, const char* dur_key, int64_t base_ns, int64_t* lo,
           int64_t* hi) {
  if (!obj.is_object() || !obj.contains(ts_key) || !obj[ts_key].is_number()) return;
  const double ts = obj[ts_key].get<double>();
  if (!(ts > 0)) return;
  const auto start = base_ns + static_cast<int64_t>(std::llround(ts * 1000));
  const auto end = start + static_cast<int64_t>(std::llround(Num(obj, dur_key) * 1000));
  *lo = *lo == 0 ? start : std::min(*lo, start);
  *hi = std::max(*hi, end);
}

json Shares(double span, double compute, double comm, double memory, double idle, double other) {
  auto share = [span](double v) { return span > 0 ? v / span : 0.0; };
  return json{{"compute", share(compute)},
              {"communication", share(comm)},
              {"memory", share(memory)},
              {"idle", share(idle)},
              {"other", share(other)}};
}

// Columns as selected by kColumns, from index `c`.
json SummaryJson(const Stmt& st) {
  const double span = st.Real(11);
  const auto t0 = st.Int(4), t1 = st.Int(5);
  return json{
      {"id", st.Int(0)},
      {"job_id", st.Text(1)},
      {"host", st.Text(2)},
      {"received", FormatTimestamp(st.Int(3))},
      {"received_ns", st.Int(3)},
      {"trace_start", t0 > 0 ? json(FormatTimestamp(t0)) : json(nullptr)},
      {"trace_end", t1 > 0 ? json(FormatTimestamp(t1)) : json(nullptr)},
      {"source", st.Text(6)},
      {"reason", st.Text(7)},
      {"trace_path", st.Text(8)},
      {"ranks", st.Int(9)},
      {"steps", st.Int(10)},
      {"gpu_seconds", span},
      {"seconds", json{{"compute", st.Real(12)},
                       {"communication", st.Real(13)},
                       {"memory", st.Real(14)},
                       {"idle", st.Real(15)},
                       {"other", st.Real(16)}}},
      {"shares", Shares(span, st.Real(12), st.Real(13), st.Real(14), st.Real(15), st.Real(16))},
      {"report_bytes", st.Int(17)},
      {"insights", json::array()}};
}

// Runs `select` (kColumns first, ?1.. bound by `bind`) and attaches each analysis' insights.
StatusOr<json> SelectAnalyses(Db& db, const std::string& tail,
                              const std::function<void(Stmt&)>& bind) {
  VIGIL_ASSIGN_OR_RETURN(
      Stmt st, db.Prepare(std::string("SELECT ") + kColumns + " FROM analyses a " + tail));
  bind(st);
  VIGIL_ASSIGN_OR_RETURN(Stmt ins, db.Prepare("SELECT insight, severity, title,"
                                              " estimated_gain_pct FROM analysis_insights"
                                              " WHERE analysis_id=?1 ORDER BY seq"));
  json out = json::array();
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    json a = SummaryJson(st);
    ins.Reset();
    ins.Bind(1, st.Int(0));
    while (true) {
      VIGIL_ASSIGN_OR_RETURN(bool irow, ins.Step());
      if (!irow) break;
      a["insights"].push_back(json{{"id", ins.Text(0)},
                                   {"severity", ins.Text(1)},
                                   {"title", ins.Text(2)},
                                   {"estimated_gain_pct", ins.Real(3)}});
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

StatusOr<AnalysisSummary> SummariseAnalysisReport(const json& report) {
  if (!report.is_object()) return InvalidArgumentError("report: want a JSON object");
  auto schema = report.find("schema");
  if (schema == report.end() || !schema->is_number_integer()) {
    return InvalidArgumentError("report: no \"schema\" (want the JSON of vigil analyze --json)");
  }
  if (schema->get<int64_t>() != 1) {
    return InvalidArgumentError("report: schema " + std::to_string(schema->get<int64_t>()) +
                                " is not supported (this service reads schema 1)");
  }
  auto ranks = report.find("ranks");
  if (ranks == report.end() || !ranks->is_array()) {
    return InvalidArgumentError("report: \"ranks\" must be an array");
  }
  AnalysisSummary s;
  s.ranks = static_cast<int64_t>(ranks->size());
  for (const json& r : *ranks) {
    if (!r.is_object()) return InvalidArgumentError("report: every rank must be an object");
    const json tb = r.value("temporal_breakdown", json::object());
    const double span = Num(tb, "kernel_us") / 1e6, compute = Num(tb, "compute_us") / 1e6,
                 idle = Num(tb, "idle_us") / 1e6;
    // Exposed communication and memory may overlap each other: the time neither compute nor
    // idle is split communication first, then memory, then other, so the parts sum to the span.
    const double rest = std::max(0.0, span - compute - idle);
    const double comm = std::min(rest, Num(tb, "exposed_comm_us") / 1e6);
    const double mem = std::min(rest - comm, Num(tb, "exposed_memory_us") / 1e6);
    s.span_s += span;
    s.compute_s += compute;
    s.comm_s += comm;
    s.memory_s += mem;
    s.idle_s += idle;
    s.other_s += rest - comm - mem;
    const auto base = static_cast<int64_t>(Num(r, "base_time_ns"));
    const json steps = r.value("steps", json::array());
    if (steps.is_array()) {
      s.steps = std::max<int64_t>(s.steps, static_cast<int64_t>(steps.size()));
      for (const json& st : steps)
        Widen(st, "ts_us", "dur_us", base, &s.trace_start_ns, &s.trace_end_ns);
    }
    Widen(r.value("critical_path", json::object()), "ts_us", "length_us", base, &s.trace_start_ns,
          &s.trace_end_ns);
    const json roof = r.value("roofline", json::object());
    if (roof.is_object()) {
      s.kernel_s += Num(roof, "kernel_us") / 1e6;
      s.modelled_s += std::min(Num(roof, "modelled_kernel_us"), Num(roof, "kernel_us")) / 1e6;
      if (Num(roof, "pct_of_replayed") > 0) {
        s.roofline_s += Num(roof, "roofline_us") / 1e6;
        s.replayed_s += Num(roof, "replayed_us") / 1e6;
      }
    }
  }
  const json insights = report.value("insights", json::array());
  if (!insights.is_array()) return InvalidArgumentError("report: \"insights\" must be an array");
  for (const json& i : insights) {
    if (!i.is_object() || !i.contains("id") || !i["id"].is_string()) {
      return InvalidArgumentError("report: every insight needs a string \"id\"");
    }
    AnalysisInsightRow row;
    row.id = i["id"].get<std::string>();
    const json sev = i.value("severity", json("info"));
    row.severity = sev.is_string() ? sev.get<std::string>() : "info";
    if (row.severity != "info" && row.severity != "warning" && row.severity != "critical") {
      row.severity = "info";
    }
    const json title = i.value("title", json(""));
    row.title = title.is_string() ? title.get<std::string>() : "";
    row.estimated_gain_pct = std::clamp(Num(i, "estimated_gain_pct"), 0.0, 100.0);
    if (!ValidText(row.id, 128)) return InvalidArgumentError("report: bad insight id");
    s.insights.push_back(std::move(row));
  }
  return s;
}

StatusOr<int64_t> StoreAnalysis(LedgerStore& store, const AnalysisUpload& upload) {
  if (upload.job_id.empty() || !ValidText(upload.job_id, 256)) {
    return InvalidArgumentError("job_id: want 1-256 printable characters");
  }
  if (upload.source != kAnalysisSourceUpload && upload.source != kAnalysisSourceProfiling) {
    return InvalidArgumentError("source: want \"upload\" or \"profiling\", got \"" + upload.source +
                                "\"");
  }
  if (!ValidText(upload.host, 1024) || !ValidText(upload.reason, 1024) ||
      !ValidText(upload.trace_path, 4096)) {
    return InvalidArgumentError("host, reason or trace_path: too long or not printable");
  }
  if (upload.report_json.size() > kMaxAnalysisReportBytes) {
    return ResourceExhaustedError("report larger than " + std::to_string(kMaxAnalysisReportBytes) +
                                  " bytes");
  }
  const json report = json::parse(upload.report_json, nullptr, false);
  if (report.is_discarded()) return InvalidArgumentError("report: not valid JSON");
  VIGIL_ASSIGN_OR_RETURN(AnalysisSummary s, SummariseAnalysisReport(report));
  std::string gz = Gzip(upload.report_json);
  double max_gain = 0;
  for (const AnalysisInsightRow& i : s.insights)
    max_gain = std::max(max_gain, i.estimated_gain_pct);
  return store.Write<int64_t>([&](Db& db) -> StatusOr<int64_t> {
    VIGIL_ASSIGN_OR_RETURN(
        Stmt st,
        db.Prepare("INSERT INTO analyses (job_id, host, received_ns, trace_start_ns, trace_end_ns,"
                   " source, reason, trace_path, ranks, steps, span_s, compute_s, comm_s,"
                   " memory_s, idle_s, other_s, insights, max_gain_pct, report_bytes, report_gz,"
                   " roofline_s, replayed_s, kernel_s, modelled_s)"
                   " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
                   " ?16, ?17, ?18, ?19, CAST(?20 AS BLOB), ?21, ?22, ?23, ?24)"));
    st.Bind(1, upload.job_id).Bind(2, upload.host).Bind(3, upload.received_ns);
    st.Bind(4, s.trace_start_ns).Bind(5, s.trace_end_ns).Bind(6, upload.source);
    st.Bind(7, upload.reason).Bind(8, upload.trace_path).Bind(9, s.ranks).Bind(10, s.steps);
    st.Bind(11, s.span_s).Bind(12, s.compute_s).Bind(13, s.comm_s).Bind(14, s.memory_s);
    st.Bind(15, s.idle_s).Bind(16, s.other_s);
    st.Bind(17, static_cast<int64_t>(s.insights.size())).Bind(18, max_gain);
    st.Bind(19, static_cast<int64_t>(upload.report_json.size())).Bind(20, std::string_view(gz));
    st.Bind(21, s.roofline_s).Bind(22, s.replayed_s).Bind(23, s.kernel_s).Bind(24, s.modelled_s);
    VIGIL_RETURN_IF_ERROR(st.Run());
    const int64_t id = db.LastInsertRowId();
    VIGIL_ASSIGN_OR_RETURN(
        Stmt ins, db.Prepare("INSERT INTO analysis_insights (analysis_id, seq, insight, severity,"
                             " title, estimated_gain_pct) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
    for (size_t k = 0; k < s.insights.size(); ++k) {
      const AnalysisInsightRow& i = s.insights[k];
      ins.Bind(1, id).Bind(2, static_cast<int64_t>(k)).Bind(3, i.id).Bind(4, i.severity);
      ins.Bind(5, i.title).Bind(6, i.estimated_gain_pct);
      VIGIL_RETURN_IF_ERROR(ins.Run());
    }
    return id;
  });
}

StatusOr<json> QueryAnalyses(Db& db, const AnalysisListQuery& q) {
  std::string where = "WHERE a.received_ns>=?1 AND a.received_ns<?2";
  if (!q.job_id.empty()) where += " AND a.job_id=?4";
  VIGIL_ASSIGN_OR_RETURN(
      json list, SelectAnalyses(db,
                                where + " ORDER BY a.received_ns DESC, a.analysis_id DESC"
                                        " LIMIT ?3",
                                [&](Stmt& st) {
                                  st.Bind(1, q.since_ns).Bind(2, q.until_ns).Bind(3, q.limit);
                                  if (!q.job_id.empty()) st.Bind(4, q.job_id);
                                }));
  return json{{"analyses", std::move(list)}};
}

StatusOr<json> QueryAnalysis(Db& db, int64_t id) {
  VIGIL_ASSIGN_OR_RETURN(
      json list, SelectAnalyses(db, "WHERE a.analysis_id=?1", [id](Stmt& st) { st.Bind(1, id); }));
  if (list.empty()) return NotFoundError("analysis " + std::to_string(id) + ": not stored");
  json out = std::move(list[0]);
  VIGIL_ASSIGN_OR_RETURN(Stmt st,
                         db.Prepare("SELECT report_gz FROM analyses WHERE analysis_id=?1"));
  st.Bind(1, id);
  VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return NotFoundError("analysis " + std::to_string(id) + ": not stored");
  VIGIL_ASSIGN_OR_RETURN(std::string text, Gunzip(st.Text(0), kMaxAnalysisReportBytes));
  json report = json::parse(text, nullptr, false);
  if (report.is_discarded()) return InternalError("analysis " + std::to_string(id) + ": corrupt");
  out["report"] = std::move(report);
  return out;
}

Status AddJobAnalyses(Db& db, const std::string& job_id, json* job) {
  AnalysisListQuery q;
  q.job_id = job_id;
  VIGIL_ASSIGN_OR_RETURN(json list, QueryAnalyses(db, q));
  (*job)["analyses"] = std::move(list["analyses"]);
  return OkStatus();
}

}  // namespace vigil
