// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_server.h"

#include <algorithm>
#include <string_view>

#include <httplib.h>

#include "base/file_util.h"
#include "base/gzip.h"
#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "fleet/analysis_routes.h"
#include "fleet/cpu_profile_routes.h"
#include "fleet/http_reply.h"
#include "fleet/ingest_batch.h"
#include "fleet/ledger_gpu_query.h"
#include "fleet/ledger_query.h"
#include "fleet/profiling_routes.h"
#include "fleet/web/web_assets.h"
#include "rpc/net_util.h"

namespace vigil {
namespace {

using nlohmann::json;

bool IsLoopback(const std::string& addr) {
  return addr == "127.0.0.1" || addr == "::1" || addr.rfind("127.", 0) == 0 ||
         addr == "::ffff:127.0.0.1";
}

}  // namespace

StatusOr<std::multimap<std::string, std::string>> ReadTokenFile(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, 1 << 20));
  std::multimap<std::string, std::string> tokens;
  std::string_view rest = text, line;
  while (NextLine(&rest, &line)) {
    line = Trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const std::vector<std::string_view> fields = SplitWhitespace(line);
    if (fields.size() != 2) {
      return InvalidArgumentError("token file " + path + ": want lines \"HOST TOKEN\"");
    }
    if (fields[0][0] == '@' && fields[0] != kOperatorRole) {
      return InvalidArgumentError("token file " + path + ": unknown role " +
                                  std::string(fields[0]) + " (roles: " + kOperatorRole + ")");
    }
    tokens.emplace(std::string(fields[0]), std::string(fields[1]));
  }
  if (tokens.empty()) {
    return InvalidArgumentError("token file " + path + ": no tokens");
  }
  return tokens;
}

FleetServer::FleetServer(FleetServerOptions options, LedgerStore* store)
    : options_(std::move(options)), store_(store) {}

FleetServer::~FleetServer() { Stop(); }

