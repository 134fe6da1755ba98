// SPDX-License-Identifier: Apache-2.0
// vigil-fleet: the fleet service. `vigil-fleet serve` opens the ledger, serves the HTTP API and
// applies retention every minute until SIGINT/SIGTERM. Flags are parsed here only.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <ctime>

#include <CLI/CLI.hpp>

#include "base/logging.h"
#include "base/secret_file.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "base/usage_error.h"
#include "fleet/fleet_server.h"
#include "fleet/ledger_store.h"
#include "fleet/profiling_setup.h"

namespace vigil {
namespace {

struct ServeFlags {
  std::string listen = "127.0.0.1:9480";
  std::string db = "./var/fleet.db";
  std::string token_file;
  std::string tls_cert;
  std::string tls_key;
  double price = 0;
  std::string retention = "90d";
  std::string rollup_retention = "400d";
  std::string max_gap = "5m";
  std::string log_level = "info";
  bool allow_root = false;
  bool strict_permissions = false;
  int64_t cpu_profiles_per_job_host = 1440;
  LedgerLimits limits;
  ProfilingFlags profiling;
};

// vigil-fleet parses untrusted HTTP bodies and needs no privilege: it refuses root unless told,
// and checks that its secret files are private (docs/deployment.md).
int CheckPrivileges(const ServeFlags& f) {
  if (geteuid() == 0 && !f.allow_root) {
    std::fprintf(stderr,
                 "vigil-fleet: refusing to run as root: start it as an unprivileged user (e.g. "
                 "the vigil system user) or pass --allow-root\n");
    return 1;
  }
  for (const auto& [flag, path] : {std::pair{"--token-file", &f.token_file},
                                   {"--daemon-token-file", &f.profiling.daemon_token_file},
                                   {"--tls-key", &f.tls_key}}) {
    if (Status s = CheckSecretFile(*path, flag, f.strict_permissions); !s.ok()) {
      std::fprintf(stderr, "vigil-fleet: %s\n", s.message().c_str());
      return 1;
    }
  }
  return 0;
}

int Serve(const ServeFlags& f) {
  LogLevel level = LogLevel::kInfo;
  if (!ParseLogLevel(f.log_level, &level)) {
    std::fprintf(stderr, "vigil-fleet: --log-level: unknown level %s\n", f.log_level.c_str());
    return 2;
  }
  InitLogging(level);
  if (int rc = CheckPrivileges(f); rc != 0) {
    return rc;
  }
  FleetServerOptions server_options;
  const size_t colon = f.listen.rfind(':');
  const std::optional<int64_t> port =
      colon == std::string::npos ? std::nullopt : ParseInt64(f.listen.substr(colon + 1));
  if (!port || *port < 0 || *port > 65535) {
    std::fprintf(stderr, "vigil-fleet: --listen: want HOST:PORT, got %s\n", f.listen.c_str());
    return 2;
  }
  server_options.host = f.listen.substr(0, colon);
  if (server_options.host.size() > 2 && server_options.host.front() == '[') {
    server_options.host = server_options.host.substr(1, server_options.host.size() - 2);
  }
  server_options.port = static_cast<int>(*port);
  server_options.token_file = f.token_file;
  server_options.tls_cert_file = f.tls_cert;
  server_options.tls_key_file = f.tls_key;
  server_options.price_per_gpu_hour = f.price;
  if (f.cpu_profiles_per_job_host < 1) {
    std::fprintf(stderr, "vigil-fleet: --cpu-profiles-per-job-host: want at least 1\n");
    return 2;
  }
  server_options.cpu_profiles_per_job_host = static_cast<size_t>(f.cpu_profiles_per_job_host);

  LedgerOptions ledger;
  ledger.path = f.db;
  ledger.limits = f.limits;
  for (auto [text, out, name] :
       {std::tuple{&f.retention, &ledger.retention_ns, "--retention"},
        std::tuple{&f.rollup_retention, &ledger.rollup_retention_ns, "--rollup-retention"},
        std::tuple{&f.max_gap, &ledger.max_gap_ns, "--max-gap"}}) {
    StatusOr<int64_t> d = ParseDuration(*text);
    if (!d.ok() || *d <= 0) {
      std::fprintf(stderr, "vigil-fleet: %s: want a duration like 90d\n", name);
      return 2;
    }
    *out = *d;
  }

  // Block the stop signals before any thread starts, then wait for them here.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  StatusOr<std::unique_ptr<LedgerStore>> store = LedgerStore::Open(ledger);
  if (!store.ok()) {
    std::fprintf(stderr, "vigil-fleet: %s\n", store.status().ToString().c_str());
    return 1;
  }
  StatusOr<ProfilingStack> profiling = StartProfiling(f.profiling, store->get(), &server_options);
  if (!profiling.ok()) {
    std::fprintf(stderr, "vigil-fleet: %s\n", profiling.status().ToString().c_str());
    return 2;
  }
  FleetServer server(server_options, store->get());
  if (Status s = server.Start(); !s.ok()) {
    std::fprintf(stderr, "vigil-fleet: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("vigil-fleet listening on %s://%s:%d (ledger %s)\n", server.scheme(),
              server_options.host.c_str(), server.port(), f.db.c_str());
  std::fflush(stdout);
  while (true) {
    if (Status s = (*store)->ApplyRetention(UnixNanos()); !s.ok()) {
      VIGIL_LOG_WARN("retention failed: err={}", s.ToString());
    }
    timespec wait{60, 0};
    const int sig = sigtimedwait(&stop, nullptr, &wait);
    if (sig == SIGINT || sig == SIGTERM) {
      break;
    }
  }
  VIGIL_LOG_INFO("stopping");
  server.Stop();
  return 0;
}

}  // namespace
}  // namespace vigil

int main(int argc, char** argv) {
  CLI::App app{"vigil-fleet: fleet ingest, GPU-hour ledger and attribution API", "vigil-fleet"};
  app.require_subcommand(1);
  vigil::ServeFlags flags;
  CLI::App* serve = app.add_subcommand("serve", "Run the fleet service");
  serve->add_option("--listen", flags.listen, "HOST:PORT to listen on")->capture_default_str();
  serve->add_option("--db", flags.db, "SQLite ledger file")->capture_default_str();
  serve->add_option("--token-file", flags.token_file,
                    "Lines \"HOST TOKEN\" (\"*\" for any host); without it only loopback");
  serve->add_option("--tls-cert", flags.tls_cert, "PEM certificate chain: serve HTTPS only");
  serve->add_option("--tls-key", flags.tls_key, "PEM private key of --tls-cert");
  serve->add_option("--price-per-gpu-hour", flags.price, "Cost of one GPU-hour in reports");
  serve->add_option("--retention", flags.retention, "Keep per-minute rows this long")
      ->capture_default_str();
  serve->add_option("--rollup-retention", flags.rollup_retention, "Keep hourly rollups this long")
      ->capture_default_str();
  serve->add_option("--max-gap", flags.max_gap, "Longest silence still counted as reported time")
      ->capture_default_str();
  serve->add_option("--log-level", flags.log_level, "debug|info|warn|error|off")
      ->capture_default_str();
  serve->add_flag("--allow-root", flags.allow_root, "Run even as root (not recommended)");
  serve->add_flag("--strict-permissions", flags.strict_permissions,
                  "Refuse secret files (token file, TLS key) that group or others can read");
  // Per-host limits (docs/fleet.md "Limits per host"): a batch over one is refused with HTTP 400.
  vigil::LedgerLimits& limits = flags.limits;
  serve
      ->add_option("--max-series-per-host", limits.max_series_per_host,
                   "Series one host's pushes may keep at once (0 = no limit)")
      ->capture_default_str();
  serve
      ->add_option("--max-labels-per-series", limits.max_labels_per_series,
                   "Labels one pushed sample may carry")
      ->capture_default_str();
  serve
      ->add_option("--max-label-name-bytes", limits.max_label_name_bytes,
                   "Longest label name of a pushed sample")
      ->capture_default_str();
  serve
      ->add_option("--max-label-value-bytes", limits.max_label_value_bytes,
                   "Longest label value of a pushed sample")
      ->capture_default_str();
  serve
      ->add_option("--max-label-bytes-per-series", limits.max_label_bytes_per_series,
                   "Label names and values of one pushed sample together")
      ->capture_default_str();
  serve
      ->add_option("--cpu-profiles-per-job-host", flags.cpu_profiles_per_job_host,
                   "Continuous CPU profile windows kept per job and host (oldest dropped)")
      ->capture_default_str();
  vigil::AddProfilingFlags(serve, &flags.profiling);
  int code = 0;
  serve->callback([&] { code = vigil::Serve(flags); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return vigil::ReportParseError(app, e);  // 0 for --help, else 2 (never CLI11's codes).
  }
  return code;
}
