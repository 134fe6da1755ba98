// SPDX-License-Identifier: Apache-2.0
// `vigil fleet profile --job-id J [--reason R] [--duration-ms N | --iterations N] [--wait
//  [--wait-timeout 10m]] [--json] [--fleet URL] [--fleet-token-file F]`: asks vigil-fleet to
// profile a running job on every host it holds GPUs on (POST /api/v1/profiling, docs/protocols.md
// "Profiling as a service"); with --wait, follows the request until it is analysed or failed.
// `vigil fleet profiles [--job-id J]` lists the requests. Talks to vigil-fleet over HTTP only.
// Owner: cli. Runs on the main thread.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace vigil {

// Adds `profile` and `profiles` under the `vigil fleet` subcommand.
void AddFleetProfileCommands(CLI::App* fleet, CliContext& ctx);

}  // namespace vigil
