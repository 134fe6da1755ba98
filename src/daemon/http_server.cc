// SPDX-License-Identifier: Apache-2.0
#include "daemon/http_server.h"

#include <exception>
#include <utility>

#include <httplib.h>

#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "daemon/api_time.h"
#include "daemon/landing_page.h"

namespace vigil {
namespace {

constexpr char kJson[] = "application/json";
constexpr char kPromText[] = "text/plain; version=0.0.4; charset=utf-8";

void ReplyJson(httplib::Response& res, int code, const nlohmann::json& body) {
  res.status = code;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), kJson);
}

void ReplyError(httplib::Response& res, int code, const std::string& message) {
  ReplyJson(res, code, nlohmann::json{{"error", message}});
}

// 400 for a bad request, 500 for anything else the daemon could not answer.
void ReplyStatus(httplib::Response& res, const Status& s) {
  ReplyError(res, s.code() == StatusCode::kInvalidArgument ? 400 : 500, s.message());
}

std::string Param(const httplib::Request& req, const char* name) {
  return req.has_param(name) ? req.get_param_value(name) : std::string();
}

// Every endpoint is a GET: any other method, any body (Content-Length > 0; Transfer-Encoding is
// refused by the httpd layer) and any Content-Encoding are refused before a byte is read.
bool CheckHead(httplib::Request& req, httplib::Response& res) {
  if (req.method != "GET" && req.method != "HEAD") {
    res.set_header("Allow", "GET, HEAD");
    SetJsonError(res, 405, "only GET is served");
    return false;
  }
  return CheckBody(req, res, BodyRule::kNone);
}

}  // namespace

HttpServer::HttpServer(HttpServerOptions options, HttpApi api)
    : options_(std::move(options)), api_(std::move(api)) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::AddRoutes() {
  server_->Get("/", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(LandingPageHtml(api_.host_name), "text/html; charset=utf-8");
  });
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(api_.metrics_text(), kPromText);
  });
  server_->Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    Status s = api_.health();
    res.status = s.ok() ? 200 : 503;
    res.set_content(s.ok() ? "ok\n" : s.message() + "\n", "text/plain; charset=utf-8");
  });
  server_->Get("/api/v1/status", [this](const httplib::Request&, httplib::Response& res) {
    ReplyJson(res, 200, api_.status());
  });
  server_->Get("/api/v1/profiles", [this](const httplib::Request&, httplib::Response& res) {
    if (!api_.profiles) {
      ReplyError(res, 404, "continuous profiling is off (vigild --profile.continuous)");
      return;
    }
    ReplyJson(res, 200, api_.profiles());
  });
  server_->Get(
      R"(/api/v1/profiles/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
        if (!api_.profile) {
          ReplyError(res, 404, "continuous profiling is off (vigild --profile.continuous)");
          return;
        }
        auto reply = api_.profile(req.matches[1].str(), Param(req, "format"));
        if (!reply.ok()) {
          ReplyError(res, reply.status().code() == StatusCode::kNotFound ? 404 : 400,
                     reply.status().message());
          return;
        }
        if (!reply->filename.empty()) {
          res.set_header("Content-Disposition", "attachment; filename=\"" + reply->filename + "\"");
        }
        res.set_content(std::move(reply->body), reply->content_type);
      });
  server_->Get("/api/v1/latest", [this](const httplib::Request& req, httplib::Response& res) {
    auto reply = api_.latest(Param(req, "selector"));
    if (!reply.ok()) {
      ReplyStatus(res, reply.status());
      return;
    }
    ReplyJson(res, 200, *reply);
  });
  server_->Get("/api/v1/range", [this](const httplib::Request& req, httplib::Response& res) {
    const int64_t now = UnixNanos();
    auto end = ParseApiTime(Param(req, "end"), now);
    if (!end.ok()) {
      ReplyStatus(res, end.status());
      return;
    }
    StatusOr<int64_t> start = *end - options_.default_range_ns;
    if (req.has_param("start")) {
      start = ParseApiTime(Param(req, "start"), now);
    }
    if (!start.ok()) {
      ReplyStatus(res, start.status());
      return;
    }
    auto step = ParseApiStep(Param(req, "step"));
    if (!step.ok()) {
      ReplyStatus(res, step.status());
      return;
    }
    if (*start > *end) {
      ReplyError(res, 400, "start is after end");
      return;
    }
    if (Status work = CheckRangeWork(*start, *end, *step); !work.ok()) {
      ReplyStatus(res, work);
      return;
    }
    auto reply = api_.range(Param(req, "selector"), *start, *end, *step);
    if (!reply.ok()) {
      ReplyStatus(res, reply.status());
      return;
    }
    ReplyJson(res, 200, *reply);
  });
  server_->set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 404 && res.body.empty()) {  // Routes' own 404s keep their message.
      ReplyError(res, 404, "no such endpoint: " + SanitizeForLog(req.path));
    }
  });
  server_->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        ReplyError(res, 500, "internal error");
      });
}

Status HttpServer::Start() {
  server_ = std::make_unique<GuardedServer>(options_.limits, CheckHead);
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
