// SPDX-License-Identifier: Apache-2.0
#include "sinks/remote_write_sink.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <utility>

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
  std::unique_ptr<RemoteWriteSink> sink(new RemoteWriteSink(
      std::move(options), std::move(url.scheme_host_port), std::move(url.path)));
  sink->pipeline_.Start();
  return sink;
}

RemoteWriteSink::RemoteWriteSink(RemoteWriteSinkOptions options, std::string scheme_host_port,
                                 std::string path)
    : options_(std::move(options)),
      path_(std::move(path)),
      client_name_("vigil/" +
                   (options_.version.empty() ? std::string(VIGIL_VERSION) : options_.version)),
      base_url_(std::move(scheme_host_port)),
      delivery_({.name = "remote-write " + options_.url,
                 .buffer = {.dir = options_.buffer_dir, .max_bytes = options_.max_buffer_bytes},
                 .backoff = options_.backoff,
                 .max_sends_per_pump = kReplayPerWakeup},
                [this](std::string_view body) { return Send(body); }),
      pipeline_({.name = "remote-write", .max_queued_batches = options_.max_queued_batches}, this) {
  label_options_.host_label_name = options_.host_label_name;
  label_options_.host_value =
      options_.host_label_value.empty() ? LocalHostname() : options_.host_label_value;
}

RemoteWriteSink::~RemoteWriteSink() { Stop(); }

void RemoteWriteSink::Consume(BatchPtr batch) { pipeline_.Push(std::move(batch)); }

SinkHealth RemoteWriteSink::health() const {
  const RemoteWriteStats stats = this->stats();
  SinkHealth h;
  h.dropped =
      stats.batches_dropped + stats.requests_rejected + stats.buffer_dropped + stats.buffer_corrupt;
  h.at_risk_bytes = stats.at_risk_bytes;
  const DeliveryStats delivery = delivery_.stats();
  h.sent_samples = stats.samples_sent;
  h.dropped_samples = pipeline_.drops().samples + stats.samples_rejected +
                      delivery.buffer_dropped.samples + stats.invalid_samples;
  h.buffered = stats.buffered_requests;
  SetDeliveryState(delivery, pipeline_.stopped(),
                   "cannot write to " + options_.url + ": " + stats.last_error + "; " +
                       std::to_string(stats.buffered_requests) + " requests (" +
                       std::to_string(stats.buffered_bytes) + " bytes) buffered",
                   "", &h);
  return h;
}

RemoteWriteStats RemoteWriteSink::stats() const {
  const DeliveryStats d = delivery_.stats();
  RemoteWriteStats s;
  s.samples_sent = d.sent_samples;
  s.requests_sent = d.sent_payloads;
  s.send_failures = d.send_failures;
  s.requests_rejected = d.rejected_payloads;
  s.samples_rejected = d.rejected_samples;
  s.batches_dropped = pipeline_.drops().batches;
  s.buffered_requests = d.buffered_payloads;
  s.buffered_bytes = d.buffered_bytes;
  s.buffer_dropped = d.buffer_dropped.batches - d.buffer_corrupt;
  s.buffer_corrupt = d.buffer_corrupt;
  s.at_risk_bytes = d.at_risk_bytes;
  s.last_http_status = d.last_http_status;
  s.last_error = d.last_error;
  std::lock_guard lock(mu_);
  s.invalid_samples = invalid_samples_;
  s.stale_markers = stale_markers_;
  return s;
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
  invalid_samples_ += invalid;
  stale_markers_ += stale_count;
}

SendResult RemoteWriteSink::Send(std::string_view body) {
  HttpRequest request{.base_url = base_url_,
                      .method = "POST",
                      .path = path_,
                      .headers = {{"Content-Encoding", "snappy"},
                                  {"X-Prometheus-Remote-Write-Version", "0.1.0"},
                                  {"User-Agent", client_name_}},
                      .body = std::string(body),
                      .content_type = "application/x-protobuf",
                      .timeout_ns = options_.request_timeout_ns,
                      .connect_timeout_ns = options_.connect_timeout_ns};
  if (!options_.authorization.empty()) {
    request.headers.emplace_back("Authorization", options_.authorization);
  }
  StatusOr<HttpReply> res = session_.Exchange(request);
  if (!res.ok()) {
    return {SendOutcome::kRetry, 0, res.status().message()};
  }
  if (res->status >= 200 && res->status < 300) {
    return {SendOutcome::kAccepted, res->status, ""};
  }
  std::string error = "HTTP " + std::to_string(res->status) + ": " + SanitizeForLog(res->body);
  if (res->status == 429 || res->status >= 500 || res->status < 200) {
    return {SendOutcome::kRetry, res->status, std::move(error)};
  }
  // The spec: 4xx other than 429 must not be retried.
  return {SendOutcome::kRejected, res->status, std::move(error)};
}

void RemoteWriteSink::Process(std::vector<BatchPtr> batches) {
  std::vector<EncodedRequest> requests;
  EncodeBatches(batches, &requests);
  for (const EncodedRequest& request : requests) {
    delivery_.Offer(request.samples, request.body);
  }
}

int64_t RemoteWriteSink::Pump(bool stopping) {
  // Stopping: anything still buffered stays in the buffer directory for the next run.
  return stopping ? 0 : delivery_.Pump(false);
}

void RemoteWriteSink::Flush(int64_t timeout_ns) { pipeline_.Flush(timeout_ns); }

void RemoteWriteSink::Stop() {
  if (pipeline_.stopped()) {
    return;
  }
  pipeline_.Stop();
  const SinkHealth h = health();
  VIGIL_LOG_INFO("remote-write sink stopped: sent_samples={} dropped_samples={} buffered={}",
                 h.sent_samples, h.dropped_samples, h.buffered);
}

}  // namespace vigil
