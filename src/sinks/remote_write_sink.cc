// SPDX-License-Identifier: Apache-2.0
#include "sinks/remote_write_sink.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <utility>

#include <httplib.h>

#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "sinks/remote_write_encoding.h"

#ifndef VIGIL_VERSION
#define VIGIL_VERSION "0.0.0"
#endif

namespace vigil {
namespace {

constexpr char kDefaultPath[] = "/api/v1/write";
constexpr int kReplayPerWakeup = 64;  // Then new batches get their turn.

struct ParsedUrl {
  std::string scheme_host_port;
  std::string path;
};

StatusOr<ParsedUrl> ParseUrl(const std::string& url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) {
    return InvalidArgumentError("remote-write url \"" + url + "\": expected http://host:port/path");
  }
  const std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") {
    return InvalidArgumentError("remote-write url \"" + url + "\": scheme must be http or https");
  }
  const size_t host_start = scheme_end + 3;
  const size_t path_start = url.find('/', host_start);
  ParsedUrl parsed;
  parsed.scheme_host_port = url.substr(0, path_start);
  parsed.path = path_start == std::string::npos ? kDefaultPath : url.substr(path_start);
  if (parsed.scheme_host_port.size() <= host_start) {
    return InvalidArgumentError("remote-write url \"" + url + "\": no host");
  }
  return parsed;
}

std::string LocalHostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) {
    return "localhost";
  }
  return name;
}

int64_t ToMillis(int64_t nanos) {
  // Floor division: a sample at -1ns is in millisecond -1, not 0.
  return nanos >= 0 ? nanos / kNanosPerMilli : -((-nanos + kNanosPerMilli - 1) / kNanosPerMilli);
}

using EncodedRequest = RemoteWriteSink::EncodedRequest;

// Collects series of one WriteRequest, splitting into several at the sample bound.
class RequestBuilder {
 public:
  RequestBuilder(size_t max_samples, std::vector<EncodedRequest>* payloads)
      : max_samples_(std::max<size_t>(max_samples, 1)), payloads_(payloads) {}

  void Add(const std::string& key, const RwLabels& labels, RwSample sample) {
    auto [it, inserted] = index_.try_emplace(key, series_.size());
    if (inserted) {
      series_.push_back(RwTimeSeries{labels, {}});
    }
    series_[it->second].samples.push_back(sample);
    if (++samples_ >= max_samples_) {
      Finish();
    }
  }

  void Finish() {
    if (series_.empty()) {
      return;
    }
    for (RwTimeSeries& ts : series_) {
      // The spec requires samples of a series in timestamp order; two batches with the same
      // millisecond keep the later value.
      std::stable_sort(
          ts.samples.begin(), ts.samples.end(),
          [](const RwSample& a, const RwSample& b) { return a.timestamp_ms < b.timestamp_ms; });
      auto last = std::unique(
          ts.samples.rbegin(), ts.samples.rend(),
          [](const RwSample& a, const RwSample& b) { return a.timestamp_ms == b.timestamp_ms; });
      ts.samples.erase(ts.samples.begin(), last.base());
    }
    std::string proto;
    EncodeWriteRequest(series_, &proto);
    uint32_t samples = 0;
    for (const RwTimeSeries& ts : series_) {
      samples += static_cast<uint32_t>(ts.samples.size());
    }
    payloads_->push_back(EncodedRequest{samples, SnappyCompress(proto)});
    series_.clear();
    index_.clear();
    samples_ = 0;
  }

 private:
  const size_t max_samples_;
  std::vector<EncodedRequest>* payloads_;
  std::vector<RwTimeSeries> series_;
  std::map<std::string, size_t> index_;
  size_t samples_ = 0;
};

}  // namespace

