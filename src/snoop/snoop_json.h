// SPDX-License-Identifier: Apache-2.0
// `vigil snoop --json FILE`: the session summary as one JSON object (schema 1), documented key by
// key in docs/snoop-json-schema.md. Every field of SessionSummary is written, so a tool reading
// the file sees what the terminal summary shows (including that stacks are native frames only,
// or that events were sampled). Pure functions; thread-safe.
#pragma once

#include <string>

#include "base/status.h"
#include "snoop/snoop_summary.h"

namespace vigil::snoop {

inline constexpr int kSnoopJsonSchema = 1;

// The summary as indented JSON text, ending in a newline. Arrays keep the summary's order
// (most launched kernel first, largest leak first).
std::string RenderSnoopJson(const SessionSummary& summary);

// Writes RenderSnoopJson(summary) to `path` (atomically: a temporary file renamed over it);
// "-" writes to stdout. The error names the path.
Status WriteSnoopJson(const SessionSummary& summary, const std::string& path);

}  // namespace vigil::snoop
