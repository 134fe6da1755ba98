// SPDX-License-Identifier: Apache-2.0
// vigild: parses flags (the same keys as the config file; flags win) and runs the daemon.
#include <malloc.h>
#include <stdio.h>

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/logging.h"
#include "base/secret_file.h"
#include "base/usage_error.h"
#include "base/version.h"
#include "collectors/all_collectors.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/privilege_drop.h"
#include "sinks/all_sinks.h"

namespace {

struct ValueFlag {
  const char* flag;
  const char* key;
  const char* help;
};

constexpr ValueFlag kValueFlags[] = {
    {"--interval", "interval", "Collection interval of every collector (10s)"},
    {"--rpc-listen", "rpc_listen", "Control RPC address HOST:PORT (127.0.0.1:1778)"},
    {"--http-listen", "http_listen", "HTTP address for /metrics and /api/v1 (127.0.0.1:9479)"},
    {"--unix-socket", "unix_socket",
     "Control RPC unix socket (/run/vigil/vigild.sock as root; '-' = none)"},
    {"--ipc-name", "ipc_name", "Kineto IPC endpoint name (dynolog)"},
    {"--trace-root", "trace_root", "Where traces are written (/tmp/vigil-traces)"},
    {"--token-file", "token_file", "File holding the token remote RPC callers must send"},
    {"--proc-root", "proc_root", "Read /proc from this tree (/proc)"},
    {"--sys-root", "sys_root", "Read /sys from this tree (/sys)"},
    {"--gpu-backend", "gpu_backend", "auto|nvml|dcgm|amd|sim|none (auto)"},
    {"--nvml-library", "nvml_library", "Path of libnvidia-ml.so.1 to load"},
    {"--dcgm-address", "dcgm_address", "nv-hostengine HOST:PORT for --gpu-backend dcgm"},
    {"--dcgm-embedded", "dcgm_embedded", "true: embed DCGM when no host engine answers"},
    {"--host-name", "host_name", "This host's name in the fleet (default: the hostname)"},
    {"--state-dir", "state_dir", "Where the fleet spool and remote-write buffer live"},
    {"--mapping-file", "mapping_file", "Job mapping file (team/model per job or cgroup)"},
    {"--kubelet-socket", "kubelet_socket", "Kubelet pod-resources socket, or off (default path)"},
    {"--pmu-events", "pmu_events", "perf_pmu presets and events (default,software)"},
    {"--pmu-cgroups", "pmu_cgroups", "Comma-separated cgroups perf_pmu counts separately"},
    {"--log-level", "log_level", "debug|info|warn|error|off (info)"},
    {"--log-format", "log_format", "text|json (text)"},
    {"--enable", "enable", "Comma-separated collectors to switch on"},
    {"--disable", "disable", "Comma-separated collectors to switch off"},
    {"--user", "user", "Started as root: run as this user, keeping only needed capabilities"},
    {"--seccomp", "seccomp", "true|false: system-call allow-list after start (true)"},
    {"--profile.frequency", "profile.frequency", "Continuous profiling: samples/s per thread (19)"},
    {"--profile.window", "profile.window", "Continuous profiling: window length (60s)"},
    {"--profile.keep", "profile.keep", "Continuous profiling: windows kept per job (10)"},
    {"--profile.cpu-budget", "profile.cpu_budget",
     "Continuous profiling: sampler CPU as a fraction of one core (0.005)"},
};

// Secret files are checked before they are read (docs/deployment.md "Least privilege"), then every
// capability the enabled collectors do not need is dropped, before any thread starts.
int DropAndCheck(vigil::daemon::DaemonConfig* config) {
  vigil::LogLevel level = vigil::LogLevel::kInfo;
  vigil::ParseLogLevel(config->log_level, &level);
  vigil::InitLogging(level, config->log_format == "json");
  for (const auto& [flag, path] : {std::pair{"--token-file", &config->token_file},
                                   {"--fleet-token-file", &config->fleet_token_file},
                                   {"--remote-write-auth-file", &config->remote_write_auth_file}}) {
    if (vigil::Status s = vigil::CheckSecretFile(*path, flag, config->strict_permissions);
        !s.ok()) {
      fprintf(stderr, "vigild: %s\n", s.message().c_str());
      return 1;
    }
  }
  std::vector<std::string> enabled;
  for (const vigil::CollectorInfo* info : vigil::AllCollectors()) {
    if (vigil::daemon::CollectorEnabled(*config, info->name, info->enabled_by_default)) {
      enabled.emplace_back(info->name);
    }
  }
  auto dropped = vigil::daemon::DropPrivileges(enabled, config);
  if (!dropped.ok()) {
    fprintf(stderr, "vigild: cannot drop privileges: %s\n", dropped.status().message().c_str());
    return 1;
  }
  VIGIL_LOG_INFO("privileges: {}", dropped->summary);
  for (const std::string& reason : dropped->reasons) {
    VIGIL_LOG_INFO("privileges: keeping {}", reason);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // glibc gives each thread that allocates its own arena (up to 8 per core), and every HTTP
  // connection and RPC call runs on a thread: each arena keeps its freed pages resident. vigild
  // allocates little and rarely from more than one thread at once, so two arenas are enough.
  mallopt(M_ARENA_MAX, 2);
  CLI::App app{"vigild: Vigil's per-host telemetry daemon", "vigild"};
  app.set_version_flag("--version", vigil::kVersion);
  std::string config_file;
  app.add_option("--config", config_file, "TOML config file (same keys as the flags)");
  std::deque<std::string> values;
  std::vector<std::pair<std::string, CLI::Option*>> options;  // (config key, its flag)
  for (const ValueFlag& f : kValueFlags) {
    options.emplace_back(f.key, app.add_option(f.flag, values.emplace_back(), f.help));
  }
  for (const vigil::SinkInfo* sink : vigil::AllSinks()) {  // Each sink's keys, from its row.
    for (const vigil::SinkKey& key : sink->keys) {
      std::string flag = "--" + std::string(key.key);
      std::replace(flag.begin(), flag.end(), '_', '-');
      options.emplace_back(key.key,
                           app.add_option(flag, values.emplace_back(), std::string(key.help)));
    }
  }
  bool once = false;
  CLI::Option* once_opt =
      app.add_flag("--once", once, "Collect every enabled collector once, print /metrics, exit");
  bool strict = false;
  CLI::Option* strict_opt = app.add_flag("--strict-permissions", strict,
                                         "Refuse secret files that group or others can read");
  vigil::daemon::ConfigOverrides collector_overrides;
  app.add_flag_callback(
      "--profile.continuous",
      [&collector_overrides] { collector_overrides.emplace_back("profile.continuous", "true"); },
      "Sample the processes holding GPUs continuously, per job, over /api/v1/profiles (off)");
  for (const vigil::CollectorInfo* info : vigil::AllCollectors()) {
    const std::string name(info->name);
    app.add_flag_callback(
        "--collector." + name,
        [&collector_overrides, name] {
          collector_overrides.emplace_back("collectors." + name + ".enabled", "true");
        },
        std::string(info->help) + (info->enabled_by_default ? " (on)" : " (off)"));
    app.add_flag_callback(
        "--no-collector." + name,
        [&collector_overrides, name] {
          collector_overrides.emplace_back("collectors." + name + ".enabled", "false");
        },
        "Switch off " + name);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return vigil::ReportParseError(app, e);  // 0 for --help/--version, else 2.
  }

  vigil::daemon::ConfigOverrides overrides;
  for (const auto& [key, option] : options) {
    if (option->count() > 0) {
      overrides.emplace_back(key, option->as<std::string>());
    }
  }
  if (once_opt->count() > 0) {
    overrides.emplace_back("once", once ? "true" : "false");
  }
  if (strict_opt->count() > 0) {
    overrides.emplace_back("strict_permissions", strict ? "true" : "false");
  }
  overrides.insert(overrides.end(), collector_overrides.begin(), collector_overrides.end());

  std::vector<std::string_view> known;
  for (const vigil::CollectorInfo* info : vigil::AllCollectors()) {
    known.push_back(info->name);
  }
  auto config = vigil::daemon::LoadConfig(config_file, overrides, known);
  if (!config.ok()) {
    fprintf(stderr, "vigild: %s\n", config.status().message().c_str());
    return 2;
  }
  if (int rc = DropAndCheck(&*config); rc != 0) {
    return rc;
  }
  return vigil::daemon::Run(*config);
}
