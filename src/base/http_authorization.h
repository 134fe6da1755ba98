// SPDX-License-Identifier: Apache-2.0
// The Authorization header for a time-series engine behind authentication (Grafana Cloud, Mimir,
// VictoriaMetrics with -httpAuth, Prometheus behind a proxy), read from a file so the secret is
// never on a command line: one line, "bearer TOKEN" or "basic USER:PASSWORD" ('#' comments and
// blank lines are skipped). vigild's remote-write sink and `vigil fleet report --prometheus` share
// it. Owner: base. Stateless.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace vigil {

// "Bearer TOKEN" or "Basic base64(USER:PASSWORD)"; InvalidArgument naming the file otherwise.
StatusOr<std::string> ParseAuthorization(std::string_view text, const std::string& path);
StatusOr<std::string> ReadAuthorizationFile(const std::string& path);

// RFC 4648 base64 with padding.
std::string Base64Encode(std::string_view bytes);

}  // namespace vigil
