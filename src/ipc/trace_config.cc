// SPDX-License-Identifier: Apache-2.0
#include "ipc/trace_config.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/strings.h"

namespace vigil {
namespace {

enum class ValueKind { kInt, kBool, kPath, kActivityTypes, kId };

struct KeySpec {
  std::string_view key;
  ValueKind kind;
  int64_t min = 0;
  int64_t max = 0;
};

constexpr int64_t kMaxInt32 = 2147483647;
constexpr int64_t kMaxMillis = int64_t{1} << 50;

// Kineto's documented activity-profiler keys (libkineto/src/Config.cpp). Event-profiler keys,
// ACTIVITIES_LOG_URL, ENABLE_IPC_FABRIC, VERBOSE_* and buffer sizes are deliberately absent.
constexpr KeySpec kKeys[] = {
    {"ACTIVITIES_LOG_FILE", ValueKind::kPath},
    {"ACTIVITIES_DURATION_MSECS", ValueKind::kInt, 1, 3600 * 1000},
    {"ACTIVITIES_DURATION_SECS", ValueKind::kInt, 1, 3600},
    {"ACTIVITIES_ITERATIONS", ValueKind::kInt, -1, 1000000},
    {"ACTIVITIES_WARMUP_PERIOD_SECS", ValueKind::kInt, 0, 600},
    {"ACTIVITIES_WARMUP_ITERATIONS", ValueKind::kInt, 0, 1000000},
    {"ACTIVITY_TYPES", ValueKind::kActivityTypes},
    {"ACTIVITIES_DISPLAY_CUDA_SYNC_WAIT_EVENTS", ValueKind::kBool},
    {"PROFILE_START_TIME", ValueKind::kInt, 0, kMaxMillis},
    {"PROFILE_START_ITERATION", ValueKind::kInt, -1, kMaxInt32},
    {"PROFILE_START_ITERATION_ROUNDUP", ValueKind::kInt, -1, kMaxInt32},
    {"PROFILE_REPORT_INPUT_SHAPES", ValueKind::kBool},
    {"PROFILE_PROFILE_MEMORY", ValueKind::kBool},
    {"PROFILE_WITH_STACK", ValueKind::kBool},
    {"PROFILE_WITH_FLOPS", ValueKind::kBool},
    {"PROFILE_WITH_MODULES", ValueKind::kBool},
    {"REQUEST_TRACE_ID", ValueKind::kId},
    {"REQUEST_GROUP_TRACE_ID", ValueKind::kId},
};

const KeySpec* FindSpec(std::string_view key) {
  for (const KeySpec& spec : kKeys) {
    if (spec.key == key) {
      return &spec;
    }
  }
  return nullptr;
}

bool IsSafeFileChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

// "." counts too: "<root>/." names the root itself and "<root>/d/." a directory, not a file.
bool HasDotComponent(std::string_view path) {
  for (std::string_view part : Split(path, '/')) {
    if (part == ".." || part == ".") {
      return true;
    }
  }
  return false;
}

}  // namespace

const std::string* KinetoConfig::Find(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k == key) {
      return &v;
    }
  }
  return nullptr;
}

void KinetoConfig::Set(std::string_view key, std::string value) {
  for (auto& [k, v] : entries) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  entries.emplace_back(std::string(key), std::move(value));
}

std::string KinetoConfig::ToString() const {
  std::string out;
  for (const auto& [k, v] : entries) {
    if (!out.empty()) {
      out += '\n';
    }
    out += k;
    out += '=';
    out += v;
  }
  return out;
}

const std::vector<std::string_view>& AllowedKinetoKeys() {
  static const std::vector<std::string_view> keys = [] {
    std::vector<std::string_view> out;
    for (const KeySpec& spec : kKeys) {
      out.push_back(spec.key);
    }
    return out;
  }();
  return keys;
}

