// SPDX-License-Identifier: Apache-2.0
// What vigild answers, over both the control RPC (getStatus, getVersion, vigilStatus,
// vigilLatest, vigilRange, vigilProcesses) and HTTP (/api/v1/..., /metrics, /healthz). Both
// surfaces read one DaemonView, so their answers cannot drift apart. Reply shapes are in
// docs/protocols.md. Every function here is called from server threads: what the view points to
// must be thread-safe (the store, scheduler health, sinks' health, the watch list, the resolver).
// Over RPC, replies show other users' pids, paths and upload ids only to privileged callers
// (rpc/dispatcher.h), and request fields are checked for type and range.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attribution/job_resolver.h"
#include "collectors/watch_list.h"
#include "daemon/continuous_profiler.h"
#include "daemon/http_server.h"
#include "daemon/scheduler.h"
#include "metrics/series_store.h"
#include "rpc/dispatcher.h"
#include "sinks/sink.h"

namespace vigil::daemon {

struct Endpoints {
  std::string rpc;          // "127.0.0.1:1778", "" when off.
  std::string unix_socket;  // Socket path, "" when off.
  std::string http;         // "127.0.0.1:9479".
};

struct DaemonView {
  const SeriesStore* store = nullptr;
  const Scheduler* scheduler = nullptr;
  std::vector<Sink*> sinks;
  std::shared_ptr<WatchList> watch_list;  // May be null.
  std::shared_ptr<JobResolver> resolver;  // May be null.
  std::string proc_root = "/proc";
  std::string hostname;
  std::string user;
  int pid = 0;
  int64_t start_unix_ns = 0;
  Endpoints endpoints;
  std::vector<std::string> static_reduced_features;      // Known at start.
  std::function<nlohmann::json()> trace_uploads;         // Null when traces are not uploaded.
  std::function<nlohmann::json()> registered_processes;  // Null without the IPC fabric.
  const ContinuousProfiler* profiler = nullptr;          // Null when continuous mode is off.
  std::atomic<bool> stopping{false};
};

// Features not active in this run: the static list plus collectors a permission keeps out.
std::vector<std::string> ReducedFeatures(const DaemonView& view);
nlohmann::json StatusJson(const DaemonView& view);
// Every watched process, or only those `caller` may see (its own unless privileged).
nlohmann::json ProcessesJson(const DaemonView& view, const CallerInfo* caller = nullptr);
// OK when the first collection pass is done and the loop keeps running.
Status CheckHealth(const DaemonView& view);
// How old a series may be and still count as current: twice the longest interval, plus slack.
int64_t LatestMaxAge(const DaemonView& view);
std::string MetricsText(const DaemonView& view);

void RegisterDaemonMethods(const DaemonView* view, RpcDispatcher* dispatcher);
HttpApi MakeHttpApi(const DaemonView* view);

}  // namespace vigil::daemon
