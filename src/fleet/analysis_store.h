// SPDX-License-Identifier: Apache-2.0
// The analysis store of vigil-fleet: `vigil analyze` JSON reports (docs/trace-json-schema.md,
// schema 1) kept in the ledger's tables `analyses` (one row per report: job, host, source,
// reason, trace window, summary shares and seconds, the report gzipped) and `analysis_insights`
// (one row per insight), so that fleet aggregates are SQL. Reports arrive by upload
// (POST /api/v1/analyses, `vigil analyze --upload`) or from the fleet's own profiling of running
// jobs, which calls StoreAnalysis directly. Queries answer docs/protocols.md "Analysis upload".
// Owner: fleet. Thread-safe as LedgerStore is: StoreAnalysis writes through LedgerStore::Write,
// the queries take the Db that LedgerStore::Read hands out.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "fleet/ledger_store.h"
#include "fleet/sqlite_db.h"

namespace vigil {

struct AnalysisUpload {
  std::string job_id, host, source, reason, trace_path;
  int64_t received_ns;
  std::string report_json;
};

// Sources an analysis can come from.
inline constexpr const char* kAnalysisSourceUpload = "upload";
inline constexpr const char* kAnalysisSourceProfiling = "profiling";
// The largest report kept (uncompressed JSON); larger ones are ResourceExhausted.
inline constexpr size_t kMaxAnalysisReportBytes = 32 << 20;

// What a report says, reduced to the columns of `analyses` and `analysis_insights`.
struct AnalysisInsightRow {
  std::string id, severity, title;
  double estimated_gain_pct = 0;
};
struct AnalysisSummary {
  int64_t ranks = 0, steps = 0;
  int64_t trace_start_ns = 0, trace_end_ns = 0;  // Unix ns; 0 when the report has no times.
  // GPU-seconds summed over ranks: span = first GPU event to last (kernel_us); compute, exposed
  // communication, exposed memory, idle and other partition it (communication and memory
  // overlapping each other count as communication; other is the rest of the non-compute time).
  double span_s = 0, compute_s = 0, comm_s = 0, memory_s = 0, idle_s = 0, other_s = 0;
  // % of roofline, from the ranks' `roofline` objects: the roofline and replayed device time of
  // the ranks with a figure, and the kernel time of every rank with the part a work model covers.
  double roofline_s = 0, replayed_s = 0, kernel_s = 0, modelled_s = 0;
  std::vector<AnalysisInsightRow> insights;
};

// Checks the report (a JSON object, "schema": 1, a "ranks" array of objects, "insights" an array
// when present) and reduces it. InvalidArgument says what is wrong.
StatusOr<AnalysisSummary> SummariseAnalysisReport(const nlohmann::json& report);

// Validates and stores one report; returns its id. InvalidArgument for a bad report, job id or
// source; ResourceExhausted above kMaxAnalysisReportBytes.
StatusOr<int64_t> StoreAnalysis(LedgerStore& store, const AnalysisUpload& upload);

struct AnalysisListQuery {
  std::string job_id;                          // "" = every job.
  int64_t since_ns = 0, until_ns = INT64_MAX;  // On received time.
  int64_t limit = 100;
};
// {"analyses": [summary, ...]}, newest first (docs/protocols.md "Analysis upload").
StatusOr<nlohmann::json> QueryAnalyses(Db& db, const AnalysisListQuery& q);
// One analysis' summary plus "report" (the stored JSON). NotFound for an unknown id.
StatusOr<nlohmann::json> QueryAnalysis(Db& db, int64_t id);
// Adds "analyses" (the job's analyses, newest first) to a GET /api/v1/jobs/<id> reply.
Status AddJobAnalyses(Db& db, const std::string& job_id, nlohmann::json* job);
// Fleet workflow characterisation over analyses received in [since, until): GPU-hour-weighted
// shares, the most frequent insights and the jobs with the most to gain (docs/fleet.md).
StatusOr<nlohmann::json> QueryWorkflows(Db& db, int64_t since_ns, int64_t until_ns, int64_t limit);

}  // namespace vigil
