// SPDX-License-Identifier: Apache-2.0
// CPU profile upload to vigil-fleet (docs/protocols.md "CPU profile upload"): when vigild's
// continuous mode finishes a sampling window, each job's stacks of that window are queued here as
// folded text; the uploader's worker gzips them and POSTs them to
// <fleet>/api/v1/cpu-profiles?job_id=J&host=H&start_ns=S&end_ns=E&frequency_hz=F with the host's
// fleet token (the same URL, token and CA file as the fleet push and trace uploads). Windows go
// in order; a failure that may pass (no connection, 5xx, 408, 429) stops the round and waits
// with exponential backoff, a refusal (other 4xx) drops that window, and a window older than the
// deadline or beyond the queue bound is dropped: a fleet that is down costs memory for at most
// max_queue windows and never blocks sampling. Every outcome is counted for `vigil status`.
// Owner: sinks. Thread-safe: Enqueue() never blocks on the network.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "sinks/backoff.h"
#include "sinks/push_pipeline.h"

namespace vigil {

struct ProfileUploaderOptions {
  std::string url;      // The fleet URL as given to --fleet-url (http[s]://HOST:PORT[/path]).
  std::string host;     // This host's name, as in the fleet push.
  std::string token;    // Bearer token; "" sends none.
  std::string ca_file;  // PEM bundle for an https URL ("" = system store).
  size_t max_upload_bytes = 4 << 20;  // Gzipped, as the fleet accepts; larger is not sent.
  int64_t deadline_ns = int64_t{600} * 1000000000;  // A window older than this is dropped.
  int64_t request_timeout_ns = int64_t{30} * 1000000000;
  BackoffOptions backoff{1'000'000'000, 60'000'000'000, 2.0, 0.2};
  size_t max_queue = 32;  // Windows waiting; the oldest is dropped beyond.
};

struct ProfileUpload {
  std::string job_id;
  int64_t start_unix_ns = 0, end_unix_ns = 0;
  int frequency_hz = 0;
  uint64_t samples = 0;
  std::string folded;  // The window's stacks, folded (profile/folded_output.h).
};

class ProfileUploader : private PushStage<ProfileUpload> {
 public:
  // InvalidArgument for a URL that is not http(s)://HOST[:PORT][/path] or an empty host.
  static StatusOr<std::unique_ptr<ProfileUploader>> Create(ProfileUploaderOptions options);
  ~ProfileUploader() override;
  ProfileUploader(const ProfileUploader&) = delete;
  ProfileUploader& operator=(const ProfileUploader&) = delete;

  // Queues one window; false (counted as failed) once stopped.
  bool Enqueue(ProfileUpload upload);
  // {"url", "state": "idle"|"ok"|"retrying"|"failing", "uploaded", "failed", "queued",
  //  "bytes_sent", "samples_sent", "last_error", "last_error_time", "last_upload_time"}.
  nlohmann::json StatusJson() const;
  // Retries what waits now and waits until nothing is queued, at most timeout_ns.
  void WaitIdle(int64_t timeout_ns);
  void Stop();

 private:
  struct Item {
    ProfileUpload upload;
    std::string body;  // Gzipped folded text.
    int64_t queued_mono = 0;
  };
  enum class Outcome { kDone, kRefused, kRetry };

  explicit ProfileUploader(ProfileUploaderOptions options);
  void Process(std::vector<ProfileUpload> uploads) override;
  int64_t Pump(bool stopping) override;
  void OnFlush() override;
  bool Settled() const override;
  Outcome Send(const Item& item, std::string* error);
  void FailLocked(const ProfileUpload& upload, const std::string& error);

  const ProfileUploaderOptions options_;
  std::string base_url_;  // scheme://host:port
  std::string path_;      // .../api/v1/cpu-profiles

  mutable std::mutex mu_;  // Everything below but the pipeline.
  std::deque<Item> pending_;
  Backoff backoff_;
  int64_t next_try_mono_ = 0;
  size_t in_pipeline_ = 0;
  bool last_failed_ = false;
  bool waiting_retry_ = false;  // The head window failed in a way that may pass and waits.
  bool sending_ = false;        // One window is on the wire (counted as queued).
  uint64_t uploaded_ = 0, failed_ = 0, bytes_sent_ = 0, samples_sent_ = 0;
  std::string last_error_;
  int64_t last_error_unix_ns_ = 0, last_upload_unix_ns_ = 0;
  PushPipeline<ProfileUpload> pipeline_;  // Last: its thread calls the members above.
};

}  // namespace vigil
