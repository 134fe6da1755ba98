// SPDX-License-Identifier: Apache-2.0
// The daemon's end of the IPC fabric: binds the endpoint (abstract "dynolog" by default, or
// <socket_dir>/<name>), validates every datagram, and answers Kineto's "ctxt" (registration:
// int32 count) and "req" (poll: the pending config string, possibly empty) plus Vigil's
// extensions ("vigil.reg", "vigil.poll", "vigil.step", JSON payloads). Replies go back to the
// sender's address without blocking, each destination from its own socket (ipc/reply_sockets.h),
// so peers that never read cannot starve the others; malformed, oversized and unknown datagrams
// are counted and dropped. Owner: ipc. Handle() runs on the endpoint's receive thread; Collect() on
// any.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "ipc/endpoint.h"
#include "ipc/job_metrics.h"
#include "ipc/process_registry.h"
#include "ipc/reply_sockets.h"
#include "metrics/metric.h"

namespace vigil {

struct FabricServerOptions {
  std::string ipc_name = "dynolog";  // vigild --ipc-name.
  std::string socket_dir;            // $KINETO_IPC_SOCKET_DIR; empty: abstract namespace.
};

class FabricServer {
 public:
  // `job_metrics` may be null (progress reports are then only liveness).
  FabricServer(ProcessRegistry* registry, JobMetrics* job_metrics,
               ReplySocketsOptions reply_options = {});
  ~FabricServer();

  Status Start(const FabricServerOptions& options);
  void Stop();

  // Processes one datagram and sends the reply, if any (exposed for tests and benchmarks).
  void Handle(const ReceivedDatagram& datagram);
  // vigil_daemon_ipc_* counters.
  Status Collect(MetricWriter& out) const;

  const IpcAddress& address() const;

 private:
  void Reply(const ReceivedDatagram& to, std::string_view type, std::string_view payload);
  void HandleVigil(const ReceivedDatagram& datagram, const IpcMessage& message);

  ProcessRegistry* registry_;
  JobMetrics* job_metrics_;
  std::unique_ptr<IpcEndpoint> endpoint_;
  ReplySockets replies_;
};

}  // namespace vigil