StatusOr<std::unique_ptr<RemoteWriteSink>> RemoteWriteSink::Create(RemoteWriteSinkOptions options) {
  VIGIL_ASSIGN_OR_RETURN(ParsedUrl url, ParseUrl(options.url));
  VIGIL_ASSIGN_OR_RETURN(
      std::unique_ptr<DiskBuffer> buffer,
      DiskBuffer::Open({.dir = options.buffer_dir, .max_bytes = options.max_buffer_bytes}));
  return std::unique_ptr<RemoteWriteSink>(new RemoteWriteSink(
      std::move(options), std::move(url.scheme_host_port), std::move(url.path), std::move(buffer)));
}

RemoteWriteSink::RemoteWriteSink(RemoteWriteSinkOptions options, std::string scheme_host_port,
                                 std::string path, std::unique_ptr<DiskBuffer> buffer)
    : options_(std::move(options)),
      path_(std::move(path)),
      client_name_("vigil/" +
                   (options_.version.empty() ? std::string(VIGIL_VERSION) : options_.version)),
      client_(std::make_unique<httplib::Client>(scheme_host_port)),
      buffer_(std::move(buffer)),
      backoff_(options_.backoff) {
  label_options_.host_label_name = options_.host_label_name;
  label_options_.host_value =
      options_.host_label_value.empty() ? LocalHostname() : options_.host_label_value;
  const auto connect = std::chrono::nanoseconds(options_.connect_timeout_ns);
  const auto request = std::chrono::nanoseconds(options_.request_timeout_ns);
  client_->set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(connect));
  client_->set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(request));
  client_->set_write_timeout(std::chrono::duration_cast<std::chrono::microseconds>(request));
  client_->set_keep_alive(true);
  PublishBufferStats();
  thread_ = std::jthread([this](std::stop_token stop) { Loop(stop); });
}

RemoteWriteSink::~RemoteWriteSink() { Stop(); }

void RemoteWriteSink::Consume(BatchPtr batch) {
  if (!batch) {
    return;
  }
  {
    std::lock_guard lock(mu_);
    if (stopped_) {
      ++stats_.batches_dropped;
      return;
    }
    if (queue_.size() >= options_.max_queued_batches) {
      queue_.pop_front();
      ++stats_.batches_dropped;
      VIGIL_LOG_EVERY_N_SEC(WARN, 60, "remote-write sink falling behind: dropped oldest batch");
    }
    queue_.push_back(std::move(batch));
  }
  cv_.notify_all();
}

SinkHealth RemoteWriteSink::health() const {
  std::lock_guard lock(mu_);
  SinkHealth h;
  h.dropped = stats_.batches_dropped + stats_.requests_rejected + stats_.buffer_dropped +
              stats_.buffer_corrupt;
  if (stopped_) {
    h.state = SinkHealth::State::kStopped;
  } else if (failing_) {
    h.state = SinkHealth::State::kFailed;
    h.message = "cannot write to " + options_.url + ": " + stats_.last_error + "; " +
                std::to_string(stats_.buffered_requests) + " requests (" +
                std::to_string(stats_.buffered_bytes) + " bytes) buffered";
  }
  return h;
}

RemoteWriteStats RemoteWriteSink::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void RemoteWriteSink::EncodeBatches(const std::vector<BatchPtr>& batches,
                                    std::vector<EncodedRequest>* payloads) {
  RequestBuilder builder(options_.max_samples_per_request, payloads);
  uint64_t invalid = 0, stale_count = 0;
  for (const BatchPtr& batch : batches) {
    staleness_.Begin(batch->source);
    int64_t latest_ns = batch->time_ns;
    for (const Sample& s : batch->samples) {
      StatusOr<RwLabels> labels = BuildSeriesLabels(s.desc->name, s.labels, label_options_);
      if (!labels.ok()) {
        ++invalid;
        VIGIL_LOG_EVERY_N_SEC(WARN, 60, "remote-write sink dropped a sample: err={}",
                              labels.status().message());
        continue;
      }
      const std::string key = SeriesKey(*labels);
      if (options_.staleness_markers) {
        staleness_.Saw(key, *labels);
      }
      latest_ns = std::max(latest_ns, s.time_ns);
      builder.Add(key, *labels, RwSample{s.value, ToMillis(s.time_ns)});
    }
    if (!options_.staleness_markers) {
      continue;
    }
    // The marker goes at this batch's time: after the series' last sample, which came from an
    // earlier batch of the same source.
    const int64_t stale_ms = ToMillis(latest_ns > 0 ? latest_ns : UnixNanos());
    for (const RwLabels& labels : staleness_.End()) {
      builder.Add(SeriesKey(labels), labels, RwSample{StaleNaN(), stale_ms});
      ++stale_count;
    }
  }
  builder.Finish();
  std::lock_guard lock(mu_);
  stats_.invalid_samples += invalid;
  stats_.stale_markers += stale_count;
}

