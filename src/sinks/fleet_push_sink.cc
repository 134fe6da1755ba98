// SPDX-License-Identifier: Apache-2.0
#include "sinks/fleet_push_sink.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/gzip.h"
#include "base/http_exchange.h"
#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "sinks/fleet_url.h"

namespace vigil {

std::string FleetPushSink::EncodePayload(const std::string& host, const std::string& batch_id,
                                         int64_t seq, const std::vector<const Sample*>& samples) {
  std::string out = "{\"host\":";
  AppendJsonString(host, &out);
  out += ",\"batch_id\":";
  AppendJsonString(batch_id, &out);
  out += ",\"seq\":" + std::to_string(seq) + ",\"samples\":[";
  char num[64];
  bool first = true;
  for (const Sample* s : samples) {
    out += first ? "{\"name\":" : ",{\"name\":";
    first = false;
    AppendJsonString(s->desc->name, &out);
    out += ",\"kind\":\"";
    out += MetricKindName(s->desc->kind);
    out += "\",\"labels\":{";
    for (size_t i = 0; i < s->labels.size(); ++i) {
      if (i > 0) out.push_back(',');
      AppendJsonString(s->labels[i].first, &out);
      out.push_back(':');
      AppendJsonString(s->labels[i].second, &out);
    }
    const auto r = std::to_chars(num, num + sizeof(num), s->value);
    out += "},\"value\":";
    out.append(num, r.ptr);
    out += ",\"time_ns\":" + std::to_string(s->time_ns) + "}";
  }
  out += "]}";
  return out;
}

StatusOr<std::unique_ptr<FleetPushSink>> FleetPushSink::Create(FleetPushSinkOptions options) {
  if (options.host.empty()) {
    return InvalidArgumentError("fleet sink: empty host name");
  }
  const std::string& url = options.url;
  const size_t scheme = url.find("://");
  const std::string name = scheme == std::string::npos ? "" : url.substr(0, scheme);
  if ((name != "http" && name != "https") || url.size() == scheme + 3) {
    return InvalidArgumentError("fleet sink: --fleet-url must be http[s]://HOST:PORT[/path], got " +
                                url);
  }
  std::unique_ptr<FleetPushSink> sink(new FleetPushSink(std::move(options)));
  sink->ImportLegacySpool();
  sink->pipeline_.Start();
  return sink;
}

FleetPushSink::FleetPushSink(FleetPushSinkOptions options)
    : options_(std::move(options)),
      delivery_({.name = "fleet sink",
                 .buffer = {.dir = options_.spool_dir, .max_bytes = options_.spool_max_bytes},
                 .backoff = {options_.initial_backoff_ns, options_.max_backoff_ns, 2.0, 0.0},
                 .buffer_first = true,
                 .stop_timeout_ns = options_.stop_timeout_ns},
                [this](std::string_view body) { return Send(body); }),
      pipeline_({.name = "fleet",
                 .max_queued_batches = options_.max_queued_batches,
                 .linger_ns = options_.linger_ns,
                 .linger_samples = options_.max_batch_samples,
                 .stop_timeout_ns = options_.stop_timeout_ns},
                this) {
  const size_t scheme = options_.url.find("://");
  const size_t slash = options_.url.find('/', scheme + 3);
  base_url_ = options_.url.substr(0, slash);
  path_ = slash == std::string::npos || slash + 1 == options_.url.size()
              ? "/api/v1/ingest"
              : options_.url.substr(slash);
  boot_ns_ = UnixNanos();
  next_seq_ = boot_ns_ / 1000000;  // Milliseconds: increases across daemon restarts.
}

FleetPushSink::~FleetPushSink() { Stop(); }

void FleetPushSink::ImportLegacySpool() {
  if (options_.spool_dir.empty()) return;
  StatusOr<std::vector<std::string>> names = ListDir(options_.spool_dir);
  if (!names.ok()) return;
  std::sort(names->begin(), names->end());
  for (const std::string& name : *names) {
    if (name.size() < 4 || name.substr(name.size() - 3) != ".gz") continue;
    const std::vector<std::string_view> parts = Split(name.substr(0, name.size() - 3), '-');
    if (parts.size() != 2 || !ParseInt64(parts[0]) || !ParseUint64(parts[1])) continue;
    // value_or: GCC 12 -O3 warns maybe-uninitialized on a checked optional's operator*.
    const int64_t seq = ParseInt64(parts[0]).value_or(0);
    const uint64_t samples = ParseUint64(parts[1]).value_or(0);
    const std::string path = JoinPath(options_.spool_dir, name);
    StatusOr<std::string> data = ReadSmallFile(path, options_.spool_max_bytes + 1);
    if (data.ok()) {
      next_seq_ = std::max(next_seq_, seq + 1);
      delivery_.Offer(static_cast<uint32_t>(samples), *data);
    }
    std::remove(path.c_str());
  }
}

void FleetPushSink::Process(std::vector<BatchPtr> batches) {
  std::vector<const Sample*> picked;
  auto emit = [&] {
    if (picked.empty()) return;
    const int64_t seq = next_seq_++;
    const std::string id =
        options_.host + "-" + std::to_string(boot_ns_) + "-" + std::to_string(seq);
    delivery_.Offer(static_cast<uint32_t>(picked.size()),
                    Gzip(EncodePayload(options_.host, id, seq, picked)));
    picked.clear();
  };
  for (const BatchPtr& batch : batches) {
    for (const Sample& s : batch->samples) {
      if (!std::isfinite(s.value)) continue;
      bool wanted = options_.name_prefixes.empty();
      for (const std::string& p : options_.name_prefixes) {
        wanted = wanted || s.desc->name.substr(0, p.size()) == p;
      }
      if (!wanted) continue;
      picked.push_back(&s);
      if (picked.size() >= options_.max_batch_samples) emit();
    }
  }
  emit();
}

SendResult FleetPushSink::Send(std::string_view gzipped) {
  HttpRequest request = FleetPost(base_url_, path_, std::string(gzipped), "application/json",
                                  options_.token, options_.ca_file, options_.request_timeout_ns);
  request.headers.emplace_back("Content-Encoding", "gzip");
  StatusOr<HttpReply> res = HttpExchange(request);
  if (!res.ok()) {
    return {SendOutcome::kRetry, 0, base_url_ + ": " + res.status().message()};
  }
  if (res->status >= 200 && res->status < 300) {
    // The service answers {"accepted":false,"duplicate":true} for a batch it already has.
    const nlohmann::json reply = nlohmann::json::parse(res->body, nullptr, false);
    const bool duplicate = reply.is_object() && reply.value("duplicate", false);
    return {SendOutcome::kAccepted, res->status, "", duplicate};
  }
  std::string error =
      base_url_ + path_ + ": HTTP " + std::to_string(res->status) + " " + SanitizeForLog(res->body);
  const bool rejected = res->status == 400 || res->status == 413;
  return {rejected ? SendOutcome::kRejected : SendOutcome::kRetry, res->status, std::move(error)};
}

void FleetPushSink::Consume(BatchPtr batch) { pipeline_.Push(std::move(batch)); }

void FleetPushSink::Flush(int64_t timeout_ns) { pipeline_.Flush(timeout_ns); }

void FleetPushSink::Stop() {
  if (pipeline_.stopped()) return;
  pipeline_.Stop();
  const FleetPushStats s = stats();
  VIGIL_LOG_INFO(
      "fleet sink stopped: sent_samples={} duplicate_samples={} dropped_samples={} spooled={}",
      s.sent_samples, s.duplicate_samples, s.dropped_samples, s.spooled_batches);
}

SinkHealth FleetPushSink::health() const {
  const FleetPushStats stats = this->stats();
  const DeliveryStats delivery = delivery_.stats();
  SinkHealth h;
  h.dropped = stats.dropped_batches;
  h.at_risk_bytes = delivery.at_risk_bytes;
  h.sent_samples = stats.sent_samples;
  h.dropped_samples = stats.dropped_samples;
  h.buffered = stats.spooled_batches;
  SetDeliveryState(
      delivery, pipeline_.stopped(),
      delivery.last_error + " (" + std::to_string(stats.spooled_batches) + " payloads spooled)",
      "spool: ", &h);
  return h;
}

FleetPushStats FleetPushSink::stats() const {
  const DeliveryStats d = delivery_.stats();
  const DropCounts queue = pipeline_.drops();
  FleetPushStats s;
  s.sent_batches = d.sent_payloads;
  s.sent_samples = d.sent_samples;
  s.duplicate_batches = d.duplicate_payloads;
  s.duplicate_samples = d.duplicate_samples;
  s.dropped_batches = queue.batches + d.rejected_payloads + d.buffer_dropped.batches;
  s.dropped_samples = queue.samples + d.rejected_samples + d.buffer_dropped.samples;
  s.spooled_batches = d.buffered_payloads;
  s.spooled_bytes = d.buffered_bytes;
  s.send_failures = d.send_failures;
  s.at_risk_bytes = d.at_risk_bytes;
  return s;
}

}  // namespace vigil
