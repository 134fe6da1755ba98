// SPDX-License-Identifier: Apache-2.0
// What every `vigil` subcommand shares: the global options (--host, --port, --unix-socket,
// --token-file, --timeout), how they turn into a daemon address, one-shot RPC calls with the
// token added, and the exit-code convention (0 ok, 1 failed, 2 usage, 3 daemon unreachable).
// main() owns one CliContext; subcommands borrow it. Single-threaded.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "base/status.h"

namespace vigil {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitUnreachable = 3;

struct CliContext {
  // Global options, set by CLI11 before any subcommand callback runs.
  std::string host;  // HOST[:PORT], [V6]:PORT, or unix:/path.
  int port = 0;
  std::string unix_socket;
  std::string token_file;
  std::string timeout = "5s";
  // Where the subcommand's result lands; main() returns it.
  int exit_code = kExitOk;

  // The daemon to talk to: --unix-socket, else --host (with --port or 1778 when it has none),
  // else 127.0.0.1:--port, else the default unix socket when it exists, else 127.0.0.1:1778.
  std::string Target() const;
  // One request on a fresh connection, with the token (if any) added. A daemon that cannot be
  // reached is Unavailable or DeadlineExceeded; an {"error": ...} reply becomes an error status
  // (Unimplemented for an unknown method) so callers handle one kind of failure.
  StatusOr<nlohmann::json> Call(nlohmann::json request) const;
  // Prints "vigil: <what>: <error>" (plus how to start vigild when unreachable) to stderr and
  // returns the matching exit code.
  int Fail(const Status& status, const std::string& what) const;
  // The --timeout value in nanoseconds (5 s when it does not parse; main() validates it first).
  int64_t TimeoutNs() const;
};

// Registers --host, --port, --unix-socket, --token-file and --timeout on the top-level app.
void AddGlobalOptions(CLI::App& app, CliContext& ctx);

// Runs `body` and stores its exit code in ctx.exit_code, turning an unexpected reply shape
// (nlohmann::json exceptions) into exit code 1 with a message.
void RunCommand(CliContext& ctx, const std::function<int()>& body);

}  // namespace vigil