RemoteWriteSink::SendResult RemoteWriteSink::Send(std::string_view body, int* http_status,
                                                  std::string* error) {
  httplib::Headers headers = {
      {"Content-Encoding", "snappy"},
      {"X-Prometheus-Remote-Write-Version", "0.1.0"},
      {"User-Agent", client_name_},
  };
  if (!options_.authorization.empty()) headers.emplace("Authorization", options_.authorization);
  httplib::Result res =
      client_->Post(path_, headers, body.data(), body.size(), "application/x-protobuf");
  if (!res) {
    *http_status = 0;
    *error = httplib::to_string(res.error());
    return SendResult::kRetry;
  }
  *http_status = res->status;
  if (res->status >= 200 && res->status < 300) {
    error->clear();
    return SendResult::kOk;
  }
  *error = "HTTP " + std::to_string(res->status) + ": " + SanitizeForLog(res->body);
  if (res->status == 429 || res->status >= 500 || res->status < 200) {
    return SendResult::kRetry;
  }
  return SendResult::kDrop;  // The spec: 4xx other than 429 must not be retried.
}

bool RemoteWriteSink::Attempt(uint32_t samples, std::string_view body) {
  int status = 0;
  std::string error;
  const SendResult result = Send(body, &status, &error);
  std::lock_guard lock(mu_);
  stats_.last_http_status = status;
  stats_.last_error = error;
  switch (result) {
    case SendResult::kOk:
      ++stats_.requests_sent;
      stats_.samples_sent += samples;
      if (failing_) {
        VIGIL_LOG_INFO("remote-write receiver reachable again: url={}", options_.url);
      }
      failing_ = false;
      backoff_.Reset();
      return true;
    case SendResult::kDrop:
      ++stats_.requests_rejected;
      stats_.samples_rejected += samples;
      VIGIL_LOG_EVERY_N_SEC(WARN, 60, "remote-write receiver rejected a request: url={} err={}",
                            options_.url, error);
      failing_ = false;
      backoff_.Reset();
      return true;  // Done with this payload: it will never be accepted.
    case SendResult::kRetry:
      break;
  }
  ++stats_.send_failures;
  if (!failing_) {
    VIGIL_LOG_WARN("remote-write receiver failing, buffering: url={} err={}", options_.url, error);
  }
  failing_ = true;
  next_attempt_ = Clock::now() + std::chrono::nanoseconds(backoff_.NextDelayNs());
  retry_at_ = next_attempt_;
  return false;
}

void RemoteWriteSink::BufferPayload(const EncodedRequest& request) {
  std::string framed;
  framed.reserve(4 + request.body.size());
  for (int i = 0; i < 4; ++i) {
    framed.push_back(static_cast<char>((request.samples >> (8 * i)) & 0xff));
  }
  framed.append(request.body);
  Status s = buffer_->Append(framed);
  if (!s.ok()) {
    if (s.code() != StatusCode::kResourceExhausted) {
      ++buffer_write_errors_;  // ResourceExhausted is already counted by the buffer.
    }
    VIGIL_LOG_EVERY_N_SEC(WARN, 60, "remote-write sink cannot buffer a request: err={}",
                          s.message());
  }
}

