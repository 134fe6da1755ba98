// SPDX-License-Identifier: Apache-2.0
#include "daemon/http_server.h"

#include <sys/socket.h>

#include <chrono>
#include <exception>
#include <utility>

#include <httplib.h>

#include "base/listen_socket.h"
#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "daemon/api_time.h"

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

}  // namespace

HttpServer::HttpServer(HttpServerOptions options, HttpApi api)
    : options_(std::move(options)), api_(std::move(api)) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::AddRoutes() {
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
    auto reply = api_.range(Param(req, "selector"), *start, *end, *step);
    if (!reply.ok()) {
      ReplyStatus(res, reply.status());
      return;
    }
    ReplyJson(res, 200, *reply);
  });
  server_->set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 404) {
      ReplyError(res, 404, "no such endpoint: " + SanitizeForLog(req.path));
    }
  });
  server_->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        ReplyError(res, 500, "internal error");
      });
}

Status HttpServer::Start() {
  server_ = std::make_unique<httplib::Server>();
  const size_t threads = options_.threads == 0 ? 1 : options_.threads;
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_read_timeout(5, 0);
  server_->set_write_timeout(5, 0);
  server_->set_keep_alive_timeout(5);
  server_->set_payload_max_length(64 << 10);
  // SO_REUSEADDR only (a second daemon on the port fails to start), and a real backlog.
  ListenSocket listen_socket;
  server_->set_socket_options(listen_socket.Options());
  AddRoutes();
  if (options_.port == 0) {
    port_ = server_->bind_to_any_port(options_.host);
  } else {
    port_ = server_->bind_to_port(options_.host, options_.port) ? options_.port : -1;
  }
  if (port_ <= 0) {
    port_ = -1;
    server_.reset();
    return UnavailableError("http: cannot listen on " + options_.host + ":" +
                            std::to_string(options_.port));
  }
  listen_socket.RaiseBacklog();
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() is a no-op until the listen loop runs, so wait for it (bounded) before returning.
  const int64_t deadline = MonotonicNanos() + 2 * kNanosPerSecond;
  while (!server_->is_running() && MonotonicNanos() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return OkStatus();
}

void HttpServer::Stop() {
  if (server_) {
    server_->stop();
  }
  if (thread_.joinable()) {
    thread_.join();
  }
  server_.reset();
}

}  // namespace vigil