std::string FleetServer::Authorize(const httplib::Request& req, const std::string& host,
                                   int* code) const {
  if (tokens_.empty()) {
    if (IsLoopback(req.remote_addr)) return "";
    *code = 403;
    return "only loopback clients are served without a token file";
  }
  const std::string auth = req.get_header_value("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  *code = 401;
  if (auth.rfind(kBearer, 0) != 0) return "missing bearer token";
  const std::string token = auth.substr(kBearer.size());
  const bool operator_action = host == kOperatorRole;
  bool known = false;
  for (const auto& [h, t] : tokens_) {
    if (!ConstantTimeEquals(t, token)) continue;  // No timing hint of how much matched.
    known = true;
    if (operator_action ? h == kOperatorRole : host.empty() || h == host || h == "*") return "";
  }
  *code = 403;
  if (operator_action && known) {
    return std::string("this needs an operator token (a line \"") + kOperatorRole +
           " TOKEN\" in vigil-fleet's --token-file)";
  }
  return host.empty() || operator_action ? "bad token" : "bad token for host " + host;
}

RequestGuard FleetServer::guard() const {
  return [this](const httplib::Request& req, httplib::Response& res, const std::string& host) {
    int code = 0;
    if (std::string why = Authorize(req, host, &code); !why.empty()) {
      ReplyError(res, code, why);
      return false;
    }
    return true;
  };
}

void FleetServer::HandleIngest(const httplib::Request& req, httplib::Response& res) {
  std::string inflated;
  std::string_view body = req.body;
  // "Content-Encoding: gzip" reaches here as sent (CheckHead): inflated with a hard cap.
  if (IsGzip(body)) {
    StatusOr<std::string> out = Gunzip(body, options_.max_inflated_bytes);
    if (!out.ok()) {
      ReplyError(res, HttpCode(out.status()), out.status().message());
      return;
    }
    inflated = std::move(*out);
    body = inflated;
  }
  if (body.size() > options_.max_inflated_bytes) {
    ReplyError(res, 413, "batch larger than " + std::to_string(options_.max_inflated_bytes));
    return;
  }
  StatusOr<IngestBatch> batch = ParseIngestBatch(body);
  if (!batch.ok()) {
    ReplyError(res, 400, batch.status().message());
    return;
  }
  if (!guard()(req, res, batch->host)) return;
  StatusOr<IngestResult> result = store_->Ingest(*batch, UnixNanos());
  if (!result.ok()) {
    VIGIL_LOG_EVERY_N_SEC(WARN, 10, "ingest failed: host={} err={}", batch->host,
                          result.status().ToString());
    // The batch was valid; the ledger could not take it (disk full, locked): the sender retries.
    ReplyError(res, 503, result.status().message());
    return;
  }
  if (result->refused) {  // Over a per-host limit (ledger_limits.h): a resend is refused too.
    ReplyJson(res, 400,
              json{{"error", result->refused->message},
                   {"limit", result->refused->limit},
                   {"host", batch->host}});
    return;
  }
  ReplyJson(res, 200,
            json{{"accepted", !result->duplicate},
                 {"duplicate", result->duplicate},
                 {"samples", batch->samples.size()},
                 {"used", result->stats.used},
                 {"late", result->stats.late},
                 {"resets", result->stats.resets}});
}

// What a request may carry, judged from its head before any of the body is read: the token
// first (a known one, or loopback without a token file; the host a write claims is checked once
// its body is parsed), then the body rule of its route.
bool FleetServer::CheckHead(httplib::Request& req, httplib::Response& res) const {
  if (req.path.rfind("/api/v1/", 0) == 0) {
    int code = 0;
    if (std::string why = Authorize(req, "", &code); !why.empty()) {
      SetJsonError(res, code, why);
      return false;
    }
  }
  // httplib answers "Accept-Encoding: br" (every browser sends it) with brotli at quality 11:
  // ~25 s for a 4 MB JSON reply (a 30-day attribution by host). Offer it gzip only (~50 ms).
  auto it = req.headers.find("Accept-Encoding");
  if (it != req.headers.end() && it->second.find("br") != std::string::npos) {
    const bool gzip = it->second.find("gzip") != std::string::npos;
    req.headers.erase(it);
    req.set_header("Accept-Encoding", gzip ? "gzip" : "identity");
  }
  BodyRule rule = BodyRule::kNone;
  if (req.method == "POST") {
    // Daemons push gzip batches and the CLI gzip reports; traces are gzip files as such.
    const bool gzip = req.path == "/api/v1/ingest" || req.path == "/api/v1/analyses" ||
                      req.path == "/api/v1/cpu-profiles";
    rule = gzip ? BodyRule::kGzip : BodyRule::kIdentity;
  }
  return CheckBody(req, res, rule);
}

void FleetServer::Routes() {
  httplib::Server& s = *server_;
  s.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  s.Post("/api/v1/ingest",
         [this](const httplib::Request& req, httplib::Response& res) { HandleIngest(req, res); });
  // Every GET below: authorise, then read.
  auto get = [this](const char* pattern, auto fn) {
    server_->Get(pattern, [this, fn](const httplib::Request& req, httplib::Response& res) {
      if (!guard()(req, res, "")) return;
      const int64_t now = UnixNanos();
      StatusOr<int64_t> since = TimeParam(req, "since", now, now - 7 * 86400 * 1000000000LL);
      StatusOr<int64_t> until = TimeParam(req, "until", now, now);
      if (!since.ok() || !until.ok()) {
        ReplyError(res, 400, (since.ok() ? until.status() : since.status()).message());
        return;
      }
      Reply(res, store_->Read<json>([&](Db& db) { return fn(db, req, now, *since, *until); }));
    });
  };
  const double price = options_.price_per_gpu_hour;
  get("/api/v1/attribution",
      [price](Db& db, const httplib::Request& req, int64_t, int64_t since,
              int64_t until) -> StatusOr<json> {
        AttributionQuery q;
        q.by = req.has_param("by") ? req.get_param_value("by") : "team";
        q.since_ns = since;
        q.until_ns = until;
        q.price_per_gpu_hour = price;
        if (req.has_param("bucket") && !req.get_param_value("bucket").empty()) {
          StatusOr<int64_t> b = ParseDuration(req.get_param_value("bucket"));
          if (!b.ok()) return InvalidArgumentError("bucket: want a duration like 1h or 1d");
          q.bucket_s = *b / 1000000000;
        }
        return QueryAttribution(db, q);
      });
  get("/api/v1/jobs",
      [price](Db& db, const httplib::Request& req, int64_t, int64_t since, int64_t until) {
        return QueryJobs(db, since, until, price, LimitParam(req));
      });
  get(R"(/api/v1/jobs/([^/]+))", [price](Db& db, const httplib::Request& req, int64_t, int64_t,
                                         int64_t) { return QueryJob(db, req.matches[1], price); });
  get("/api/v1/hosts", [](Db& db, const httplib::Request&, int64_t now, int64_t, int64_t) {
    return QueryHosts(db, now);
  });
  // One host's GPUs (or one GPU) over an exact window, in buckets of ?step= (ledger_gpu_query.h).
  auto gpu_series = [](const httplib::Request& req, int64_t since, int64_t until,
                       std::string uuid) -> StatusOr<GpuSeriesQuery> {
    GpuSeriesQuery q{req.matches[1], std::move(uuid), since, until, 0};
    if (req.has_param("step") && !req.get_param_value("step").empty()) {
      StatusOr<int64_t> step = ParseDuration(req.get_param_value("step"));
      if (!step.ok() || *step <= 0) return InvalidArgumentError("step: want a duration like 5m");
      q.step_s = *step / 1000000000;
    }
    return q;
  };
  get(R"(/api/v1/hosts/([^/]+))",
      [gpu_series](Db& db, const httplib::Request& req, int64_t, int64_t since,
                   int64_t until) -> StatusOr<json> {
        VIGIL_ASSIGN_OR_RETURN(GpuSeriesQuery q, gpu_series(req, since, until, ""));
        return QueryGpuSeries(db, q);
      });
  // A GPU's UUID may hold slashes (old MIG UUIDs "MIG-GPU-<uuid>/<gi>/<ci>"): the rest of the
  // path, which the server has already decoded, is the UUID.
  get(R"(/api/v1/hosts/([^/]+)/gpus/(.+))",
      [gpu_series](Db& db, const httplib::Request& req, int64_t, int64_t since,
                   int64_t until) -> StatusOr<json> {
        VIGIL_ASSIGN_OR_RETURN(GpuSeriesQuery q, gpu_series(req, since, until, req.matches[2]));
        return QueryGpuSeries(db, q);
      });
  get("/api/v1/idle-now", [](Db& db, const httplib::Request&, int64_t now, int64_t, int64_t) {
    return QueryIdleNow(db, now, 300LL * 1000000000);
  });
  get("/api/v1/top-wasters",
      [price](Db& db, const httplib::Request& req, int64_t, int64_t since, int64_t until) {
        return QueryTopWasters(db, since, until, price, LimitParam(req));
      });
  RegisterAnalysisRoutes(s, store_, guard(), options_.max_inflated_bytes);
  RegisterProfilingRoutes(s, options_.profiling, guard());
  RegisterCpuProfileRoutes(s, store_, guard(), options_.cpu_profiles_per_job_host);
  // The dashboard (fleet/web): static files embedded in the binary; the data comes from /api/v1.
  auto web = [](const httplib::Request& req, httplib::Response& res) {
    const WebAsset* asset = FindWebAsset(req.path);
    if (asset == nullptr) {
      ReplyError(res, 404, "not found");
      return;
    }
    const bool hashed = req.path.rfind("/assets/", 0) == 0;
    res.set_header("Cache-Control", hashed ? "public, max-age=31536000, immutable" : "no-cache");
    res.set_content(asset->body.data(), asset->body.size(), asset->content_type.data());
  };
  s.Get("/", web);
  s.Get(R"(/(index\.html|assets/[A-Za-z0-9._-]+))", web);
  s.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) {
      ReplyError(res, res.status, res.status == 413 ? "request body too large" : "not found");
    }
  });
}

