// SPDX-License-Identifier: Apache-2.0
// Delivery of encoded payloads to a receiver that may be down (remote-write, fleet push): each
// payload is sent, or kept in a bounded DiskBuffer (disk_buffer.h) and retried oldest first with
// exponential backoff (backoff.h) until the receiver accepts it (2xx) or refuses it for good
// (counted as rejected). Order is kept: while older payloads wait, a new one waits behind them.
// A directory that cannot be written (disk full, unwritable state dir) leaves the payloads in
// memory; stats() then names the reason and the bytes at risk, which `vigil status` shows as a
// degraded sink. Thread-compatible (the pipeline's worker thread owns it) except stats(), which
// is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "sinks/backoff.h"
#include "sinks/disk_buffer.h"
#include "sinks/drop_counts.h"
#include "sinks/sink.h"

namespace vigil {

enum class SendOutcome { kAccepted, kRejected, kRetry };

struct SendResult {
  SendOutcome outcome = SendOutcome::kRetry;
  int http_status = 0;  // 0 = no answer.
  std::string error;    // "" when accepted.
  bool duplicate =
      false;  // Accepted, but the receiver had it already (a resend after a lost reply).
};

// Sends one payload body; runs on the delivery's thread and must have a deadline of its own.
using SendFunction = std::function<SendResult(std::string_view body)>;

struct DeliveryOptions {
  std::string name;  // For logs: "remote-write", "fleet".
  DiskBufferOptions buffer;
  BackoffOptions backoff;
  // Write every payload to the buffer before its first send (a crash mid-send loses nothing);
  // otherwise a payload is buffered only when it cannot be sent at once.
  bool buffer_first = false;
  int max_sends_per_pump = 64;  // Then new batches get their turn.
  int64_t stop_timeout_ns = 0;  // The last Pump() keeps sending this long; the rest stays buffered.
};

struct DeliveryStats {
  uint64_t sent_payloads = 0;  // Accepted by the receiver for the first time.
  uint64_t sent_samples = 0;
  uint64_t duplicate_payloads = 0;  // Accepted, but the receiver had them already.
  uint64_t duplicate_samples = 0;
  uint64_t rejected_payloads = 0;  // Refused for good; never retried.
  uint64_t rejected_samples = 0;
  uint64_t send_failures = 0;  // Attempts that will be retried.
  uint64_t buffered_payloads = 0;
  uint64_t buffered_bytes = 0;
  DropCounts buffer_dropped;  // Deleted to keep the buffer in its bound, or corrupt.
  uint64_t buffer_corrupt = 0;
  // Bytes held in memory although a directory was configured: lost if the daemon restarts.
  uint64_t at_risk_bytes = 0;
  std::string degraded;  // Why payloads are in memory ("" when the directory works).
  bool failing = false;  // The last attempt failed and will be retried.
  int last_http_status = 0;
  std::string last_error;  // "" after a success.
};

class Delivery {
 public:
  // Opens the buffer (replaying what an earlier run left). A directory that cannot be opened
  // leaves the buffer in memory and the delivery degraded; it never fails.
  Delivery(DeliveryOptions options, SendFunction send);

  // Sends `body` (holding `samples` samples) now, or buffers it behind older payloads.
  void Offer(uint32_t samples, std::string_view body);
  // Sends buffered payloads whose retry is due. Returns the monotonic time of the next retry, or
  // 0 when nothing waits. `stopping`: keep sending up to stop_timeout_ns, then leave the rest.
  int64_t Pump(bool stopping);
  // The next Pump() retries at once, whatever the backoff.
  void RetryNow() { next_attempt_mono_ = 0; }
  bool empty() const { return buffer_->empty(); }
  bool failing() const { return failing_; }

  DeliveryStats stats() const;

 private:
  // True when the payload is done with (accepted or rejected); false when it must be retried.
  bool Attempt(uint32_t samples, std::string_view body);
  void Buffer(uint32_t samples, std::string_view body);
  void Publish();

  const DeliveryOptions options_;
  const SendFunction send_;
  std::unique_ptr<DiskBuffer> buffer_;
  Backoff backoff_;
  int64_t next_attempt_mono_ = 0;
  bool failing_ = false;
  std::string open_error_;  // Why the directory could not be opened.

  mutable std::mutex mu_;
  DeliveryStats stats_;
};

// The state a delivering sink reports: stopped, failed (with `failing_message`) while its
// receiver refuses, degraded while its buffer is held in memory only; the buffer's reason is
// appended to the message after `degraded_prefix`.
void SetDeliveryState(const DeliveryStats& delivery, bool stopped, std::string failing_message,
                      std::string_view degraded_prefix, SinkHealth* health);

}  // namespace vigil
