// SPDX-License-Identifier: Apache-2.0
// vigild's HTTP endpoint: GET /metrics (Prometheus text 0.0.4), /api/v1/latest, /api/v1/range,
// /api/v1/status, /api/v1/profiles[/<job>], /healthz and a landing page at /
// (docs/protocols.md "HTTP API"). It owns
// routing, parameter parsing, content types and error replies; what each endpoint answers comes
// from the HttpApi callbacks the daemon supplies, so this file knows nothing of collectors or the
// store. It serves GET only and refuses every request body and Content-Encoding before reading any
// of it; parsing, connections, deadlines and per-client limits are the httpd layer's
// (httpd/get_server.h, which maps no cpp-httplib or OpenSSL). Callbacks run on connection threads
// and must be thread-safe. Start/Stop from one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "httpd/get_server.h"

namespace vigil {

// A reply body other than JSON (a profile as folded text or gzipped pprof).
struct HttpContent {
  std::string content_type;
  std::string body;
  std::string filename;  // Sent as Content-Disposition: attachment when not empty.
};

struct HttpApi {
  std::string host_name;  // Named on the landing page at /.
  // Prometheus text exposition of the newest value of every series.
  std::function<std::string()> metrics_text;
  // {"series":[...]} for a selector (InvalidArgument for a bad selector).
  std::function<StatusOr<nlohmann::json>(const std::string& selector)> latest;
  std::function<StatusOr<nlohmann::json>(const std::string& selector, int64_t start_ns,
                                         int64_t end_ns, int64_t step_ns)>
      range;
  std::function<nlohmann::json()> status;
  // OK: /healthz answers 200 "ok"; otherwise 503 with the message.
  std::function<Status()> health;
  // GET /api/v1/profiles: the jobs continuous profiling holds. Null when it is off (404).
  std::function<nlohmann::json()> profiles;
  // GET /api/v1/profiles/<job>?format=json|folded|pprof: NotFound answers 404, InvalidArgument 400.
  std::function<StatusOr<HttpContent>(const std::string& job, const std::string& format)> profile;
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 9479;  // 0 = any free port (see port()).
  // A scrape or query is one small GET; no body is ever read (max_body_bytes stays 0).
  HttpLimits limits = {.max_head_bytes = 16 << 10,
                       .max_body_bytes = 0,
                       .request_deadline_ms = 10'000,
                       .reply_deadline_ms = 60'000,
                       .max_connections = 64,
                       .max_connections_per_client = 8};
  int64_t default_range_ns = 300LL * 1000 * 1000 * 1000;  // start defaults to end - 5m.
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, HttpApi api);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts serving; Unavailable when the address cannot be bound.
  Status Start();
  void Stop();
  // The bound port (useful with port 0); -1 before Start().
  int port() const { return port_; }

 private:
  void AddRoutes();

  HttpServerOptions options_;
  HttpApi api_;
  std::unique_ptr<GetServer> server_;
  int port_ = -1;
};

}  // namespace vigil
