// SPDX-License-Identifier: Apache-2.0
#include "fleet/profiling_routes.h"

#include <optional>

#include <httplib.h>

#include "base/strings.h"
#include "fleet/http_reply.h"
#include "fleet/profiling_service.h"
#include "fleet/profiling_triggers.h"

namespace vigil {
namespace {

using nlohmann::json;

int ProfilingCode(const Status& s) {
  return s.code() == StatusCode::kFailedPrecondition ? 409 : HttpCode(s);
}

bool CheckOn(ProfilingService* service, httplib::Response& res) {
  if (service == nullptr || service->mode() == ProfilingMode::kOff) {
    ReplyError(res, 404, "profiling is off (vigil-fleet serve --profiling=manual|auto)");
    return false;
  }
  return true;
}

StatusOr<ProfilingRequestSpec> ParseSpec(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError(
        "want a JSON object {\"job_id\", \"duration_ms\"|\"iterations\", "
        "\"reason\"}");
  }
  ProfilingRequestSpec spec;
  auto job = j.find("job_id");
  if (job != j.end() && job->is_number_integer()) {
    spec.job_id = std::to_string(job->get<int64_t>());
  } else if (job != j.end() && job->is_string()) {
    spec.job_id = job->get<std::string>();
  } else {
    return InvalidArgumentError("job_id (string) is required");
  }
  for (auto [key, out] :
       {std::pair{"duration_ms", &spec.duration_ms}, std::pair{"iterations", &spec.iterations}}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() <= 0) {
      return InvalidArgumentError(std::string(key) + " must be a positive integer");
    }
    *out = it->get<int64_t>();
  }
  if (spec.duration_ms > 0 && spec.iterations > 0) {
    return InvalidArgumentError("give duration_ms or iterations, not both");
  }
  if (auto it = j.find("reason"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return InvalidArgumentError("reason must be a string");
    spec.reason = "manual: " + it->get<std::string>();
  }
  return spec;
}

}  // namespace

void RegisterProfilingRoutes(httplib::Server& s, ProfilingService* service, RequestGuard guard) {
  s.Post("/api/v1/profiling",
         [service, guard](const httplib::Request& req, httplib::Response& res) {
           if (!guard(req, res, kOperatorRole) || !CheckOn(service, res)) return;
           StatusOr<ProfilingRequestSpec> spec = ParseSpec(req.body);
           if (!spec.ok()) {
             ReplyError(res, 400, spec.status().message());
             return;
           }
           StatusOr<ProfilingRequest> r = service->Create(*spec);
           if (!r.ok()) {
             ReplyError(res, ProfilingCode(r.status()), r.status().message());
             return;
           }
           ReplyJson(res, 202, ProfilingRequestToJson(*r));
         });
  s.Get("/api/v1/profiling", [service, guard](const httplib::Request& req, httplib::Response& res) {
    if (!guard(req, res, "") || !CheckOn(service, res)) return;
    const std::string job = req.has_param("job_id") ? req.get_param_value("job_id") : "";
    json list = json::array();
    for (const ProfilingRequest& r : service->List(job, static_cast<size_t>(LimitParam(req)))) {
      list.push_back(ProfilingRequestToJson(r));
    }
    StatusOr<json> decisions = service->store()->Read<json>(
        [&](Db& db) { return QueryProfilingDecisions(db, LimitParam(req)); });
    if (!decisions.ok()) {
      ReplyError(res, 500, decisions.status().message());
      return;
    }
    const ProfilingMode mode = service->mode();
    ReplyJson(res, 200,
              json{{"mode", mode == ProfilingMode::kAuto ? "auto" : "manual"},
                   {"requests", std::move(list)},
                   {"decisions", (*decisions)["decisions"]}});
  });
  s.Get(R"(/api/v1/profiling/([A-Za-z0-9._-]+))",
        [service, guard](const httplib::Request& req, httplib::Response& res) {
          if (!guard(req, res, "") || !CheckOn(service, res)) return;
          StatusOr<ProfilingRequest> r = service->Get(req.matches[1]);
          if (!r.ok()) {
            ReplyError(res, ProfilingCode(r.status()), r.status().message());
            return;
          }
          ReplyJson(res, 200, ProfilingRequestToJson(*r));
        });
  s.Post("/api/v1/traces", [service, guard](const httplib::Request& req, httplib::Response& res) {
    const std::string host = req.has_param("host") ? req.get_param_value("host") : "";
    if (host.empty()) {
      ReplyError(res, 400, "host is required");
      return;
    }
    if (!guard(req, res, host) || !CheckOn(service, res)) return;
    const std::optional<int64_t> pid = ParseInt64(req.get_param_value("pid"));
    const std::optional<int64_t> rank = req.has_param("rank")
                                            ? ParseInt64(req.get_param_value("rank"))
                                            : std::optional<int64_t>(-1);
    const bool adopt = !req.has_param("request_id") && req.has_param("origin");
    if ((!req.has_param("request_id") && !adopt) || !pid || *pid <= 0 || *pid > 0x7fffffff ||
        !rank || *rank < -1 || *rank > 0x7fffffff) {
      ReplyError(res, 400,
                 "want ?request_id=R&host=H&pid=P[&rank=K][&job_id=J][&trace_id=T], or instead of "
                 "request_id: origin=O&expected=N&trace_id=T&job_id=J[&reason=W]");
      return;
    }
    std::string request_id = req.get_param_value("request_id");
    if (adopt) {
      const std::optional<int64_t> expected = ParseInt64(req.get_param_value("expected"));
      StatusOr<std::string> id = service->AdoptDaemonTrace(
          {host, req.get_param_value("trace_id"), req.get_param_value("job_id"),
           expected.value_or(0), req.get_param_value("origin"), req.get_param_value("reason")});
      if (!id.ok()) {
        ReplyError(res, ProfilingCode(id.status()), id.status().message());
        return;
      }
      request_id = *id;
    }
    StatusOr<ProfilingFile> f = service->AcceptUpload(request_id, host, static_cast<int32_t>(*pid),
                                                      static_cast<int32_t>(*rank),
                                                      req.get_param_value("trace_id"), req.body);
    if (!f.ok()) {
      ReplyError(res, ProfilingCode(f.status()), f.status().message());
      return;
    }
    ReplyJson(res, 201,
              json{{"request_id", request_id},
                   {"host", f->host},
                   {"pid", f->pid},
                   {"rank", f->rank},
                   {"bytes", f->bytes}});
  });
}

}  // namespace vigil
