// SPDX-License-Identifier: Apache-2.0
#include "cli/cli_context.h"

#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "rpc/net_util.h"
#include "rpc/rpc_client.h"

namespace vigil {

std::string CliContext::Target() const {
  if (!unix_socket.empty()) {
    return "unix:" + unix_socket;
  }
  if (!host.empty()) {
    if (host.rfind("unix:", 0) == 0) {
      return host;
    }
    StatusOr<HostPort> hp = ParseHostPort(host, port > 0 ? port : kDefaultRpcPort);
    if (!hp.ok()) {
      return host;  // Connect() reports the problem with this text.
    }
    const bool v6 = hp->host.find(':') != std::string::npos;
    return v6 ? fmt::format("[{}]:{}", hp->host, hp->port)
              : fmt::format("{}:{}", hp->host, hp->port);
  }
  if (port > 0) {
    return fmt::format("127.0.0.1:{}", port);
  }
  const std::string socket_path = DefaultDaemonSocketPath();
  if (PathExists(socket_path)) {
    return "unix:" + socket_path;
  }
  return fmt::format("127.0.0.1:{}", kDefaultRpcPort);
}

int64_t CliContext::TimeoutNs() const {
  StatusOr<int64_t> ns = ParseDuration(timeout);
  return ns.ok() && *ns > 0 ? *ns : 5 * kNanosPerSecond;
}

StatusOr<nlohmann::json> CliContext::Call(nlohmann::json request) const {
  if (!token_file.empty()) {
    VIGIL_ASSIGN_OR_RETURN(std::string token, ReadSmallFile(token_file, 4096));
    request["token"] = std::string(Trim(token));
  }
  const std::string target = Target();
  StatusOr<RpcClient> client = RpcClient::Connect(target, TimeoutNs());
  if (!client.ok()) {
    const StatusCode code = client.status().code() == StatusCode::kDeadlineExceeded
                                ? StatusCode::kDeadlineExceeded
                                : StatusCode::kUnavailable;
    return Status(code, client.status().message());
  }
  StatusOr<nlohmann::json> reply = client->Call(request, TimeoutNs());
  if (!reply.ok()) {
    // Reached but the exchange failed (a peer that is not vigild, a daemon that hung up):
    // not "unreachable", so DataLoss rather than Unavailable.
    return DataLossError(reply.status().message());
  }
  if (reply->is_object()) {
    auto error = reply->find("error");
    if (error != reply->end()) {
      const std::string message = error->is_string() ? error->get<std::string>() : error->dump();
      if (message.rfind("unknown method", 0) == 0) {
        return UnimplementedError("vigild at " + target + ": " + message);
      }
      return FailedPreconditionError("vigild at " + target + ": " + message);
    }
  }
  return reply;
}

int CliContext::Fail(const Status& status, const std::string& what) const {
  std::fprintf(stderr, "vigil: %s: %s\n", what.c_str(), status.message().c_str());
  if (status.code() == StatusCode::kUnavailable || status.code() == StatusCode::kDeadlineExceeded) {
    std::fprintf(stderr,
                 "vigil: cannot reach vigild at %s. Is it running? Start it with `vigild` "
                 "(or `systemctl start vigild`), or point vigil at a running daemon with "
                 "--host HOST[:PORT] or --unix-socket PATH.\n",
                 Target().c_str());
    return kExitUnreachable;
  }
  return kExitFailure;
}

void RunCommand(CliContext& ctx, const std::function<int()>& body) {
  try {
    ctx.exit_code = body();
  } catch (const std::exception& e) {  // Third-party (JSON) exceptions stop here.
    std::fprintf(stderr, "vigil: unexpected reply from %s: %s\n", ctx.Target().c_str(), e.what());
    ctx.exit_code = kExitFailure;
  }
}

void AddGlobalOptions(CLI::App& app, CliContext& ctx) {
  app.add_option("--host,--hostname", ctx.host,
                 "Daemon to talk to: HOST[:PORT], [V6ADDR]:PORT or unix:/path (default: the "
                 "local unix socket if present, else 127.0.0.1:1778); --hostname is Dynolog's "
                 "spelling")
      ->type_name("HOST[:PORT]");
  app.add_option("--port", ctx.port, "Daemon RPC port (default 1778)")->check(CLI::Range(1, 65535));
  app.add_option("--unix-socket", ctx.unix_socket, "Daemon unix socket path")->type_name("PATH");
  app.add_option("--token-file", ctx.token_file,
                 "File holding the daemon's token (needed beyond loopback)")
      ->type_name("FILE");
  app.add_option("--timeout", ctx.timeout, "How long to wait for the daemon (e.g. 5s, 500ms)")
      ->type_name("DURATION")
      ->check([](const std::string& text) -> std::string {
        StatusOr<int64_t> ns = ParseDuration(text);
        return ns.ok() && *ns > 0 ? "" : "not a duration (try 5s or 500ms): " + text;
      });
}

}  // namespace vigil
