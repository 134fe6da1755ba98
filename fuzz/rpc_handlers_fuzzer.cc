// SPDX-License-Identifier: Apache-2.0
// Fuzzes every control-RPC handler through one dispatcher wired as vigild wires it: the daemon's
// methods (getStatus, vigilStatus, vigilLatest, vigilRange, vigilProcesses over a real series
// store holding a few minutes of samples), the GPU profiling pause, and the trace-session
// methods (setKinetOnDemandRequest, vigilTrace*) over a real registry holding two processes and
// a trace root in a scratch directory. The input is the JSON text of one request frame; a JSON
// array of up to 8 objects is dispatched as a sequence of requests, so a start can be followed by
// its status or cancel. Each request is sent twice: by an unauthenticated TCP peer (control
// methods must refuse) and by root over the unix socket (everything runs). Invariants: the
// dispatcher never throws, every reply is a JSON object, and every reply serialises. State is
// rebuilt for each input, so a crash reproduces from its input alone.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "base/logging.h"
#include "base/time_util.h"
#include "collectors/watch_list.h"
#include "daemon/api.h"
#include "daemon/gpu_methods.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/fuzz_temp_dir.h"
#include "gpu/profiling_control.h"
#include "ipc/trace_rpc.h"
#include "metrics/series_store.h"

namespace {

constexpr vigil::MetricDesc kCpu{"vigil_cpu_seconds_total", "CPU time.",
                                 vigil::MetricKind::kCounter, "seconds"};
constexpr vigil::MetricDesc kMem{"vigil_memory_bytes", "Memory.", vigil::MetricKind::kGauge,
                                 "bytes"};

struct Daemon {
  vigil::fuzz::FuzzTempDir traces;
  vigil::SeriesStore store;
  vigil::daemon::DaemonView view;

  Daemon() {
    // Five minutes of samples at 10 s, ending now, for two label sets of two families.
    const int64_t now = vigil::UnixNanos();
    for (int i = 30; i >= 0; --i) {
      vigil::MetricBatch batch;
      batch.time_ns = now - int64_t{i} * 10 * vigil::kNanosPerSecond;
      vigil::MetricWriter out(&batch);
      out.Add(kCpu, 100.0 - i, {{"mode", "user"}, {"cpu", "0"}});
      out.Add(kCpu, 50.0 - i / 2.0, {{"mode", "system"}, {"cpu", "0"}});
      out.Add(kMem, 1e9 + i, {{"node", "0"}});
      store.Append(batch);
    }
    view.store = &store;
    view.watch_list = std::make_shared<vigil::WatchList>();
    view.watch_list->Watch(getpid(), "fuzz", now);
    view.hostname = "fuzzhost";
    view.user = "root";
    view.pid = getpid();
    view.start_unix_ns = now;
  }
};

// Static, so its scratch directory is removed when the process exits.
Daemon& TheDaemon() {
  static Daemon daemon;
  return daemon;
}

void Check(const nlohmann::json& reply) {
  VIGIL_FUZZ_CHECK(reply.is_object());
  const std::string text = reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  VIGIL_FUZZ_CHECK(!text.empty());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  vigil::InitLogging(vigil::LogLevel::kOff);
  TheDaemon();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Daemon& d = TheDaemon();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return 0;  // The server answers "request is not valid JSON" before any handler runs.
  }
  std::vector<nlohmann::json> requests;
  if (doc.is_object()) {
    requests.push_back(std::move(doc));
  } else if (doc.is_array()) {
    for (auto& item : doc) {
      if (item.is_object() && requests.size() < 8) {
        requests.push_back(std::move(item));
      }
    }
  }

  // A fresh registry and trace service per input; the daemon's store is read-only here.
  int64_t mono = 1'000'000'000;
  vigil::ProcessRegistryOptions ro;
  ro.verify_credentials = false;
  vigil::ProcessRegistry registry(ro, [&mono] { return mono; });
  for (int32_t pid : {4242, 4343}) {
    vigil::RegisteredProcess p;
    p.pid = p.host_pid = pid;
    p.uid = 1000;
    p.job_id = pid == 4242 ? "1234" : "";
    p.kineto_job_id = pid == 4242 ? 1234 : 0;
    p.pids = p.host_pids = {pid, 1};
    p.source = "kineto";
    registry.Adopt(p);
  }
  vigil::TraceServiceOptions to;
  to.trace_root = d.traces.path() + "/root";
  to.proc_root = d.traces.path() + "/proc";  // Empty: no process's files are visible.
  to.unix_clock = [] { return int64_t{1'764'410'994} * vigil::kNanosPerSecond; };
  vigil::TraceService service(to, &registry);
  vigil::RpcDispatcher dispatcher;
  vigil::daemon::RegisterDaemonMethods(&d.view, &dispatcher);
  vigil::daemon::RegisterGpuMethods(&dispatcher);
  vigil::RegisterTraceMethods(&dispatcher, &service);

  vigil::CallerInfo tcp;
  tcp.transport = vigil::CallerInfo::Transport::kTcp;
  tcp.peer = "127.0.0.1:40000";
  vigil::CallerInfo root;
  root.transport = vigil::CallerInfo::Transport::kUnix;
  root.pid = 1;
  root.uid = 0;
  root.gid = 0;
  root.peer = "unix:pid=1,uid=0";

  for (const nlohmann::json& request : requests) {
    Check(dispatcher.Dispatch(request, tcp));
    Check(dispatcher.Dispatch(request, root));
    mono += 3 * vigil::kNanosPerSecond;
    service.Tick();
  }
  mono += 600 * vigil::kNanosPerSecond;  // Past every deadline: sessions finish or fail.
  service.Tick();
  for (const vigil::TraceSession& s : service.List()) {
    Check(vigil::TraceSessionToJson(s));
  }
  [[maybe_unused]] vigil::Status resumed = vigil::ResumeGpuProfiling();
  d.traces.Clear();
  return 0;
}
