// SPDX-License-Identifier: Apache-2.0
#include "daemon/config.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <variant>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "base/file_util.h"
#include "base/logging.h"
#include "base/strings.h"
#include "rpc/net_util.h"
#include "rpc/rpc_client.h"
#include "sinks/all_sinks.h"

namespace vigil::daemon {
namespace {

// A value from the file (typed by TOML) or from a flag (always text).
struct RawValue {
  std::variant<std::string, int64_t, double, bool, std::vector<std::string>> v;
  bool from_flag = false;
};

Status BadValue(std::string_view key, std::string_view want) {
  return InvalidArgumentError(fmt::format("{}: want {}", key, want));
}

StatusOr<std::string> AsString(std::string_view key, const RawValue& raw) {
  if (const auto* s = std::get_if<std::string>(&raw.v)) {
    return *s;
  }
  return BadValue(key, "a string");
}

constexpr int64_t kMaxDurationSeconds = std::numeric_limits<int64_t>::max() / kNanosPerSecond;

StatusOr<int64_t> AsDuration(std::string_view key, const RawValue& raw) {
  int64_t ns = 0;
  if (const auto* s = std::get_if<std::string>(&raw.v)) {
    auto d = ParseDuration(*s);
    if (!d.ok()) {
      return d.status().WithContext(key);
    }
    ns = *d;
  } else if (const auto* i = std::get_if<int64_t>(&raw.v)) {
    // Seconds past int64 nanoseconds (292 years) would overflow; they are refused like zero.
    ns = *i > 0 && *i <= kMaxDurationSeconds ? *i * kNanosPerSecond : 0;
  } else if (const auto* f = std::get_if<double>(&raw.v)) {
    ns = *f > 0 && *f <= kMaxDurationSeconds ? static_cast<int64_t>(*f * 1e9) : 0;  // NaN too.
  } else {
    return BadValue(key, "a duration such as \"10s\"");
  }
  if (ns <= 0) {
    return BadValue(key, "a duration above zero");
  }
  return ns;
}

// A collection interval: a duration of at least kMinIntervalNs (shorter ones cost a core).
StatusOr<int64_t> AsInterval(std::string_view key, const RawValue& raw) {
  VIGIL_ASSIGN_OR_RETURN(int64_t ns, AsDuration(key, raw));
  if (ns < kMinIntervalNs) {
    return InvalidArgumentError(fmt::format("{}: want at least {}, not {}", key,
                                            FormatDuration(kMinIntervalNs), FormatDuration(ns)));
  }
  return ns;
}

StatusOr<bool> AsBool(std::string_view key, const RawValue& raw) {
  if (const auto* b = std::get_if<bool>(&raw.v)) {
    return *b;
  }
  if (const auto* s = std::get_if<std::string>(&raw.v); s && raw.from_flag) {
    const std::string text = ToLower(*s);
    if (text == "true" || text == "1" || text == "yes" || text == "on") {
      return true;
    }
    if (text == "false" || text == "0" || text == "no" || text == "off") {
      return false;
    }
  }
  return BadValue(key, "true or false");
}

StatusOr<int64_t> AsInt(std::string_view key, const RawValue& raw) {
  if (const auto* i = std::get_if<int64_t>(&raw.v)) {
    return *i;
  }
  if (const auto* s = std::get_if<std::string>(&raw.v); s && raw.from_flag) {
    if (auto i = ParseInt64(*s)) {
      return *i;
    }
  }
  return BadValue(key, "an integer");
}

StatusOr<double> AsRatio(std::string_view key, const RawValue& raw) {
  double value = -1;
  if (const auto* f = std::get_if<double>(&raw.v)) {
    value = *f;
  } else if (const auto* i = std::get_if<int64_t>(&raw.v)) {
    value = static_cast<double>(*i);
  } else if (const auto* s = std::get_if<std::string>(&raw.v); s && raw.from_flag) {
    value = ParseDouble(*s).value_or(-1);
  }
  if (!(value >= 0 && value <= 1)) {
    return BadValue(key, "a ratio between 0 and 1");
  }
  return value;
}

StatusOr<std::vector<std::string>> AsList(std::string_view key, const RawValue& raw) {
  if (const auto* l = std::get_if<std::vector<std::string>>(&raw.v)) {
    return *l;
  }
  if (const auto* s = std::get_if<std::string>(&raw.v); s && raw.from_flag) {
    std::vector<std::string> out;
    for (std::string_view piece : Split(*s, ',')) {
      if (!Trim(piece).empty()) {
        out.emplace_back(Trim(piece));
      }
    }
    return out;
  }
  return BadValue(key, "a list of strings");
}

using Setter = std::function<Status(std::string_view key, const RawValue&, DaemonConfig*)>;

Setter StringKey(std::string DaemonConfig::*field) {
  return [field](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
    VIGIL_ASSIGN_OR_RETURN(c->*field, AsString(key, raw));
    return OkStatus();
  };
}

Setter ListKey(std::vector<std::string> DaemonConfig::*field) {
  return [field](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
    VIGIL_ASSIGN_OR_RETURN(c->*field, AsList(key, raw));
    return OkStatus();
  };
}

Setter IntKey(int64_t DaemonConfig::*field) {
  return [field](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
    VIGIL_ASSIGN_OR_RETURN(int64_t value, AsInt(key, raw));
    if (value < 0) {
      return BadValue(key, "a number >= 0");
    }
    c->*field = value;
    return OkStatus();
  };
}

Setter EnableKey(bool enable) {
  return [enable](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
    VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> names, AsList(key, raw));
    for (const std::string& name : names) {
      c->collectors[name].enabled = enable;
    }
    return OkStatus();
  };
}

const std::map<std::string, Setter, std::less<>>& TopLevelKeys() {
  static const auto* keys = new std::map<std::string, Setter, std::less<>>{
      {"interval",
       [](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
         VIGIL_ASSIGN_OR_RETURN(c->interval_ns, AsInterval(key, raw));
         return OkStatus();
       }},
      {"once",
       [](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
         VIGIL_ASSIGN_OR_RETURN(c->once, AsBool(key, raw));
         return OkStatus();
       }},
      {"rpc_listen", StringKey(&DaemonConfig::rpc_listen)},
      {"http_listen", StringKey(&DaemonConfig::http_listen)},
      {"unix_socket", StringKey(&DaemonConfig::unix_socket)},
      {"ipc_name", StringKey(&DaemonConfig::ipc_name)},
      {"trace_root", StringKey(&DaemonConfig::trace_root)},
      {"token_file", StringKey(&DaemonConfig::token_file)},
      {"proc_root", StringKey(&DaemonConfig::proc_root)},
      {"sys_root", StringKey(&DaemonConfig::sys_root)},
      {"gpu_backend", StringKey(&DaemonConfig::gpu_backend)},
      {"nvml_library", StringKey(&DaemonConfig::nvml_library)},
      {"dcgm_address", StringKey(&DaemonConfig::dcgm_address)},
      {"host_name", StringKey(&DaemonConfig::host_name)},
      {"state_dir", StringKey(&DaemonConfig::state_dir)},
      {"log_level", StringKey(&DaemonConfig::log_level)},
      {"log_format", StringKey(&DaemonConfig::log_format)},
      {"mapping_file", StringKey(&DaemonConfig::mapping_file)},
      {"kubelet_socket", StringKey(&DaemonConfig::kubelet_socket)},
      {"dcgm_embedded",
       [](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
         VIGIL_ASSIGN_OR_RETURN(c->dcgm_embedded, AsBool(key, raw));
         return OkStatus();
       }},
      {"env_allow_list", ListKey(&DaemonConfig::env_allow_list)},
      {"process_patterns", ListKey(&DaemonConfig::process_patterns)},
      {"cgroup_patterns", ListKey(&DaemonConfig::cgroup_patterns)},
      {"pmu_events", StringKey(&DaemonConfig::pmu_events)},
      {"pmu_cgroups", ListKey(&DaemonConfig::pmu_cgroups)},
      {"enable", EnableKey(true)},
      {"disable", EnableKey(false)},
      {"auto_trace.periodic",
       [](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
         VIGIL_ASSIGN_OR_RETURN(c->auto_trace.periodic, AsBool(key, raw));
         return OkStatus();
       }},
      {"auto_trace.periodic_every",
       [](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
         VIGIL_ASSIGN_OR_RETURN(c->auto_trace.periodic_every_ns, AsDuration(key, raw));
         return OkStatus();
       }},
      {"auto_trace.low_utilization",
       [](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
         VIGIL_ASSIGN_OR_RETURN(c->auto_trace.low_utilization, AsBool(key, raw));
         return OkStatus();
       }},
      {"auto_trace.low_utilization_below",
       [](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
         VIGIL_ASSIGN_OR_RETURN(c->auto_trace.low_utilization_below, AsRatio(key, raw));
         return OkStatus();
       }},
      {"auto_trace.low_utilization_for",
       [](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
         VIGIL_ASSIGN_OR_RETURN(c->auto_trace.low_utilization_for_ns, AsDuration(key, raw));
         return OkStatus();
       }},
      {"auto_trace.max_traces_per_hour",
       [](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
         VIGIL_ASSIGN_OR_RETURN(c->auto_trace.max_traces_per_hour, AsInt(key, raw));
         return OkStatus();
       }},
      {"auto_trace.duration_ms",
       [](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
         VIGIL_ASSIGN_OR_RETURN(c->auto_trace.duration_ms, AsInt(key, raw));
         return OkStatus();
       }},
      {"auto_trace.upload",
       [](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
         VIGIL_ASSIGN_OR_RETURN(c->auto_trace.upload, AsBool(key, raw));
         return OkStatus();
       }},
      {"profile.continuous",
       [](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
         VIGIL_ASSIGN_OR_RETURN(c->profile.continuous, AsBool(key, raw));
         return OkStatus();
       }},
      {"profile.frequency",
       [](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
         VIGIL_ASSIGN_OR_RETURN(int64_t hz, AsInt(key, raw));
         if (hz < 1 || hz > 1000) {
           return BadValue(key, "a frequency in Hz from 1 to 1000");
         }
         c->profile.frequency_hz = hz;
         return OkStatus();
       }},
      {"profile.window",
       [](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
         VIGIL_ASSIGN_OR_RETURN(int64_t ns, AsDuration(key, raw));
         if (ns < kNanosPerSecond || ns > 3600 * kNanosPerSecond) {
           return BadValue(key, "a window from 1s to 1h");
         }
         c->profile.window_ns = ns;
         return OkStatus();
       }},
      {"profile.keep",
       [](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
         VIGIL_ASSIGN_OR_RETURN(int64_t keep, AsInt(key, raw));
         if (keep < 1 || keep > 1440) {
           return BadValue(key, "a number of windows from 1 to 1440");
         }
         c->profile.keep = keep;
         return OkStatus();
       }},
      {"profile.cpu_budget",
       [](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
         VIGIL_ASSIGN_OR_RETURN(double budget, AsRatio(key, raw));
         if (budget <= 0) {
           return BadValue(key, "a fraction of one core above 0, such as 0.005");
         }
         c->profile.cpu_budget = budget;
         return OkStatus();
       }},
      {"user", StringKey(&DaemonConfig::user)},
      {"seccomp",
       [](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
         VIGIL_ASSIGN_OR_RETURN(c->seccomp, AsBool(key, raw));
         return OkStatus();
       }},
      {"strict_permissions",
       [](std::string_view key, const RawValue& raw, DaemonConfig* c) -> Status {
         VIGIL_ASSIGN_OR_RETURN(c->strict_permissions, AsBool(key, raw));
         return OkStatus();
       }},
  };
  return *keys;
}

// The sinks' keys, from the sink table (sinks/all_sinks.h).
const SinkKey* FindSinkKey(std::string_view key) {
  for (const SinkInfo* sink : AllSinks()) {
    for (const SinkKey& k : sink->keys) {
      if (k.key == key) {
        return &k;
      }
    }
  }
  return nullptr;
}

std::string NormalizeKey(std::string_view key) {
  std::string out(key);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

Status SetCollectorKey(const std::string& collector, std::string_view sub, const RawValue& raw,
                       DaemonConfig* c) {
  const std::string full = "collectors." + collector + "." + std::string(sub);
  if (sub == "enabled") {
    VIGIL_ASSIGN_OR_RETURN(bool enabled, AsBool(full, raw));
    c->collectors[collector].enabled = enabled;
    return OkStatus();
  }
  if (sub == "interval") {
    VIGIL_ASSIGN_OR_RETURN(c->collectors[collector].interval_ns, AsInterval(full, raw));
    return OkStatus();
  }
  return InvalidArgumentError("unknown key '" + full + "' (want enabled or interval)");
}

Status SetKey(std::string_view key_text, const RawValue& raw, DaemonConfig* c) {
  const std::string key = NormalizeKey(key_text);
  if (key.rfind("collectors.", 0) == 0 || key.rfind("collector.", 0) == 0) {
    // collectors.<name>.<enabled|interval>
    const std::string rest = key.substr(key.find('.') + 1);
    const size_t dot = rest.rfind('.');
    if (dot == std::string::npos || dot == 0) {
      return InvalidArgumentError("unknown key '" + key + "'");
    }
    return SetCollectorKey(rest.substr(0, dot), rest.substr(dot + 1), raw, c);
  }
  auto it = TopLevelKeys().find(key);
  if (it == TopLevelKeys().end()) {
    if (const SinkKey* sink_key = FindSinkKey(key)) {
      return sink_key->text != nullptr ? StringKey(sink_key->text)(key, raw, c)
                                       : IntKey(sink_key->number)(key, raw, c);
    }
    return InvalidArgumentError("unknown key '" + key + "'");
  }
  return it->second(key, raw, c);
}

StatusOr<RawValue> FromToml(const std::string& key, const toml::node& node) {
  RawValue raw;
  if (const auto* s = node.as_string()) {
    raw.v = s->get();
  } else if (const auto* i = node.as_integer()) {
    raw.v = i->get();
  } else if (const auto* f = node.as_floating_point()) {
    raw.v = f->get();
  } else if (const auto* b = node.as_boolean()) {
    raw.v = b->get();
  } else if (const auto* a = node.as_array()) {
    std::vector<std::string> list;
    for (const toml::node& item : *a) {
      if (!item.is_string()) {
        return BadValue(key, "a list of strings");
      }
      list.push_back(item.as_string()->get());
    }
    raw.v = std::move(list);
  } else {
    return BadValue(key, "a string, number, boolean or list");
  }
  return raw;
}

Status ApplyCollectorsTable(const toml::table& table, DaemonConfig* c) {
  for (const auto& [name_key, node] : table) {
    const std::string name(name_key.str());
    const toml::table* sub = node.as_table();
    if (sub == nullptr) {
      return InvalidArgumentError("collectors." + name + ": want a table such as [collectors." +
                                  name + "]");
    }
    for (const auto& [sub_key, value] : *sub) {
      const std::string full = "collectors." + name + "." + std::string(sub_key.str());
      VIGIL_ASSIGN_OR_RETURN(RawValue raw, FromToml(full, value));
      VIGIL_RETURN_IF_ERROR(SetCollectorKey(name, sub_key.str(), raw, c));
    }
  }
  return OkStatus();
}

}  // namespace

Status ApplyConfigText(std::string_view text, std::string_view origin, DaemonConfig* config) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    return InvalidArgumentError(
        fmt::format("{}:{}:{}: {}", origin, where.line, where.column, e.description()));
  }
  for (const auto& [key_name, node] : root) {
    const std::string key = NormalizeKey(key_name.str());
    Status s;
    if (key == "collectors") {
      if (!node.is_table()) {
        s = InvalidArgumentError("collectors: want tables such as [collectors.proc_cpu]");
      } else {
        s = ApplyCollectorsTable(*node.as_table(), config);
      }
    } else if ((key == "auto_trace" || key == "profile") && node.is_table()) {
      for (const auto& [sub_key, value] : *node.as_table()) {
        const std::string full = key + "." + NormalizeKey(sub_key.str());
        auto raw = FromToml(full, value);
        s = raw.ok() ? SetKey(full, *raw, config) : raw.status();
        if (!s.ok()) {
          break;
        }
      }
    } else if (node.is_table()) {
      s = InvalidArgumentError("unknown key '" + key + "'");
    } else {
      auto raw = FromToml(key, node);
      s = raw.ok() ? SetKey(key, *raw, config) : raw.status();
    }
    if (!s.ok()) {
      return s.WithContext(origin);
    }
  }
  return OkStatus();
}

