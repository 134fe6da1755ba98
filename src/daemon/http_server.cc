// SPDX-License-Identifier: Apache-2.0
#include "daemon/http_server.h"

#include <utility>

#include "base/time_util.h"
#include "daemon/api_time.h"
#include "daemon/landing_page.h"

namespace vigil {
namespace {

constexpr char kJson[] = "application/json";
constexpr char kPromText[] = "text/plain; version=0.0.4; charset=utf-8";

void ReplyJson(GetReply& res, int code, const nlohmann::json& body) {
  res.status = code;
  res.content_type = kJson;
  res.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// 400 for a bad request, 500 for anything else the daemon could not answer.
void ReplyStatus(GetReply& res, const Status& s) {
  SetJsonError(res, s.code() == StatusCode::kInvalidArgument ? 400 : 500, s.message());
}

}  // namespace

HttpServer::HttpServer(HttpServerOptions options, HttpApi api)
    : options_(std::move(options)), api_(std::move(api)) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::AddRoutes() {
  server_->Route("/", [this](const GetRequest&, GetReply& res) {
    res.content_type = "text/html; charset=utf-8";
    res.body = LandingPageHtml(api_.host_name);
  });
  server_->Route("/metrics", [this](const GetRequest&, GetReply& res) {
    res.content_type = kPromText;
    res.body = api_.metrics_text();
  });
  server_->Route("/healthz", [this](const GetRequest&, GetReply& res) {
    Status s = api_.health();
    res.status = s.ok() ? 200 : 503;
    res.body = s.ok() ? "ok\n" : s.message() + "\n";
  });
  server_->Route("/api/v1/status",
                 [this](const GetRequest&, GetReply& res) { ReplyJson(res, 200, api_.status()); });
  server_->Route("/api/v1/profiles", [this](const GetRequest&, GetReply& res) {
    if (!api_.profiles) {
      SetJsonError(res, 404, "continuous profiling is off (vigild --profile.continuous)");
      return;
    }
    ReplyJson(res, 200, api_.profiles());
  });
  server_->RoutePrefix("/api/v1/profiles/", [this](const GetRequest& req, GetReply& res) {
    if (!api_.profile) {
      SetJsonError(res, 404, "continuous profiling is off (vigild --profile.continuous)");
      return;
    }
    auto reply = api_.profile(req.rest, req.Param("format"));
    if (!reply.ok()) {
      SetJsonError(res, reply.status().code() == StatusCode::kNotFound ? 404 : 400,
                   reply.status().message());
      return;
    }
    if (!reply->filename.empty()) {
      res.headers.emplace_back("Content-Disposition",
                               "attachment; filename=\"" + reply->filename + "\"");
    }
    res.content_type = reply->content_type;
    res.body = std::move(reply->body);
  });
  server_->Route("/api/v1/latest", [this](const GetRequest& req, GetReply& res) {
    auto reply = api_.latest(req.Param("selector"));
    if (!reply.ok()) {
      ReplyStatus(res, reply.status());
      return;
    }
    ReplyJson(res, 200, *reply);
  });
  server_->Route("/api/v1/range", [this](const GetRequest& req, GetReply& res) {
    const int64_t now = UnixNanos();
    auto end = ParseApiTime(req.Param("end"), now);
    if (!end.ok()) {
      ReplyStatus(res, end.status());
      return;
    }
    StatusOr<int64_t> start = *end - options_.default_range_ns;
    if (req.HasParam("start")) {
      start = ParseApiTime(req.Param("start"), now);
    }
    if (!start.ok()) {
      ReplyStatus(res, start.status());
      return;
    }
    auto step = ParseApiStep(req.Param("step"));
    if (!step.ok()) {
      ReplyStatus(res, step.status());
      return;
    }
    if (*start > *end) {
      SetJsonError(res, 400, "start is after end");
      return;
    }
    if (Status work = CheckRangeWork(*start, *end, *step); !work.ok()) {
      ReplyStatus(res, work);
      return;
    }
    auto reply = api_.range(req.Param("selector"), *start, *end, *step);
    if (!reply.ok()) {
      ReplyStatus(res, reply.status());
      return;
    }
    ReplyJson(res, 200, *reply);
  });
}

Status HttpServer::Start() {
  server_ = std::make_unique<GetServer>(options_.limits);
  AddRoutes();
  StatusOr<int> port = server_->Start(options_.host, options_.port);
  if (!port.ok()) {
    server_.reset();
    return port.status().WithContext("http");
  }
  port_ = *port;
  return OkStatus();
}

void HttpServer::Stop() {
  if (server_) {
    server_->Stop();
  }
  server_.reset();
}

}  // namespace vigil
