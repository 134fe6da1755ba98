// SPDX-License-Identifier: Apache-2.0
// Usage errors of Vigil's programs (vigil, vigild, vigil-fleet), said the same way everywhere:
// an unknown command or flag is named with the closest valid one ("unknown command 'stauts'; did
// you mean 'status'?"), a command that needs a subcommand lists them, and every usage error
// exits 2, whatever CLI11's own code for it (106, 109, ...). Help and --version exit 0.
// Owner: base. Stateless; used by the programs' main() only.
#pragma once

#include <CLI/CLI.hpp>

namespace vigil {

inline constexpr int kUsageExitCode = 2;

// Prints the error of a failed app.parse() to stderr, in the words above, and returns the exit
// code: 0 for --help and --version (printed to stdout), kUsageExitCode for everything else.
// `app` is the top-level app the error came from.
int ReportParseError(CLI::App& app, const CLI::ParseError& error);

}  // namespace vigil
