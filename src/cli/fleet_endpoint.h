// SPDX-License-Identifier: Apache-2.0
// Where the `vigil fleet ...` commands and `vigil analyze --upload` find vigil-fleet and the token
// they present, and the one way they call it. Owner: cli. Stateless.
#pragma once

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "base/http_exchange.h"
#include "base/status.h"
#include "cli/cli_context.h"

namespace vigil {

// $VIGIL_FLEET_URL, else http://127.0.0.1:9480.
std::string DefaultFleetUrl();

// The token in a token file: the last field of the first non-comment line ("TOKEN" or
// "HOST TOKEN", so vigild's fleet token file and vigil-fleet's own lines both work).
StatusOr<std::string> ReadFleetToken(const std::string& path);

// The whole story when vigil-fleet does not answer at `url`: what failed, and how to start
// vigil-fleet or point vigil at a running one. Printed to `err` as "vigil: <what>: ...".
void PrintFleetUnreachable(FILE* err, const char* what, const std::string& url,
                           const std::string& why);

struct FleetCall {
  const char* what = "fleet";  // The command, for messages ("fleet report").
  const char* method = "GET";  // GET or POST (a JSON body).
  std::string path = "/";      // /api/v1/...
  HttpParams params = {};      // Query parameters.
  std::string body = "";
};

// One call to vigil-fleet at `url` ("" = DefaultFleetUrl()) with the token in `token_file` (if
// any), bounded by the CLI's timeout. kExitOk with the parsed 2xx reply in *reply; otherwise the
// exit code after printing why: kExitUsage (bad URL, HTTP 400), kExitUnreachable, kExitFailure.
int CallFleet(CliContext& ctx, const std::string& url, const std::string& token_file,
              const FleetCall& call, nlohmann::json* reply);

}  // namespace vigil
