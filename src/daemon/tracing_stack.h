// SPDX-License-Identifier: Apache-2.0
// The daemon's tracing side, wired in one place: the Kineto-compatible IPC fabric, the registry
// of traceable processes, on-demand trace sessions and their RPC methods, libvigil_client's job
// metrics, and the automatic-tracing policies. A ticker thread advances sessions once a second,
// expires silent processes, puts registered processes on the watch list (reason "ipc") and feeds
// per-job GPU utilisation from the series store to the low-utilisation policy. With a fleet URL
// it also queues the written files of sessions started with an upload request on the trace
// uploader (docs/protocols.md "Trace upload").
// Owner: Daemon (must outlive the RPC server and the scheduler that hold pointers into it).
#pragma once

#include <memory>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>

#include "attribution/job_resolver.h"
#include "base/status.h"
#include "collectors/collector.h"
#include "collectors/watch_list.h"
#include "daemon/config.h"
#include "ipc/auto_trace.h"
#include "ipc/fabric_server.h"
#include "ipc/job_metrics.h"
#include "ipc/process_registry.h"
#include "ipc/trace_sessions.h"
#include "metrics/series_store.h"
#include "rpc/dispatcher.h"
#include "sinks/trace_uploader.h"

namespace vigil::daemon {

class TracingStack {
 public:
  TracingStack(const DaemonConfig& config, std::shared_ptr<JobResolver> resolver,
               std::shared_ptr<WatchList> watch_list, const SeriesStore* store);
  ~TracingStack();
  TracingStack(const TracingStack&) = delete;
  TracingStack& operator=(const TracingStack&) = delete;

  // Registers setKinetOnDemandRequest and the vigilTrace* methods. Before the RPC server starts.
  void RegisterMethods(RpcDispatcher* dispatcher);
  // Opens the IPC socket and starts the ticker. An error (name taken by another daemon, no
  // permission) leaves RPC tracing methods answering and is reported as a reduced feature.
  Status Start();
  // Opens and checks the trace root (the daemon's own directory, see ipc/trace_root.h). An error
  // refuses every trace until it is fixed and is reported as a reduced feature.
  Status OpenTraceRoot();
  void Stop();
  // For the ipc_fabric collector: datagram counters and the vigil_job_* metrics from client
  // reports. Thread-safe.
  Status CollectMetrics(MetricWriter& out);
  // The uploader's state for vigilStatus; null when traces are not uploaded (no fleet URL).
  nlohmann::json UploadStatusJson() const;
  // The processes registered over the IPC fabric, for vigilStatus: host pid, pid in its own
  // namespace, uid, job id, what registered it (kineto, vigil_client), the trace it is busy with
  // and how long ago it last polled.
  nlohmann::json RegisteredProcessesJson() const;
  // Host pids of the live processes registered with `job_id`.
  std::vector<int> RegisteredPidsOfJob(const std::string& job_id) const;

 private:
  void Loop(std::stop_token stop);
  void FeedUtilisation();
  void QueueUploads();

  const DaemonConfig config_;
  std::shared_ptr<WatchList> watch_list_;
  const SeriesStore* store_;
  std::unique_ptr<ProcessRegistry> registry_;
  std::unique_ptr<TraceService> traces_;
  std::unique_ptr<JobMetrics> job_metrics_;
  std::unique_ptr<FabricServer> fabric_;
  std::unique_ptr<AutoTracer> auto_tracer_;                   // Null when no policy is on.
  std::unique_ptr<TraceUploader> uploader_;                   // Null without a fleet URL.
  std::set<std::pair<std::string, int32_t>> queued_uploads_;  // (trace id, host pid); ticker.
  std::jthread ticker_;
};

}  // namespace vigil::daemon
