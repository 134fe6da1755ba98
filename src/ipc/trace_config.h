// SPDX-License-Identifier: Apache-2.0
// Kineto on-demand configurations as the daemon accepts them: "KEY=VALUE" lines whose keys are
// on an allow-list of Kineto's documented activity-profiler keys (anything else is refused with
// the reason), each value checked for its kind; where the trace file may go (only inside the
// trace root, never through ".."; otherwise rewritten into the root); and the file name Kineto
// will actually write (it inserts "_<pid>" before ".pt.trace.json" or ".json"). Pure functions.
// Owner: ipc. Thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace vigil {

inline constexpr std::string_view kKinetoLogFileKey = "ACTIVITIES_LOG_FILE";

// One parsed configuration, keys in the order given (a repeated key keeps its last value).
struct KinetoConfig {
  std::vector<std::pair<std::string, std::string>> entries;

  const std::string* Find(std::string_view key) const;
  void Set(std::string_view key, std::string value);
  // "KEY=VALUE" lines joined with '\n' (no trailing newline).
  std::string ToString() const;
};

// The keys accepted, in documentation order.
const std::vector<std::string_view>& AllowedKinetoKeys();
// Checks one key/value; InvalidArgument says which key and why.
Status ValidateKinetoEntry(std::string_view key, std::string_view value);
// Parses a Dynolog-style config text (lines separated by '\n'; blank lines and lines starting
// with '#' skipped). Refuses unknown keys, bad values, and more than 64 entries or 16 KiB.
StatusOr<KinetoConfig> ParseKinetoConfig(std::string_view text);

// Where a trace goes.
struct LogFileDecision {
  std::string path;        // The ACTIVITIES_LOG_FILE the daemon sends.
  bool rewritten = false;  // The caller's path was not honoured.
  std::string note;        // Why it was rewritten (empty otherwise).
};
// `requested` empty: <root>/<trace_id>/trace.json. Every trace goes in the directory the daemon
// makes for it, <root>/<trace_id>/: a path already there is honoured, anything else becomes
// <root>/<trace_id>/<its base name> (".json" appended when missing, unsafe characters replaced).
LogFileDecision DecideLogFile(std::string_view root, std::string_view trace_id,
                              std::string_view requested);

// The file Kineto writes for `log_file` in process `pid` (as that process sees its pid).
std::string KinetoTraceFileForPid(std::string_view log_file, int32_t pid);

}  // namespace vigil