Status FleetServer::Start() {
  if (!options_.token_file.empty()) {
    VIGIL_ASSIGN_OR_RETURN(tokens_, ReadTokenFile(options_.token_file));
  }
  if (options_.tls_cert_file.empty() != options_.tls_key_file.empty()) {
    return InvalidArgumentError("fleet http: TLS needs both a certificate and a key file");
  }
  for (const std::string* f : {&options_.tls_cert_file, &options_.tls_key_file}) {
    // OpenSSL reports only "invalid"; say which file is missing or unreadable.
    if (f->empty()) continue;
    VIGIL_RETURN_IF_ERROR(ReadSmallFile(*f, 1 << 20).status().WithContext("fleet http: TLS"));
  }
  // At least a second per MiB the body may have (a 64 MiB trace upload needs 1 MiB/s).
  const int64_t deadline_ms = std::max<int64_t>(
      options_.request_deadline_ms, static_cast<int64_t>(options_.max_body_bytes >> 20) * 1000);
  HttpLimits limits{.max_head_bytes = 32 << 10,
                    .max_body_bytes = options_.max_body_bytes,
                    .request_deadline_ms = deadline_ms,
                    .reply_deadline_ms = 120'000,
                    .max_connections = options_.max_connections,
                    .max_connections_per_client = options_.max_connections_per_client,
                    .tls_cert_file = options_.tls_cert_file,
                    .tls_key_file = options_.tls_key_file};
  server_ = std::make_unique<GuardedServer>(
      std::move(limits),
      [this](httplib::Request& req, httplib::Response& res) { return CheckHead(req, res); });
  Routes();
  StatusOr<int> port = server_->Start(options_.host, options_.port);
  if (!port.ok()) {
    server_.reset();
    return port.status().WithContext("fleet http");
  }
  port_ = *port;
  return OkStatus();
}

void FleetServer::Stop() {
  if (server_) server_->Stop();
}

}  // namespace vigil
