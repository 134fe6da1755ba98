// SPDX-License-Identifier: Apache-2.0
// vigil-fleet's HTTP endpoint (docs/protocols.md "Fleet push"): POST /api/v1/ingest (JSON
// batches, optionally gzip), GET /api/v1/attribution, /api/v1/jobs, /api/v1/jobs/<id>,
// /api/v1/hosts, /api/v1/idle-now, /api/v1/top-wasters and /healthz. Errors are
// {"error": "..."} with a 4xx/5xx status. Auth: with a token file, every /api/v1 request needs
// "Authorization: Bearer <token>" (ingest: the token of the batch's host, or a "*" token);
// without one, only loopback clients are served. The token is checked from the request head,
// before any body is read; connections, deadlines and size caps are the httpd layer's
// (httpd/guarded_server.h). Owner: fleet. Requests run on connection threads; the ledger store is
// thread-safe. Start/Stop from one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "base/status.h"
#include "fleet/ledger_store.h"
#include "httpd/guarded_server.h"

namespace vigil {

class ProfilingService;

struct FleetServerOptions {
  std::string host = "127.0.0.1";
  int port = 9480;         // 0 = any free port (see port()).
  std::string token_file;  // Lines "HOST TOKEN" or "* TOKEN"; '#' starts a comment.
  // PEM certificate chain and private key: both set = HTTPS only; neither = plain HTTP.
  std::string tls_cert_file;
  std::string tls_key_file;
  double price_per_gpu_hour = 0;
  size_t max_body_bytes = 8 << 20;       // As sent (compressed).
  size_t max_inflated_bytes = 64 << 20;  // After gunzip.
  // A request's head and body must arrive within this, from the connection's accept.
  int64_t request_deadline_ms = 30'000;
  size_t max_connections = 512;             // More wait in the listen backlog.
  size_t max_connections_per_client = 64;   // Per address; per uid for loopback clients.
  ProfilingService* profiling = nullptr;    // Fleet profiling (profiling_routes.h); null = off.
  size_t cpu_profiles_per_job_host = 1440;  // Continuous CPU profiles kept (cpu_profile_routes.h).
};

// What a route file gets to check a request: replies the error and returns false when the
// request may not proceed. `host` is the host a write claims, "" for reads, or kOperatorRole for
// what only an operator may do (ask for profiling).
using RequestGuard =
    std::function<bool(const httplib::Request&, httplib::Response&, const std::string& host)>;

// The token file's name for operators' tokens ("@operator TOKEN"): they read everything and may
// ask for profiling, but push as no host. Host tokens, "*" ones included, may not ask for
// profiling: a daemon's token starts no traces on other hosts.
inline constexpr char kOperatorRole[] = "@operator";

// Parses a token file into host -> token ("*" for any host, kOperatorRole for operators).
StatusOr<std::multimap<std::string, std::string>> ReadTokenFile(const std::string& path);

class FleetServer {
 public:
  FleetServer(FleetServerOptions options, LedgerStore* store);
  ~FleetServer();
  FleetServer(const FleetServer&) = delete;
  FleetServer& operator=(const FleetServer&) = delete;

  Status Start();
  void Stop();
  int port() const { return port_; }
  const char* scheme() const { return options_.tls_cert_file.empty() ? "http" : "https"; }
  // The guard the server's own routes use; valid for the server's lifetime.
  RequestGuard guard() const;

 private:
  void Routes();
  // Empty when allowed; otherwise the error to reply (status code in *code).
  std::string Authorize(const httplib::Request& req, const std::string& host, int* code) const;
  bool CheckHead(httplib::Request& req, httplib::Response& res) const;
  void HandleIngest(const httplib::Request& req, httplib::Response& res);

  const FleetServerOptions options_;
  LedgerStore* const store_;
  std::multimap<std::string, std::string> tokens_;
  std::unique_ptr<GuardedServer> server_;
  int port_ = -1;
};

}  // namespace vigil