Status ValidateKinetoEntry(std::string_view key, std::string_view value) {
  const KeySpec* spec = FindSpec(key);
  if (spec == nullptr) {
    return InvalidArgumentError(fmt::format("config key {} is not allowed (allowed: {})",
                                            SanitizeForLog(key, 64),
                                            fmt::join(AllowedKinetoKeys(), ", ")));
  }
  if (value.find_first_of("\n\r") != std::string_view::npos || value.find('\0') != value.npos) {
    return InvalidArgumentError(fmt::format("config value of {} has a line break", key));
  }
  switch (spec->kind) {
    case ValueKind::kInt: {
      auto v = ParseInt64(value);
      if (!v || *v < spec->min || *v > spec->max) {
        return InvalidArgumentError(fmt::format("{} must be an integer in [{}, {}], got '{}'", key,
                                                spec->min, spec->max, SanitizeForLog(value, 40)));
      }
      return OkStatus();
    }
    case ValueKind::kBool: {
      const std::string lower = ToLower(value);
      if (lower != "true" && lower != "false" && lower != "1" && lower != "0") {
        return InvalidArgumentError(
            fmt::format("{} must be true or false, got '{}'", key, SanitizeForLog(value, 40)));
      }
      return OkStatus();
    }
    case ValueKind::kPath:
      if (value.empty() || value.size() > 4096) {
        return InvalidArgumentError(fmt::format("{} must be a path of 1 to 4096 bytes", key));
      }
      return OkStatus();
    case ValueKind::kActivityTypes:
      for (std::string_view type : Split(value, ',')) {
        type = Trim(type);
        if (type.empty() || type.size() > 64 || !std::all_of(type.begin(), type.end(), [](char c) {
              return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
            })) {
          return InvalidArgumentError(fmt::format("ACTIVITY_TYPES entry '{}' is not a type name",
                                                  SanitizeForLog(type, 64)));
        }
      }
      return OkStatus();
    case ValueKind::kId:
      if (value.empty() || value.size() > 128 ||
          !std::all_of(value.begin(), value.end(), IsSafeFileChar)) {
        return InvalidArgumentError(fmt::format("{} must be 1 to 128 of [A-Za-z0-9._-]", key));
      }
      return OkStatus();
  }
  return InternalError("unreachable");
}

StatusOr<KinetoConfig> ParseKinetoConfig(std::string_view text) {
  if (text.size() > 16 * 1024) {
    return InvalidArgumentError("config is larger than 16 KiB");
  }
  KinetoConfig config;
  std::string_view line;
  while (NextLine(&text, &line)) {
    line = Trim(line);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (line.empty() || line[0] == '#') {
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      return InvalidArgumentError(
          fmt::format("config line '{}' is not KEY=VALUE", SanitizeForLog(line, 80)));
    }
    std::string_view key = Trim(line.substr(0, eq));
    std::string_view value = Trim(line.substr(eq + 1));
    VIGIL_RETURN_IF_ERROR(ValidateKinetoEntry(key, value));
    config.Set(key, std::string(value));
    if (config.entries.size() > 64) {
      return InvalidArgumentError("config has more than 64 entries");
    }
  }
  return config;
}

LogFileDecision DecideLogFile(std::string_view root, std::string_view trace_id,
                              std::string_view requested) {
  std::string root_dir(root);
  while (root_dir.size() > 1 && root_dir.back() == '/') {
    root_dir.pop_back();
  }
  const std::string trace_dir = JoinPath(root_dir, trace_id);
  if (requested.empty()) {
    return LogFileDecision{JoinPath(trace_dir, "trace.json"), false, ""};
  }
  std::string note;
  if (HasDotComponent(requested)) {
    note = "the requested path contains a '.' or '..' component";
  } else if (requested[0] != '/') {
    note = "the requested path is relative";
  } else if (!requested.starts_with(root_dir + "/") || requested.size() <= root_dir.size() + 1) {
    note = fmt::format("the requested path is outside the trace root {}", root_dir);
  } else if (requested.back() == '/') {
    note = "the requested path names a directory";
  } else if (requested.starts_with(trace_dir + "/") &&
             requested.find('/', trace_dir.size() + 1) == std::string_view::npos) {
    return LogFileDecision{std::string(requested), false, ""};
  } else {
    note = "each trace is written in a directory the daemon makes for it";
  }
  std::string_view base = requested;
  if (size_t slash = base.rfind('/'); slash != std::string_view::npos) {
    base = base.substr(slash + 1);
  }
  std::string name;
  for (char c : base) {
    name += IsSafeFileChar(c) ? c : '_';
  }
  while (!name.empty() && name[0] == '.') {
    name.erase(0, 1);
  }
  if (name.empty()) {
    name = "trace.json";
  } else if (!name.ends_with(".json")) {
    name += ".json";
  }
  const std::string path = JoinPath(trace_dir, name);
  return LogFileDecision{path, true,
                         fmt::format("{}; the trace is written to {} instead", note, path)};
}

std::string KinetoTraceFileForPid(std::string_view log_file, int32_t pid) {
  std::string out(log_file);
  if (size_t at = out.find(".pt.trace.json"); at != std::string::npos) {
    out.replace(at, 14, fmt::format("_{}.pt.trace.json", pid));
  } else if (size_t json = out.find(".json"); json != std::string::npos) {
    out.replace(json, 5, fmt::format("_{}.json", pid));
  }
  return out;
}

}  // namespace vigil