Status ApplyConfigFile(const std::string& path, DaemonConfig* config) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, 1 << 20));
  return ApplyConfigText(text, path, config);
}

Status ApplyOverride(std::string_view key, std::string_view value, DaemonConfig* config) {
  RawValue raw;
  raw.v = std::string(value);
  raw.from_flag = true;
  return SetKey(key, raw, config).WithContext("flag --" + std::string(key));
}

StatusOr<DaemonConfig> LoadConfig(const std::string& config_file, const ConfigOverrides& overrides,
                                  std::span<const std::string_view> known_collectors) {
  DaemonConfig config;
  config.config_file = config_file;
  config.overrides = overrides;
  if (!config_file.empty()) {
    VIGIL_RETURN_IF_ERROR(ApplyConfigFile(config_file, &config));
  }
  for (const auto& [key, value] : overrides) {
    VIGIL_RETURN_IF_ERROR(ApplyOverride(key, value, &config));
  }
  VIGIL_RETURN_IF_ERROR(ValidateConfig(config, known_collectors));
  return config;
}

Status ValidateConfig(const DaemonConfig& config,
                      std::span<const std::string_view> known_collectors) {
  static constexpr std::string_view kBackends[] = {"auto", "nvml", "dcgm", "amd", "sim", "none"};
  if (std::find(std::begin(kBackends), std::end(kBackends), config.gpu_backend) ==
      std::end(kBackends)) {
    return InvalidArgumentError("gpu_backend: want auto, nvml, dcgm, amd, sim or none, not '" +
                                config.gpu_backend + "'");
  }
  LogLevel level;
  if (!ParseLogLevel(config.log_level, &level)) {
    return InvalidArgumentError("log_level: want debug, info, warn, error or off");
  }
  if (config.log_format != "text" && config.log_format != "json") {
    return InvalidArgumentError("log_format: want text or json");
  }
  for (const auto& [key, value] :
       {std::pair{"rpc_listen", &config.rpc_listen}, {"http_listen", &config.http_listen}}) {
    if (value->empty() && std::string_view(key) == "rpc_listen") {
      continue;  // RPC over the unix socket only.
    }
    auto hp = ParseHostPort(*value);
    if (!hp.ok()) {
      return hp.status().WithContext(key);
    }
  }
  if (!known_collectors.empty()) {
    for (const auto& [name, unused] : config.collectors) {
      if (std::find(known_collectors.begin(), known_collectors.end(), name) ==
          known_collectors.end()) {
        std::vector<std::string> names(known_collectors.begin(), known_collectors.end());
        return InvalidArgumentError("unknown collector '" + name +
                                    "' (known: " + Join(names, ", ") + ")");
      }
    }
  }
  return OkStatus();
}

