// SPDX-License-Identifier: Apache-2.0
// One `vigil trace` request fanned out to 256 daemons on loopback (each a real RpcServer with
// the trace methods and one registered process), measured end to end: host-list expansion,
// parallel connects, vigilTraceStart on every host, replies collected. Target: under 1 s.
#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "base/time_util.h"
#include "cli/cli_context.h"
#include "ipc/trace_rpc.h"
#include "rpc/rpc_server.h"

namespace vigil {

void AddTraceCommand(CLI::App& app, CliContext& ctx);

namespace {

struct Daemon {
  explicit Daemon(const std::string& root) {
    ProcessRegistryOptions ro;
    ro.verify_credentials = false;
    registry = std::make_unique<ProcessRegistry>(ro, &MonotonicNanos);
    TraceServiceOptions to;
    to.trace_root = root;
    to.max_starts_per_minute = 0;
    service = std::make_unique<TraceService>(to, registry.get());
    RegisterTraceMethods(&dispatcher, service.get());
    RpcServerOptions so;
    so.tcp_listen = "127.0.0.1:0";
    server = std::make_unique<RpcServer>(so, &dispatcher);
    ok = server->Start().ok() &&
         registry->Poll({4242, 0, 0}, KinetoRequest{2, 7, {4242}}, IpcAddress{}).ok();
  }
  bool ok = false;
  std::unique_ptr<ProcessRegistry> registry;
  std::unique_ptr<TraceService> service;
  RpcDispatcher dispatcher;
  std::unique_ptr<RpcServer> server;
};

void BM_TraceFanOut(benchmark::State& state) {
  const int hosts_count = static_cast<int>(state.range(0));
  char tmpl[] = "/tmp/vigil-fanout-XXXXXX";
  const std::string root = mkdtemp(tmpl);
  std::vector<std::unique_ptr<Daemon>> daemons;
  std::string hosts;
  for (int i = 0; i < hosts_count; ++i) {
    daemons.push_back(std::make_unique<Daemon>(fmt::format("{}/{}", root, i)));
    if (!daemons.back()->ok) {
      state.SkipWithError("daemon did not start");
      return;
    }
    hosts +=
        fmt::format("{}127.0.0.1:{}", hosts.empty() ? "" : ",", daemons.back()->server->tcp_port());
  }
  const int saved_stdout = dup(1);
  const int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
  for (auto _ : state) {
    CliContext ctx;
    CLI::App app{"vigil"};
    app.require_subcommand(1);
    app.fallthrough();
    AddGlobalOptions(app, ctx);
    AddTraceCommand(app, ctx);
    std::vector<std::string> args = {"vigil", "trace",      "--job-id", "7",     "--hosts",
                                     hosts,   "--parallel", "64",       "--json"};
    std::vector<const char*> argv;
    for (const std::string& a : args) {
      argv.push_back(a.c_str());
    }
    dup2(devnull, 1);
    app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
    fflush(stdout);
    dup2(saved_stdout, 1);
    if (ctx.exit_code != kExitOk) {
      state.SkipWithError("trace failed");
      break;
    }
    for (auto& d : daemons) {  // Free the processes for the next round.
      for (const TraceSession& s : d->service->List()) {
        if (!s.Done()) {
          (void)d->service->Cancel(s.trace_id);
        }
      }
    }
  }
  close(devnull);
  close(saved_stdout);
  daemons.clear();
  (void)!system(("rm -rf " + root).c_str());
}
BENCHMARK(BM_TraceFanOut)->Arg(32)->Arg(256)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
