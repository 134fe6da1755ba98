// SPDX-License-Identifier: Apache-2.0
// Prometheus remote-write 1.0 sink (`vigild --remote-write-url URL`): pushes every sample to a
// Prometheus (--web.enable-remote-write-receiver), VictoriaMetrics, Mimir or any other receiver as
// snappy-compressed protobuf WriteRequests over HTTP POST with the headers the spec requires.
// Labels are validated and sorted (remote_write_labels.h), series that stop appearing get one
// stale marker (staleness_tracker.h), and requests go through the shared delivery (delivery.h):
// failed requests are retried with exponential backoff and jitter and kept in a bounded on-disk
// buffer until the receiver takes them, in order, so an outage loses nothing.
// Threading: Consume() only queues on the shared push pipeline (sink_pipeline.h; bounded, the
// oldest batch is dropped and counted when full), whose thread encodes, sends and buffers.
// health(), stats(), Flush() and Stop() may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/http_exchange.h"
#include "base/status.h"
#include "sinks/backoff.h"
#include "sinks/delivery.h"
#include "sinks/remote_write_labels.h"
#include "sinks/sink.h"
#include "sinks/sink_pipeline.h"
#include "sinks/staleness_tracker.h"

namespace vigil {

struct RemoteWriteSinkOptions {
  // http://host:port/path or https://...; a URL without a path posts to /api/v1/write.
  std::string url;
  // Every series gets label host_label_name=host_label_value unless it carries that label already.
  // An empty value means this machine's hostname; an empty name adds no label.
  std::string host_label_name = "host";
  std::string host_label_value;
  // Authorization header value ("Bearer ..." or "Basic ..."); empty sends none.
  std::string authorization;
  // User-Agent is "vigil/<version>"; empty = the version this build was made from.
  std::string version;
  // Where requests wait while the receiver is unreachable; "" = in memory (lost on restart).
  std::string buffer_dir;
  size_t max_buffer_bytes = 256ull << 20;
  size_t max_queued_batches = 256;        // Batches waiting for the sink thread.
  size_t max_samples_per_request = 2000;  // Prometheus's own default max_samples_per_send.
  int64_t connect_timeout_ns = 5'000'000'000;
  int64_t request_timeout_ns = 30'000'000'000;  // Read and write deadline of one request.
  BackoffOptions backoff;
  bool staleness_markers = true;
};

// Counters since the sink started. Requests are counted after encoding (one WriteRequest each).
struct RemoteWriteStats {
  uint64_t samples_sent = 0;       // Samples (stale markers included) the receiver accepted.
  uint64_t requests_sent = 0;      // Requests the receiver accepted (2xx).
  uint64_t send_failures = 0;      // Attempts that failed and will be retried (5xx, 429, network).
  uint64_t requests_rejected = 0;  // Dropped: the receiver answered 4xx other than 429.
  uint64_t samples_rejected = 0;   // Samples in those requests.
  uint64_t batches_dropped = 0;    // Dropped: the queue was full, or consumed after Stop().
  uint64_t invalid_samples = 0;    // Dropped before sending: duplicate or invalid label names.
  uint64_t stale_markers = 0;      // Stale markers generated.
  uint64_t buffered_requests = 0;  // Waiting in the buffer now.
  uint64_t buffered_bytes = 0;
  uint64_t buffer_dropped = 0;  // Oldest requests deleted to keep the buffer in its bound.
  uint64_t buffer_corrupt = 0;  // Buffer entries that failed their checksum.
  uint64_t at_risk_bytes = 0;   // Buffered in memory because buffer_dir cannot be written.
  int last_http_status = 0;     // 0 = no answer (network error) or nothing sent yet.
  std::string last_error;       // "" after a success.
};

class RemoteWriteSink : public Sink, private PipelineStage {
 public:
  // Validates the URL, opens the buffer (indexing what an earlier run left) and starts the thread.
  static StatusOr<std::unique_ptr<RemoteWriteSink>> Create(RemoteWriteSinkOptions options);
  ~RemoteWriteSink() override;
  RemoteWriteSink(const RemoteWriteSink&) = delete;
  RemoteWriteSink& operator=(const RemoteWriteSink&) = delete;

  std::string_view name() const override { return "remote_write"; }
  void Consume(BatchPtr batch) override;
  SinkHealth health() const override;
  // Waits until everything consumed so far has been accepted by the receiver or, while the
  // receiver is failing, written to the buffer.
  void Flush(int64_t timeout_ns) override;
  // Flushes, then stops the thread. Requests still buffered stay in buffer_dir for the next run.
  void Stop() override;

  RemoteWriteStats stats() const;

  // One WriteRequest ready to post.
  struct EncodedRequest {
    uint32_t samples = 0;
    std::string body;  // Snappy-compressed protobuf.
  };

 private:
  RemoteWriteSink(RemoteWriteSinkOptions options, std::string scheme_host_port, std::string path);
  void Process(std::vector<BatchPtr> batches) override;
  int64_t Pump(bool stopping) override;
  bool Settled() const override { return delivery_.empty() || delivery_.failing(); }
  // Turns batches into compressed WriteRequests; counts invalid samples and stale markers.
  void EncodeBatches(const std::vector<BatchPtr>& batches, std::vector<EncodedRequest>* requests);
  SendResult Send(std::string_view body);

  const RemoteWriteSinkOptions options_;
  const std::string path_;
  const std::string client_name_;
  SeriesLabelOptions label_options_;
  const std::string base_url_;  // scheme://host[:port]
  HttpSession session_;         // Keep-alive; pipeline thread only.
  StalenessTracker staleness_;  // Pipeline thread only.
  Delivery delivery_;           // Pipeline thread only (stats() from any).

  mutable std::mutex mu_;
  uint64_t invalid_samples_ = 0;
  uint64_t stale_markers_ = 0;
  SinkPipeline pipeline_;  // Last: its thread calls into every member above.
};

}  // namespace vigil