std::string DefaultUnixSocketPath() {
  return DefaultDaemonSocketPath();  // One rule for the daemon and its clients.
}

std::string DefaultStateDir() {
  if (geteuid() == 0) {
    return "/var/lib/vigil";
  }
  const char* state = getenv("XDG_STATE_HOME");
  if (state != nullptr && state[0] == '/') {
    return std::string(state) + "/vigil";
  }
  const char* home = getenv("HOME");
  if (home != nullptr && home[0] == '/') {
    return std::string(home) + "/.local/state/vigil";
  }
  return "/tmp/vigil-" + std::to_string(geteuid()) + "/state";
}

bool CollectorEnabled(const DaemonConfig& config, std::string_view name, bool default_enabled) {
  auto it = config.collectors.find(std::string(name));
  if (it == config.collectors.end() || !it->second.enabled) {
    return default_enabled;
  }
  return *it->second.enabled;
}

int64_t CollectorInterval(const DaemonConfig& config, std::string_view name) {
  auto it = config.collectors.find(std::string(name));
  if (it == config.collectors.end() || it->second.interval_ns <= 0) {
    return config.interval_ns;
  }
  return it->second.interval_ns;
}

std::vector<std::string> DescribeChanges(const DaemonConfig& before, const DaemonConfig& after) {
  std::vector<std::string> out;
  if (before.interval_ns != after.interval_ns) {
    out.push_back(fmt::format("interval: {} -> {}", FormatDuration(before.interval_ns),
                              FormatDuration(after.interval_ns)));
  }
  std::map<std::string, std::pair<CollectorConfig, CollectorConfig>> both;
  for (const auto& [name, c] : before.collectors) {
    both[name].first = c;
  }
  for (const auto& [name, c] : after.collectors) {
    both[name].second = c;
  }
  auto enabled_text = [](const std::optional<bool>& e) {
    return e ? (*e ? "enabled" : "disabled") : "default";
  };
  for (const auto& [name, pair] : both) {
    const auto& [a, b] = pair;
    if (a.enabled != b.enabled) {
      out.push_back(fmt::format("collectors.{}: {} -> {}", name, enabled_text(a.enabled),
                                enabled_text(b.enabled)));
    }
    if (a.interval_ns != b.interval_ns) {
      auto text = [](int64_t ns) { return ns > 0 ? FormatDuration(ns) : std::string("default"); };
      out.push_back(fmt::format("collectors.{}.interval: {} -> {}", name, text(a.interval_ns),
                                text(b.interval_ns)));
    }
  }
  if (before.mapping_file != after.mapping_file) {
    out.push_back(
        fmt::format("mapping_file: '{}' -> '{}'", before.mapping_file, after.mapping_file));
  }
  if (before.log_level != after.log_level) {
    out.push_back(fmt::format("log_level: {} -> {}", before.log_level, after.log_level));
  }
  return out;
}

}  // namespace vigil::daemon
