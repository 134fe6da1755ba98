// SPDX-License-Identifier: Apache-2.0
// The profile as JSON, for scripts and for the flame graph page: run metadata, the frame table
// (name, kind, module, file, line) and the stacks (frame ids root first, with counts); and the
// merged call tree the flame graph draws ({"n": name id, "v": samples, "c": children}).
// Stateless.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "profile/profile.h"

namespace vigil {

// {"event", "frequency_hz", "start_unix_ns", "duration_ns", "total_samples", "lost_samples",
//  "python_samples", "gil_samples", "pids", "frames": [{"name", "label", "kind", "module", "file",
//  "line"}], "stacks": [{"frames": [ids root first], "count"}]}
nlohmann::json ProfileToJson(const Profile& profile);

// {"names": [labels], "kinds": ["native"|"kernel"|"python"|"process"], "total": N,
//  "root": {"n": -1, "v": N, "c": [...]}}; children sorted by name.
nlohmann::json CallTreeJson(const Profile& profile);

const char* FrameKindName(FrameKind kind);

}  // namespace vigil
