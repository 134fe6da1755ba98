// SPDX-License-Identifier: Apache-2.0
// pprof's profile.proto, gzipped: what `go tool pprof`, Pyroscope, Parca and Grafana read.
// Two sample values per stack (samples/count and cpu/nanoseconds, the latter at one sampling
// period per sample), one location and function per distinct frame (Python frames keep their
// file and line), one mapping per module. Stateless.
#pragma once

#include <string>

#include "profile/profile.h"

namespace vigil {

// The serialized, gzipped Profile message.
std::string WritePprof(const Profile& profile);
// The same, not gzipped (for tests and for callers that compress themselves).
std::string WritePprofUncompressed(const Profile& profile);

}  // namespace vigil