void RemoteWriteSink::Deliver(const EncodedRequest& request) {
  if (!buffer_->empty() || Clock::now() < next_attempt_ ||
      !Attempt(request.samples, request.body)) {
    BufferPayload(request);  // Behind older requests, or the receiver is failing: keep order.
  }
}

void RemoteWriteSink::Replay(std::stop_token stop, int max_requests) {
  for (int i = 0; i < max_requests && !buffer_->empty() && !stop.stop_requested() &&
                  Clock::now() >= next_attempt_;
       ++i) {
    StatusOr<std::string> framed = buffer_->Front();
    if (!framed.ok()) {
      if (framed.status().code() != StatusCode::kNotFound) {
        VIGIL_LOG_EVERY_N_SEC(WARN, 60, "remote-write buffer unreadable: err={}",
                              framed.status().message());
        std::lock_guard lock(mu_);
        next_attempt_ = Clock::now() + std::chrono::nanoseconds(backoff_.NextDelayNs());
        retry_at_ = next_attempt_;
      }
      return;
    }
    std::string_view body = *framed;
    uint32_t samples = 0;
    if (body.size() >= 4) {
      for (int b = 0; b < 4; ++b) {
        samples |= static_cast<uint32_t>(static_cast<uint8_t>(body[b])) << (8 * b);
      }
      body.remove_prefix(4);
    }
    if (!Attempt(samples, body)) {
      return;
    }
    Status s = buffer_->PopFront();
    if (!s.ok()) {
      VIGIL_LOG_EVERY_N_SEC(WARN, 60, "remote-write buffer: err={}", s.message());
      return;
    }
  }
}

void RemoteWriteSink::PublishBufferStats() {
  std::lock_guard lock(mu_);
  stats_.buffered_requests = buffer_->size();
  stats_.buffered_bytes = buffer_->bytes();
  stats_.buffer_dropped = buffer_->dropped() + buffer_write_errors_;
  stats_.buffer_corrupt = buffer_->corrupt();
  buffer_waiting_ = !buffer_->empty();
}

void RemoteWriteSink::Loop(std::stop_token stop) {
  while (true) {
    std::vector<BatchPtr> work;
    {
      std::unique_lock lock(mu_);
      auto ready = [this] {
        return !queue_.empty() || (buffer_waiting_ && Clock::now() >= retry_at_);
      };
      if (buffer_waiting_) {
        cv_.wait_until(lock, stop, retry_at_, ready);
      } else {
        cv_.wait(lock, stop, ready);
      }
      if (stop.stop_requested() && queue_.empty()) {
        return;  // Anything still buffered stays in the buffer directory for the next run.
      }
      work.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
      queue_.clear();
      in_flight_ = 1;  // Until this round's sends and buffer writes are done.
    }
    std::vector<EncodedRequest> requests;
    if (!work.empty()) {
      EncodeBatches(work, &requests);
    }
    for (const EncodedRequest& request : requests) {
      Deliver(request);
    }
    Replay(stop, kReplayPerWakeup);
    PublishBufferStats();
    {
      std::lock_guard lock(mu_);
      in_flight_ = 0;
    }
    cv_.notify_all();
  }
}

void RemoteWriteSink::Flush(int64_t timeout_ns) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, std::chrono::nanoseconds(timeout_ns), [this] {
    return queue_.empty() && in_flight_ == 0 && (!buffer_waiting_ || failing_);
  });
}

void RemoteWriteSink::Stop() {
  if (!thread_.joinable()) {
    return;
  }
  Flush(5 * kNanosPerSecond);
  thread_.request_stop();
  cv_.notify_all();
  thread_.join();
  std::lock_guard lock(mu_);
  stopped_ = true;
  stats_.batches_dropped += queue_.size();  // Consumed after the thread's last look.
  queue_.clear();
}

}  // namespace vigil
