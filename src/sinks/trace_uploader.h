// SPDX-License-Identifier: Apache-2.0
// Trace upload to vigil-fleet (docs/protocols.md "Trace upload"): once a trace session that was
// started with an upload request has a process's file written, the daemon queues it here; one
// thread of the uploader's own reads the file (capped), gzips it unless it already is gzip, and
// POSTs it to <fleet>/api/v1/traces?request_id=R&host=H&job_id=J&pid=P&rank=K&trace_id=T with
// the host's fleet token, retrying with exponential backoff until the service takes it (2xx),
// refuses it for good (400/403/404/409/413) or the upload's deadline passes. Enqueue() never
// blocks on the network, so callers on RPC or ticker threads are safe. The last uploads and the
// totals are kept for `vigil status`. The queue and the worker are the push pipeline every sink
// shares (push_pipeline.h). Owner: sinks. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "base/beneath.h"
#include "base/status.h"
#include "sinks/backoff.h"
#include "sinks/push_pipeline.h"

namespace vigil {

struct TraceUploaderOptions {
  std::string url;      // The fleet URL as given to --fleet-url (http://HOST:PORT[/path]).
  std::string host;     // This host's name, as in the fleet push.
  std::string token;    // Bearer token; "" sends none.
  std::string ca_file;  // PEM bundle for an https URL ("" = system store).
  size_t max_file_bytes = 512 << 20;   // Trace files larger than this are not uploaded.
  size_t max_upload_bytes = 64 << 20;  // Compressed; larger is not uploaded.
  int64_t deadline_ns = int64_t{1800} * 1000000000;  // Per upload, from its queueing.
  int64_t request_timeout_ns = int64_t{120} * 1000000000;
  BackoffOptions backoff{500'000'000, 60'000'000'000, 2.0, 0.2};
  size_t max_queue = 1024;
  size_t keep_recent = 64;  // Finished uploads kept for status.
};

struct TraceUpload {
  std::string request_id;  // "": a trace the daemon took on its own (origin, reason, expected).
  std::string trace_id;
  std::string job_id;
  std::string path;  // Where the file is, for status and logs.
  int32_t pid = 0;
  int32_t rank = -1;        // -1: not known (taken from the file's distributedInfo when present).
  std::string origin = "";  // "auto:<policy>"
  std::string reason = "";  // Why the policy took it.
  int64_t expected_files = 0;  // Processes the session traced.
  FileBeneath file = {};       // How the daemon opens it (empty: `path`, the daemon's own file).
};

struct TraceUploadState {
  TraceUpload upload;
  std::string state = "queued";  // queued | sending | uploaded | failed
  int attempts = 0;
  std::string error;
  uint64_t bytes = 0;  // As sent.
  int64_t queued_unix_ns = 0;
  int64_t finished_unix_ns = 0;
};

// Reads an upload's file: a regular file of the expected owner, no symlink followed, capped.
StatusOr<std::string> ReadTraceFile(const TraceUpload& upload, size_t max_bytes);

class TraceUploader : private PushStage<TraceUpload> {
 public:
  // InvalidArgument for a URL that is not http(s)://HOST[:PORT][/path] or an empty host.
  static StatusOr<std::unique_ptr<TraceUploader>> Create(TraceUploaderOptions options);
  ~TraceUploader() override;
  TraceUploader(const TraceUploader&) = delete;
  TraceUploader& operator=(const TraceUploader&) = delete;

  // Queues one file. False (and recorded as failed) once stopped; when max_queue uploads wait
  // already, the oldest is recorded as failed ("upload queue full").
  bool Enqueue(TraceUpload upload);
  // Totals and the recent uploads, for vigilStatus.
  nlohmann::json StatusJson() const;
  // Retries what waits now and waits until nothing is queued or sending, at most timeout_ns.
  void WaitIdle(int64_t timeout_ns);
  void Stop();

  // The rank in a Kineto trace's "distributedInfo" within its first bytes, or -1.
  static int32_t PeekRank(const std::string& head);

 private:
  struct Item {
    TraceUploadState state;
    int64_t deadline_mono = 0;
    int64_t next_try_mono = 0;
    std::unique_ptr<Backoff> backoff;
  };
  enum class Outcome { kDone, kRefused, kRetry };

  explicit TraceUploader(TraceUploaderOptions options);
  // PushStage, on the pipeline's worker thread: take uploads in, send those due, retry later.
  void Process(std::vector<TraceUpload> uploads) override;
  int64_t Pump(bool stopping) override;
  void OnFlush() override;
  bool Settled() const override;
  void SendAndSettle(Item item);  // `item` was taken out of pending_ with sending_ set.
  Outcome SendOne(Item* item, std::string* error);
  void FinishLocked(Item item, const std::string& state, const std::string& error);
  void Dropped(TraceUpload upload);  // By the pipeline: over its queue, or after Stop().

  const TraceUploaderOptions options_;
  std::string base_url_;  // scheme://host:port
  std::string path_;      // .../api/v1/traces

  mutable std::mutex mu_;     // What StatusJson() reads.
  std::deque<Item> pending_;  // Taken from the pipeline: sending, or waiting for a retry.
  size_t in_pipeline_ = 0;    // Enqueued, not yet taken.
  bool sending_ = false;
  std::deque<TraceUploadState> recent_;
  uint64_t uploaded_ = 0, failed_ = 0, bytes_sent_ = 0;
  PushPipeline<TraceUpload> pipeline_;  // Last: its thread calls the members above.
};

}  // namespace vigil
