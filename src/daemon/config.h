// SPDX-License-Identifier: Apache-2.0
// vigild's configuration: one plain struct with defaults, filled from the TOML config file and
// then from command-line flags, which use the same keys (--rpc-listen sets rpc_listen). Flags are
// kept as overrides so a SIGHUP reload re-reads the file and applies them again. Unknown keys are
// an error that names the key. Pure functions over values; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/time_util.h"
#include "sinks/sink_config.h"

namespace vigil::daemon {

// The shortest interval accepted for the daemon and for each collector.
inline constexpr int64_t kMinIntervalNs = 100 * kNanosPerMilli;

struct CollectorConfig {
  std::optional<bool> enabled;  // Unset: the collector's own default.
  int64_t interval_ns = 0;      // 0: the daemon-wide interval.
};

// (key, value) as given on the command line, e.g. {"rpc_listen", "0.0.0.0:1778"} or
// {"collectors.proc_cpu.enabled", "false"}.
using ConfigOverrides = std::vector<std::pair<std::string, std::string>>;

// Automatic tracing policies ([auto_trace] in the file), all off by default, sharing one budget.
struct AutoTraceConfig {
  bool periodic = false;                                   // One trace per job per period...
  int64_t periodic_every_ns = 6 * 3600 * kNanosPerSecond;  // ...at a random offset.
  bool low_utilization = false;        // A job holding GPUs whose SM activity stays low...
  double low_utilization_below = 0.2;  // ...under this ratio...
  int64_t low_utilization_for_ns = 600 * kNanosPerSecond;  // ...for this long.
  int64_t max_traces_per_hour = 4;
  int64_t duration_ms = 2000;
  bool upload = true;  // With --fleet-url: send these traces there to be analysed.
};

// Continuous CPU profiling in vigild ([profile] in the file, --profile.* flags), off by default.
struct ContinuousProfileConfig {
  bool continuous = false;
  int64_t frequency_hz = 19;                 // Off the beat of 10 Hz and 100 Hz timers.
  int64_t window_ns = 60 * kNanosPerSecond;  // One Profile per job per window...
  int64_t keep = 10;                         // ...the last `keep` windows held.
  double cpu_budget = 0.005;                 // Sampler CPU per second (0.5 % of one core).
};

// The sinks' keys (fleet_url, remote_write_url, jsonl, ...) come from the sink table's
// SinkConfig (sinks/sink_config.h), so a new sink adds no field here.
struct DaemonConfig : SinkConfig {
  std::string config_file;  // "" = none.
  int64_t interval_ns = 10 * kNanosPerSecond;
  std::map<std::string, CollectorConfig> collectors;
  std::string rpc_listen = "127.0.0.1:1778";
  std::string http_listen = "127.0.0.1:9479";
  std::string unix_socket;  // "" = DefaultUnixSocketPath().
  std::string ipc_name = "dynolog";
  std::string trace_root = "/tmp/vigil-traces";
  std::string token_file;
  std::string proc_root = "/proc";
  std::string sys_root = "/sys";
  std::string gpu_backend = "auto";  // auto|nvml|dcgm|amd|sim|none
  std::string nvml_library;
  std::string dcgm_address = "127.0.0.1:5555";  // --gpu-backend dcgm: host engine to use.
  bool dcgm_embedded = false;                   // Embed DCGM when no host engine answers.
  std::string host_name;  // This host's name in the fleet ("" = gethostname()).
  std::string state_dir;  // Fleet spool, remote-write buffer ("" = DefaultStateDir()).
  std::string log_level = "info";
  std::string log_format = "text";  // text|json
  bool once = false;
  std::string mapping_file;  // Job mapping file (docs/attribution.md).
  std::vector<std::string> env_allow_list;
  // The kubelet's pod-resources socket ("" = /var/lib/kubelet/pod-resources/kubelet.sock, "off"
  // = cgroup paths alone name pods; docs/attribution.md).
  std::string kubelet_socket;
  std::vector<std::string> process_patterns;
  std::vector<std::string> cgroup_patterns;
  std::string pmu_events = "default,software";  // perf_pmu: presets and events to count.
  std::vector<std::string> pmu_cgroups;         // perf_pmu: cgroups counted separately.
  AutoTraceConfig auto_trace;
  ContinuousProfileConfig profile;
  std::string user;                 // Started as root: run as this user (docs/deployment.md).
  bool seccomp = true;              // Apply the system-call allow-list after start.
  bool strict_permissions = false;  // Refuse, not warn about, secret files others can read.
  ConfigOverrides overrides;        // Flags, re-applied after the file on reload.
};

// Applies TOML text (keys as in docs: interval = "10s", [collectors.proc_cpu] enabled = false).
// `origin` names the source in errors. InvalidArgument on bad TOML, an unknown key or a bad value.
Status ApplyConfigText(std::string_view text, std::string_view origin, DaemonConfig* config);
// Reads and applies a file (NotFound when missing).
Status ApplyConfigFile(const std::string& path, DaemonConfig* config);
// Applies one flag value. Keys take '-' or '_' ("rpc-listen" == "rpc_listen"); "enable" and
// "disable" take comma-separated collector names.
Status ApplyOverride(std::string_view key, std::string_view value, DaemonConfig* config);

// Defaults, then `config_file` (if any), then `overrides`, then ValidateConfig().
StatusOr<DaemonConfig> LoadConfig(const std::string& config_file, const ConfigOverrides& overrides,
                                  std::span<const std::string_view> known_collectors);
// Checks values that depend on each other or on the build: listen addresses parse, enumerations
// are known, collector names exist (skipped when `known_collectors` is empty).
Status ValidateConfig(const DaemonConfig& config,
                      std::span<const std::string_view> known_collectors);

// /run/vigil/vigild.sock as root, else $XDG_RUNTIME_DIR/vigil/vigild.sock, else
// /tmp/vigil-<uid>/vigild.sock.
std::string DefaultUnixSocketPath();
// Where sinks keep data that must survive a restart (remote-write buffer, fleet spool):
// /var/lib/vigil as root, else $XDG_STATE_HOME/vigil or ~/.local/state/vigil.
std::string DefaultStateDir();

// Whether collector `name` runs, and how often, under `config`.
bool CollectorEnabled(const DaemonConfig& config, std::string_view name, bool default_enabled);
int64_t CollectorInterval(const DaemonConfig& config, std::string_view name);

// Human-readable lines for what differs between two configs ("interval: 10s -> 5s"), for the
// reload log.
std::vector<std::string> DescribeChanges(const DaemonConfig& before, const DaemonConfig& after);

}  // namespace vigil::daemon
