// SPDX-License-Identifier: Apache-2.0
// Fleet push sink: sends vigild's samples to vigil-fleet (docs/protocols.md "Fleet push"), turned
// on by --fleet-url. Consumed batches are merged into payloads of at most max_batch_samples,
// gzip-compressed and written to a spool directory before any send, then POSTed oldest first
// with retries and exponential backoff (the shared delivery, delivery.h). A payload leaves the
// spool only when the service has accepted it (2xx) or rejected it as malformed (400/413, counted
// as dropped). While the service is down the spool grows up to spool_max_bytes, then the oldest
// payloads are dropped and counted; on restart of the daemon the spool is replayed in order.
// Every payload keeps its (host, batch_id), so a resend after a lost reply is deduplicated by the
// service. Owner: fleet. Thread-safe: Consume() only queues on the shared push pipeline
// (sink_pipeline.h), whose thread encodes, spools and sends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sinks/delivery.h"
#include "sinks/sink.h"
#include "sinks/sink_pipeline.h"

namespace vigil {

struct FleetPushSinkOptions {
  std::string url;        // http://HOST:PORT[/path]; the path defaults to /api/v1/ingest.
  std::string host;       // This host's name: the batch's "host" (and its token's host).
  std::string token;      // Bearer token; "" sends none.
  std::string ca_file;    // PEM CA bundle that signs an https service ("" = the system's).
  std::string spool_dir;  // Where payloads wait; "" keeps them in memory only.
  size_t spool_max_bytes = 256 << 20;  // Compressed bytes; past it the oldest payload is dropped.
  size_t max_batch_samples = 5000;
  int64_t linger_ns = 1000000000;          // Wait this long to merge batches into one payload.
  int64_t initial_backoff_ns = 250000000;  // Doubles per failed send up to max_backoff_ns.
  int64_t max_backoff_ns = 30000000000;
  int64_t request_timeout_ns = 10000000000;
  int64_t stop_timeout_ns =
      2000000000;  // Stop() tries to deliver this long; the rest stays spooled.
  size_t max_queued_batches = 4096;
  // Sample names pushed (prefix match); empty pushes everything. By default what the ledger and
  // the host inventory use.
  std::vector<std::string> name_prefixes = {"vigil_gpu_", "vigil_job_", "vigil_daemon_info",
                                            "vigil_collector_success"};
};

struct FleetPushStats {
  uint64_t sent_batches = 0;  // Payloads the service accepted.
  uint64_t sent_samples = 0;
  uint64_t duplicate_batches = 0;  // Accepted, but the service had them already (resent).
  uint64_t duplicate_samples = 0;
  uint64_t dropped_batches = 0;  // Queue overflow, spool overflow or rejected by the service.
  uint64_t dropped_samples = 0;
  uint64_t spooled_batches = 0;  // Waiting now.
  uint64_t spooled_bytes = 0;
  uint64_t send_failures = 0;
  uint64_t at_risk_bytes = 0;  // Spooled in memory because spool_dir cannot be written.
};

class FleetPushSink : public Sink, private PipelineStage {
 public:
  // InvalidArgument for a URL that is not http://HOST:PORT[/path] or an empty host. The spool
  // directory is created when missing and its payloads are queued for replay.
  static StatusOr<std::unique_ptr<FleetPushSink>> Create(FleetPushSinkOptions options);
  ~FleetPushSink() override;
  FleetPushSink(const FleetPushSink&) = delete;
  FleetPushSink& operator=(const FleetPushSink&) = delete;

  std::string_view name() const override { return "fleet"; }
  void Consume(BatchPtr batch) override;
  SinkHealth health() const override;
  // Waits until everything consumed has been accepted by the service (or timeout_ns passes).
  void Flush(int64_t timeout_ns) override;
  void Stop() override;
  FleetPushStats stats() const;

  // The payload JSON of `samples` (exposed for tests).
  static std::string EncodePayload(const std::string& host, const std::string& batch_id,
                                   int64_t seq, const std::vector<const Sample*>& samples);

 private:
  explicit FleetPushSink(FleetPushSinkOptions options);
  // Spool files of earlier versions (<seq>-<samples>.gz) go into the buffer, oldest first.
  void ImportLegacySpool();
  void Process(std::vector<BatchPtr> batches) override;
  int64_t Pump(bool stopping) override { return delivery_.Pump(stopping); }
  void OnFlush() override { delivery_.RetryNow(); }
  bool Settled() const override { return delivery_.empty(); }
  SendResult Send(std::string_view gzipped);

  const FleetPushSinkOptions options_;
  std::string base_url_;  // scheme://host:port
  std::string path_;
  int64_t boot_ns_ = 0;
  int64_t next_seq_ = 0;   // Pipeline thread only.
  Delivery delivery_;      // Pipeline thread only (stats() from any).
  SinkPipeline pipeline_;  // Last: its thread calls into every member above.
};

}  // namespace vigil
