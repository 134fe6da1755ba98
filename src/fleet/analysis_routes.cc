// SPDX-License-Identifier: Apache-2.0
#include "fleet/analysis_routes.h"

#include <algorithm>
#include <string>
#include <string_view>

#include <httplib.h>

#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "fleet/analysis_store.h"
#include "fleet/http_reply.h"
#include "fleet/ingest_batch.h"
#include "fleet/ledger_host_jobs.h"

namespace vigil {
namespace {

using nlohmann::json;

constexpr int64_t kDay = 86400LL * 1000000000;

std::string Param(const httplib::Request& req, const char* name) {
  return req.has_param(name) ? req.get_param_value(name) : "";
}

// Who may store an analysis of a job: an operator (any job, any host or none), or a host's
// token naming that host, for a job the host reported (ledger_host_jobs.h). Without a token
// file every loopback client is an operator, as for every other route. Replies the refusal.
bool Authorize(const httplib::Request& req, httplib::Response& res, LedgerStore& store,
               const RequestGuard& guard, const AnalysisUpload& upload) {
  httplib::Response scratch;
  if (guard(req, scratch, kOperatorRole)) {
    if (upload.job_id.empty()) {
      ReplyError(res, 400, "job_id: required (POST /api/v1/analyses?job_id=J)");
      return false;
    }
    return true;
  }
  if (upload.host.empty()) {
    if (scratch.status == 403) {
      ReplyError(res, 403,
                 std::string("an analysis without host= needs an operator token (a line \"") +
                     kOperatorRole +
                     " TOKEN\" in vigil-fleet's --token-file); a host's token uploads with "
                     "host=HOST, for the jobs that host reported");
    } else {
      res.status = scratch.status;  // No or an unknown token: the guard's own reply.
      res.set_content(scratch.body, "application/json");
    }
    return false;
  }
  if (!guard(req, res, upload.host)) return false;
  if (upload.job_id.empty()) {
    ReplyError(res, 400, "job_id: required (POST /api/v1/analyses?job_id=J)");
    return false;
  }
  if (Status s = CheckJobOnHost(store, upload.host, upload.job_id); !s.ok()) {
    VIGIL_LOG_EVERY_N_SEC(WARN, 10, "analysis upload refused: host={} job={} err={}",
                          SanitizeForLog(upload.host, 64), SanitizeForLog(upload.job_id, 64),
                          s.message());
    ReplyError(res, HttpCode(s), s.message());
    return false;
  }
  return true;
}

void HandleUpload(const httplib::Request& req, httplib::Response& res, LedgerStore* store,
                  const RequestGuard& guard, size_t max_bytes) {
  AnalysisUpload upload{.job_id = Param(req, "job_id"),
                        .host = Param(req, "host"),
                        .source = kAnalysisSourceUpload,
                        .reason = Param(req, "reason"),
                        .trace_path = Param(req, "trace_path"),
                        .received_ns = UnixNanos(),
                        .report_json = ""};
  if (!Authorize(req, res, *store, guard, upload)) return;
  std::string_view body = req.body;
  // "Content-Encoding: gzip" reaches here as sent (FleetServer::CheckHead): inflated, capped.
  if (body.size() >= 2 && body[0] == '\x1f' && body[1] == '\x8b') {
    StatusOr<std::string> out = Gunzip(body, max_bytes);
    if (!out.ok()) {
      ReplyError(res, HttpCode(out.status()), out.status().message());
      return;
    }
    upload.report_json = std::move(*out);
  } else {
    upload.report_json.assign(body);
  }
  if (upload.report_json.size() > max_bytes) {
    ReplyError(res, 413, "report larger than " + std::to_string(max_bytes) + " bytes");
    return;
  }
  StatusOr<int64_t> id = StoreAnalysis(*store, upload);
  if (!id.ok()) {
    const int code = HttpCode(id.status());
    if (code >= 500) {
      VIGIL_LOG_EVERY_N_SEC(WARN, 10, "analysis upload failed: job={} err={}", upload.job_id,
                            id.status().ToString());
    }
    // The report was valid; the ledger could not take it: the sender may retry.
    ReplyError(res, code >= 500 ? 503 : code, id.status().message());
    return;
  }
  ReplyJson(res, 200, json{{"id", *id}, {"job_id", upload.job_id}});
}

}  // namespace

void RegisterAnalysisRoutes(httplib::Server& server, LedgerStore* store, RequestGuard guard,
                            size_t max_report_bytes) {
  const size_t max_bytes = std::min(max_report_bytes, kMaxAnalysisReportBytes);
  server.Post("/api/v1/analyses",
              [store, guard, max_bytes](const httplib::Request& req, httplib::Response& res) {
                HandleUpload(req, res, store, guard, max_bytes);
              });
  server.Get("/api/v1/analyses",
             [store, guard](const httplib::Request& req, httplib::Response& res) {
               if (!guard(req, res, "")) return;
               const int64_t now = UnixNanos();
               AnalysisListQuery q;
               q.job_id = Param(req, "job_id");
               q.limit = LimitParam(req);
               StatusOr<int64_t> since = TimeParam(req, "since", now, 0);
               StatusOr<int64_t> until = TimeParam(req, "until", now, INT64_MAX);
               if (!since.ok() || !until.ok()) {
                 ReplyError(res, 400, (since.ok() ? until.status() : since.status()).message());
                 return;
               }
               q.since_ns = *since;
               q.until_ns = *until;
               Reply(res, store->Read<json>([&](Db& db) { return QueryAnalyses(db, q); }));
             });
  server.Get(R"(/api/v1/analyses/(\d+))",
             [store, guard](const httplib::Request& req, httplib::Response& res) {
               if (!guard(req, res, "")) return;
               const std::optional<int64_t> id = ParseInt64(req.matches[1].str());
               if (!id) {
                 ReplyError(res, 400, "analysis id: want a number");
                 return;
               }
               Reply(res, store->Read<json>([&](Db& db) { return QueryAnalysis(db, *id); }));
             });
  server.Get(
      "/api/v1/workflows", [store, guard](const httplib::Request& req, httplib::Response& res) {
        if (!guard(req, res, "")) return;
        const int64_t now = UnixNanos();
        StatusOr<int64_t> since = TimeParam(req, "since", now, now - 7 * kDay);
        StatusOr<int64_t> until = TimeParam(req, "until", now, now + 1);
        if (!since.ok() || !until.ok()) {
          ReplyError(res, 400, (since.ok() ? until.status() : since.status()).message());
          return;
        }
        const int64_t limit = req.has_param("limit") ? LimitParam(req) : 20;
        Reply(res,
              store->Read<json>([&](Db& db) { return QueryWorkflows(db, *since, *until, limit); }));
      });
}

}  // namespace vigil
