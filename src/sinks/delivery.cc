// SPDX-License-Identifier: Apache-2.0
#include "sinks/delivery.h"

#include <utility>

#include "base/logging.h"
#include "base/time_util.h"

namespace vigil {
namespace {

// Buffer entries are the sample count (4 bytes, little-endian) followed by the body.
std::string Frame(uint32_t samples, std::string_view body) {
  std::string framed;
  framed.reserve(4 + body.size());
  for (int i = 0; i < 4; ++i) {
    framed.push_back(static_cast<char>((samples >> (8 * i)) & 0xff));
  }
  framed.append(body);
  return framed;
}

uint32_t Unframe(std::string_view* body) {
  uint32_t samples = 0;
  if (body->size() >= 4) {
    for (int b = 0; b < 4; ++b) {
      samples |= static_cast<uint32_t>(static_cast<uint8_t>((*body)[b])) << (8 * b);
    }
    body->remove_prefix(4);
  }
  return samples;
}

}  // namespace

Delivery::Delivery(DeliveryOptions options, SendFunction send)
    : options_(std::move(options)), send_(std::move(send)), backoff_(options_.backoff) {
  DiskBufferOptions buffer = options_.buffer;
  buffer.counted = true;
  StatusOr<std::unique_ptr<DiskBuffer>> opened = DiskBuffer::Open(buffer);
  if (!opened.ok()) {
    open_error_ = opened.status().message();
    VIGIL_LOG_WARN("{}: buffer directory unusable, holding payloads in memory: err={}",
                   options_.name, open_error_);
    buffer.dir.clear();
    opened = DiskBuffer::Open(buffer);  // In memory: cannot fail.
  }
  buffer_ = std::move(*opened);
  Publish();
}

bool Delivery::Attempt(uint32_t samples, std::string_view body) {
  SendResult result = send_(body);
  std::lock_guard lock(mu_);
  stats_.last_http_status = result.http_status;
  stats_.last_error = result.outcome == SendOutcome::kAccepted ? "" : result.error;
  switch (result.outcome) {
    case SendOutcome::kAccepted:
      if (result.duplicate) {
        ++stats_.duplicate_payloads;
        stats_.duplicate_samples += samples;
      } else {
        ++stats_.sent_payloads;
        stats_.sent_samples += samples;
      }
      if (failing_) {
        VIGIL_LOG_INFO("{}: receiver reachable again", options_.name);
      }
      failing_ = false;
      backoff_.Reset();
      return true;
    case SendOutcome::kRejected:
      ++stats_.rejected_payloads;
      stats_.rejected_samples += samples;
      VIGIL_LOG_EVERY_N_SEC(WARN, 60, "{}: receiver rejected a payload, dropped: err={}",
                            options_.name, result.error);
      failing_ = false;
      backoff_.Reset();
      return true;  // It will never be accepted.
    case SendOutcome::kRetry:
      break;
  }
  ++stats_.send_failures;
  const int64_t delay = backoff_.NextDelayNs();
  if (!failing_) {
    VIGIL_LOG_WARN("{}: send failed, buffering and retrying: err={} backoff={}", options_.name,
                   result.error, FormatDuration(delay));
  }
  failing_ = true;
  next_attempt_mono_ = MonotonicNanos() + delay;
  return false;
}

void Delivery::Buffer(uint32_t samples, std::string_view body) {
  Status s = buffer_->Append(Frame(samples, body));
  if (!s.ok()) {
    VIGIL_LOG_EVERY_N_SEC(WARN, 60, "{}: cannot buffer a payload: err={}", options_.name,
                          s.message());
  }
}

void Delivery::Offer(uint32_t samples, std::string_view body) {
  if (options_.buffer_first || !buffer_->empty() || MonotonicNanos() < next_attempt_mono_ ||
      !Attempt(samples, body)) {
    Buffer(samples, body);  // Behind older payloads, or the receiver is failing: keep order.
  }
  Publish();
}

int64_t Delivery::Pump(bool stopping) {
  const int64_t deadline = MonotonicNanos() + options_.stop_timeout_ns;
  int sends = 0;
  while (!buffer_->empty()) {
    const int64_t now = MonotonicNanos();
    if (stopping ? now > deadline : (sends >= options_.max_sends_per_pump)) {
      break;
    }
    if (now < next_attempt_mono_) {
      break;
    }
    StatusOr<std::string> framed = buffer_->Front();
    if (!framed.ok()) {
      if (framed.status().code() != StatusCode::kNotFound) {
        VIGIL_LOG_EVERY_N_SEC(WARN, 60, "{}: buffer unreadable: err={}", options_.name,
                              framed.status().message());
        next_attempt_mono_ = MonotonicNanos() + backoff_.NextDelayNs();
      }
      break;
    }
    std::string_view body = *framed;
    const uint32_t samples = Unframe(&body);
    ++sends;
    if (!Attempt(samples, body)) {
      break;
    }
    if (Status s = buffer_->PopFront(); !s.ok()) {
      VIGIL_LOG_EVERY_N_SEC(WARN, 60, "{}: buffer: err={}", options_.name, s.message());
      break;
    }
  }
  Publish();
  if (buffer_->empty()) {
    return 0;
  }
  return next_attempt_mono_ > 0 ? next_attempt_mono_ : MonotonicNanos();
}

void Delivery::Publish() {
  std::lock_guard lock(mu_);
  stats_.buffered_payloads = buffer_->size();
  stats_.buffered_bytes = buffer_->bytes();
  stats_.buffer_dropped =
      DropCounts{buffer_->dropped() + buffer_->corrupt(), buffer_->dropped_items()};
  stats_.buffer_corrupt = buffer_->corrupt();
  stats_.failing = failing_;
  if (!open_error_.empty()) {
    stats_.degraded = "buffer directory unusable: " + open_error_;
    stats_.at_risk_bytes = buffer_->bytes();
  } else if (buffer_->memory_bytes() > 0 || !buffer_->write_error().empty()) {
    stats_.degraded = buffer_->write_error().empty()
                          ? "payloads held in memory after failed writes"
                          : "buffer writes failing: " + buffer_->write_error();
    stats_.at_risk_bytes = buffer_->memory_bytes();
  } else {
    stats_.degraded.clear();
    stats_.at_risk_bytes = 0;
  }
}

DeliveryStats Delivery::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void SetDeliveryState(const DeliveryStats& delivery, bool stopped, std::string failing_message,
                      std::string_view degraded_prefix, SinkHealth* health) {
  if (stopped) {
    health->state = SinkHealth::State::kStopped;
  } else if (delivery.failing) {
    health->state = SinkHealth::State::kFailed;
    health->message = std::move(failing_message);
  } else if (!delivery.degraded.empty()) {
    health->state = SinkHealth::State::kDegraded;
  }
  if (!delivery.degraded.empty()) {
    health->reduced = std::string(degraded_prefix) + delivery.degraded +
                      "; held in memory only, lost if the daemon restarts";
    health->message += (health->message.empty() ? "" : "; ") + health->reduced;
  }
}

}  // namespace vigil
