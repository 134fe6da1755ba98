// SPDX-License-Identifier: Apache-2.0
#include "fleet/cpu_profile_routes.h"

#include <algorithm>
#include <string>
#include <string_view>

#include <httplib.h>

#include "base/gzip.h"
#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "fleet/cpu_profile_store.h"
#include "fleet/http_reply.h"
#include "fleet/ledger_host_jobs.h"
#include "profile/flamegraph_html.h"
#include "profile/folded_output.h"
#include "profile/hot_functions.h"
#include "profile/pprof_output.h"

namespace vigil {
namespace {

using nlohmann::json;

std::string Param(const httplib::Request& req, const char* name) {
  return req.has_param(name) ? req.get_param_value(name) : "";
}

int CodeOf(const Status& s) { return s.code() == StatusCode::kAlreadyExists ? 409 : HttpCode(s); }

// Who may store a profile of a job: an operator (any job and host), or the token of the host
// the upload names, for a job that host reported. Replies the refusal.
bool Authorize(const httplib::Request& req, httplib::Response& res, LedgerStore& store,
               const RequestGuard& guard, const CpuProfileUpload& upload) {
  if (upload.host.empty() || upload.job_id.empty()) {
    ReplyError(res, 400, "job_id and host: required (POST /api/v1/cpu-profiles?job_id=J&host=H)");
    return false;
  }
  httplib::Response scratch;
  if (guard(req, scratch, kOperatorRole)) return true;
  if (!guard(req, res, upload.host)) return false;
  if (Status s = CheckJobOnHost(store, upload.host, upload.job_id); !s.ok()) {
    VIGIL_LOG_EVERY_N_SEC(WARN, 10, "cpu profile upload refused: host={} job={} err={}",
                          SanitizeForLog(upload.host, 64), SanitizeForLog(upload.job_id, 64),
                          s.message());
    ReplyError(res, HttpCode(s), s.message());
    return false;
  }
  return true;
}

StatusOr<int64_t> IntParam(const httplib::Request& req, const char* name) {
  const std::optional<int64_t> v = ParseInt64(Param(req, name));
  if (!v) return InvalidArgumentError(std::string(name) + ": want an integer");
  return *v;
}

void HandleUpload(const httplib::Request& req, httplib::Response& res, LedgerStore* store,
                  const RequestGuard& guard, size_t keep) {
  CpuProfileUpload upload;
  upload.job_id = Param(req, "job_id");
  upload.host = Param(req, "host");
  if (!Authorize(req, res, *store, guard, upload)) return;
  StatusOr<int64_t> start = IntParam(req, "start_ns"), end = IntParam(req, "end_ns"),
                    hz = IntParam(req, "frequency_hz");
  for (const StatusOr<int64_t>* v : {&start, &end, &hz}) {
    if (!v->ok()) {
      ReplyError(res, 400, v->status().message());
      return;
    }
  }
  upload.start_ns = *start;
  upload.end_ns = *end;
  upload.frequency_hz = static_cast<int>(std::clamp<int64_t>(*hz, -1, 1 << 20));
  upload.received_ns = UnixNanos();
  if (req.body.size() > kMaxCpuProfileUploadBytes) {
    ReplyError(res, 413,
               "profile larger than " + std::to_string(kMaxCpuProfileUploadBytes) + " bytes");
    return;
  }
  // "Content-Encoding: gzip" reaches here as sent (FleetServer::CheckHead): inflated, capped.
  if (IsGzip(req.body)) {
    StatusOr<std::string> out = Gunzip(req.body, kMaxCpuProfileFoldedBytes);
    if (!out.ok()) {
      ReplyError(res, HttpCode(out.status()), out.status().message());
      return;
    }
    upload.folded = std::move(*out);
  } else {
    upload.folded = req.body;
  }
  StatusOr<CpuProfileStored> stored = StoreCpuProfile(*store, upload, keep);
  if (!stored.ok()) {
    const int code = CodeOf(stored.status());
    if (code >= 500) {
      VIGIL_LOG_EVERY_N_SEC(WARN, 10, "cpu profile upload failed: job={} err={}",
                            SanitizeForLog(upload.job_id, 64), stored.status().ToString());
    }
    // The profile was valid; the ledger could not take it: the sender may retry.
    ReplyError(res, code >= 500 ? 503 : code, stored.status().message());
    return;
  }
  ReplyJson(res, 200,
            json{{"id", stored->id},
                 {"duplicate", stored->duplicate},
                 {"samples", stored->samples},
                 {"stacks", stored->stacks},
                 {"dropped", stored->dropped}});
}

// The profile in the asked format; json is `meta` plus the hottest functions.
void Render(const httplib::Request& req, httplib::Response& res, const CpuProfileRead& read,
            const std::string& title) {
  const std::string format = Param(req, "format");
  if (format == "folded") {
    res.set_content(WriteFolded(read.profile), "text/plain; charset=utf-8");
  } else if (format == "pprof") {
    res.set_header("Content-Disposition", "attachment; filename=\"profile.pb.gz\"");
    res.set_content(WritePprof(read.profile), "application/octet-stream");
  } else if (format == "html") {
    res.set_content(WriteFlameGraphHtml(read.profile, title), "text/html; charset=utf-8");
  } else if (format.empty() || format == "json") {
    const std::optional<int64_t> n = ParseInt64(Param(req, "top"));
    const size_t limit = n && *n > 0 ? static_cast<size_t>(std::min<int64_t>(*n, 1000)) : 30;
    json top = json::array();
    for (const HotFunction& f : HotFunctions(read.profile, limit)) {
      top.push_back(
          json{{"function", f.label}, {"module", f.module}, {"self", f.self}, {"total", f.total}});
    }
    json out = read.meta;
    out["frequency_hz"] = read.profile.info().frequency_hz;
    out["top"] = std::move(top);
    res.set_content(out.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
  } else {
    ReplyError(res, 400,
               "format must be json, folded, pprof or html, not " + SanitizeForLog(format, 40));
  }
}

// since/until (default: the last 7 days) and host of a read.
bool ReadQuery(const httplib::Request& req, httplib::Response& res, CpuProfileQuery* q) {
  const int64_t now = UnixNanos();
  StatusOr<int64_t> since = TimeParam(req, "since", now, now - 7 * 86400 * kNanosPerSecond);
  StatusOr<int64_t> until = TimeParam(req, "until", now, INT64_MAX);
  if (!since.ok() || !until.ok()) {
    ReplyError(res, 400, (since.ok() ? until.status() : since.status()).message());
    return false;
  }
  q->since_ns = *since;
  q->until_ns = *until;
  q->host = Param(req, "host");
  q->limit = LimitParam(req);
  return true;
}

}  // namespace

void RegisterCpuProfileRoutes(httplib::Server& server, LedgerStore* store, RequestGuard guard,
                              size_t keep_per_job_host) {
  server.Post("/api/v1/cpu-profiles", [store, guard, keep_per_job_host](const httplib::Request& req,
                                                                        httplib::Response& res) {
    HandleUpload(req, res, store, guard, keep_per_job_host);
  });
  server.Get("/api/v1/cpu-profiles",
             [store, guard](const httplib::Request& req, httplib::Response& res) {
               if (!guard(req, res, "")) return;
               CpuProfileQuery q;
               q.job_id = Param(req, "job_id");
               if (q.job_id.empty()) {
                 ReplyError(res, 400, "job_id: required (GET /api/v1/cpu-profiles?job_id=J)");
                 return;
               }
               if (!ReadQuery(req, res, &q)) return;
               Reply(res, store->Read<json>([&](Db& db) { return QueryCpuProfiles(db, q); }));
             });
  server.Get(R"(/api/v1/cpu-profiles/(\d+))",
             [store, guard](const httplib::Request& req, httplib::Response& res) {
               if (!guard(req, res, "")) return;
               const std::optional<int64_t> id = ParseInt64(req.matches[1].str());
               if (!id) {
                 ReplyError(res, 400, "profile id: want a number");
                 return;
               }
               StatusOr<CpuProfileRead> read =
                   store->Read<CpuProfileRead>([&](Db& db) { return LoadCpuProfile(db, *id); });
               if (!read.ok()) {
                 ReplyError(res, CodeOf(read.status()), read.status().message());
                 return;
               }
               Render(req, res, *read,
                      "vigil-fleet: job " + read->meta["job_id"].get<std::string>() + " on " +
                          read->meta["host"].get<std::string>() + ", " +
                          read->meta["start"].get<std::string>());
             });
  server.Get(R"(/api/v1/jobs/([^/]+)/cpu-profile)", [store, guard](const httplib::Request& req,
                                                                   httplib::Response& res) {
    if (!guard(req, res, "")) return;
    CpuProfileQuery q;
    q.job_id = req.matches[1].str();
    if (!ReadQuery(req, res, &q)) return;
    const bool by_host = Param(req, "by_host") == "1";
    StatusOr<CpuProfileRead> read =
        store->Read<CpuProfileRead>([&](Db& db) { return MergeCpuProfiles(db, q, by_host); });
    if (!read.ok()) {
      ReplyError(res, CodeOf(read.status()), read.status().message());
      return;
    }
    const std::string format = Param(req, "format");
    if (read->meta["profiles"] == 0 && !format.empty() && format != "json") {
      ReplyError(res, 404,
                 "no CPU profile of job " + SanitizeForLog(q.job_id, 200) + " in this window");
      return;
    }
    const size_t hosts = read->meta["hosts"].size();
    const std::string span = hosts == 0 ? std::string("no profile")
                                        : read->meta["start"].get<std::string>() + " to " +
                                              read->meta["end"].get<std::string>();
    Render(req, res, *read,
           "vigil-fleet: job " + q.job_id + ", " + std::to_string(hosts) + " host" +
               (hosts == 1 ? "" : "s") + ", " + span);
  });
}

}  // namespace vigil
