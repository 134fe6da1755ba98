// SPDX-License-Identifier: Apache-2.0
#include "sinks/fleet_push_sink.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>

#include <httplib.h>

#include "base/file_util.h"
#include "base/gzip.h"
#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"

namespace vigil {
namespace {

// Spool files are named <seq, 20 digits>-<samples>.gz so a listing sorts in send order.
std::string SpoolName(int64_t seq, size_t samples) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%020lld-%zu.gz", static_cast<long long>(seq), samples);
  return buf;
}

}  // namespace

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
  return sink;
}

FleetPushSink::FleetPushSink(FleetPushSinkOptions options) : options_(std::move(options)) {
  const size_t scheme = options_.url.find("://");
  const size_t slash = options_.url.find('/', scheme + 3);
  base_url_ = options_.url.substr(0, slash);
  path_ = slash == std::string::npos || slash + 1 == options_.url.size()
              ? "/api/v1/ingest"
              : options_.url.substr(slash);
  boot_ns_ = UnixNanos();
  next_seq_ = boot_ns_ / 1000000;  // Milliseconds: increases across daemon restarts.
  if (Status s = LoadSpool(); !s.ok()) {
    error_ = "spool: " + s.ToString();
    VIGIL_LOG_WARN("fleet sink: spool unusable, keeping payloads in memory: err={}", s.ToString());
  }
  thread_ = std::jthread([this](std::stop_token stop) { Loop(stop); });
}

FleetPushSink::~FleetPushSink() { Stop(); }

Status FleetPushSink::LoadSpool() {
  if (options_.spool_dir.empty()) return OkStatus();
  VIGIL_RETURN_IF_ERROR(MakeDirs(options_.spool_dir));
  VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDir(options_.spool_dir));
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const std::string path = JoinPath(options_.spool_dir, name);
    if (name.size() < 4 || name.substr(name.size() - 3) != ".gz") {
      std::remove(path.c_str());  // A write cut short (.tmp): never acknowledged, safe to drop.
      continue;
    }
    const std::string stem = name.substr(0, name.size() - 3);
    const std::vector<std::string_view> parts = Split(stem, '-');
    if (parts.size() != 2 || !ParseInt64(parts[0]) || !ParseUint64(parts[1])) continue;
    // value_or: GCC 12 -O3 warns maybe-uninitialized on a checked optional's operator*.
    const int64_t seq = ParseInt64(parts[0]).value_or(0);
    const uint64_t samples = ParseUint64(parts[1]).value_or(0);
    StatusOr<std::string> data = ReadSmallFile(path, 1 << 30);
    if (!data.ok()) continue;
    Entry e{seq, samples, path, "", data->size()};
    next_seq_ = std::max(next_seq_, seq + 1);
    AddEntry(std::move(e));
  }
  return OkStatus();
}

void FleetPushSink::Consume(BatchPtr batch) {
  if (!batch) return;
  {
    std::lock_guard lock(mu_);
    if (stopped_) {
      ++stats_.dropped_batches;
      stats_.dropped_samples += batch->samples.size();
      return;
    }
    if (queue_.size() >= options_.max_queued_batches) {
      ++stats_.dropped_batches;
      stats_.dropped_samples += queue_.front()->samples.size();
      queued_samples_ -= queue_.front()->samples.size();
      queue_.pop_front();
    }
    if (queue_.empty()) first_queued_mono_ = MonotonicNanos();
    queued_samples_ += batch->samples.size();
    queue_.push_back(std::move(batch));
  }
  cv_.notify_all();
}

void FleetPushSink::AddEntry(Entry entry) {
  // Caller holds no lock during construction (LoadSpool) or holds mu_ (SpoolBatches).
  if (entry.bytes > options_.spool_max_bytes) {
    ++stats_.dropped_batches;
    stats_.dropped_samples += entry.samples;
    if (!entry.path.empty()) std::remove(entry.path.c_str());
    return;
  }
  while (!spool_.empty() && stats_.spooled_bytes + entry.bytes > options_.spool_max_bytes) {
    Entry& old = spool_.front();
    ++stats_.dropped_batches;
    stats_.dropped_samples += old.samples;
    stats_.spooled_bytes -= old.bytes;
    if (!old.path.empty()) std::remove(old.path.c_str());
    spool_.pop_front();
    VIGIL_LOG_EVERY_N_SEC(WARN, 60, "fleet sink: spool full, dropped the oldest payload: max={}",
                          options_.spool_max_bytes);
  }
  stats_.spooled_bytes += entry.bytes;
  spool_.push_back(std::move(entry));
  stats_.spooled_batches = spool_.size();
}

void FleetPushSink::SpoolBatches(const std::deque<BatchPtr>& work) {
  std::vector<const Sample*> picked;
  auto emit = [&] {
    if (picked.empty()) return;
    const int64_t seq = next_seq_++;
    const std::string id =
        options_.host + "-" + std::to_string(boot_ns_) + "-" + std::to_string(seq);
    Entry e{seq, picked.size(), "", Gzip(EncodePayload(options_.host, id, seq, picked)), 0};
    e.bytes = e.data.size();
    if (!options_.spool_dir.empty()) {
      const std::string path = JoinPath(options_.spool_dir, SpoolName(seq, picked.size()));
      if (Status s = WriteFileAtomic(path, e.data); s.ok()) {
        e.path = path;
        e.data.clear();
      } else {
        VIGIL_LOG_EVERY_N_SEC(WARN, 60,
                              "fleet sink: spool write failed, holding in memory: "
                              "err={}",
                              s.ToString());
      }
    }
    picked.clear();
    std::lock_guard lock(mu_);
    AddEntry(std::move(e));
  };
  for (const BatchPtr& batch : work) {
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

FleetPushSink::SendResult FleetPushSink::Send(const std::string& gzipped, std::string* error) {
  httplib::Client client(base_url_);
  if (!options_.ca_file.empty()) client.set_ca_cert_path(options_.ca_file.c_str());
  const auto timeout = std::chrono::nanoseconds(options_.request_timeout_ns);
  client.set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  client.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  client.set_write_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  httplib::Headers headers = {{"Content-Encoding", "gzip"}};
  if (!options_.token.empty()) headers.emplace("Authorization", "Bearer " + options_.token);
  httplib::Result res = client.Post(path_, headers, gzipped, "application/json");
  if (!res) {
    *error = base_url_ + ": " + httplib::to_string(res.error());
    return SendResult::kRetry;
  }
  if (res->status >= 200 && res->status < 300) return SendResult::kAccepted;
  *error =
      base_url_ + path_ + ": HTTP " + std::to_string(res->status) + " " + SanitizeForLog(res->body);
  return res->status == 400 || res->status == 413 ? SendResult::kRejected : SendResult::kRetry;
}

bool FleetPushSink::Deliver(std::stop_token stop, int64_t deadline_mono_ns) {
  while (true) {
    Entry entry;
    {
      std::lock_guard lock(mu_);
      if (spool_.empty()) return true;
      entry = spool_.front();  // Stays queued until the service has it.
    }
    if (!entry.path.empty()) {
      StatusOr<std::string> data = ReadSmallFile(entry.path, 1 << 30);
      entry.data = data.ok() ? std::move(*data) : std::string();
    }
    std::string error;
    const SendResult r = entry.data.empty() ? SendResult::kRejected : Send(entry.data, &error);
    std::lock_guard lock(mu_);
    if (r == SendResult::kRetry) {
      ++stats_.send_failures;
      error_ = error + " (" + std::to_string(spool_.size()) + " payloads spooled)";
      backoff_ns_ =
          std::clamp(backoff_ns_ * 2, options_.initial_backoff_ns, options_.max_backoff_ns);
      next_try_mono_ = MonotonicNanos() + backoff_ns_;
      VIGIL_LOG_EVERY_N_SEC(WARN, 30, "fleet sink: send failed, retrying: err={} backoff={}", error,
                            FormatDuration(backoff_ns_));
      return false;
    }
    if (!spool_.empty() && spool_.front().seq == entry.seq) {
      stats_.spooled_bytes -= spool_.front().bytes;
      spool_.pop_front();
      stats_.spooled_batches = spool_.size();
    }
    if (!entry.path.empty()) std::remove(entry.path.c_str());
    if (r == SendResult::kAccepted) {
      ++stats_.sent_batches;
      stats_.sent_samples += entry.samples;
      error_.clear();
    } else {
      ++stats_.dropped_batches;
      stats_.dropped_samples += entry.samples;
      VIGIL_LOG_WARN("fleet sink: payload rejected, dropped: err={}", error);
    }
    backoff_ns_ = 0;
    cv_.notify_all();
    if (stop.stop_requested() && MonotonicNanos() > deadline_mono_ns) return false;
  }
}

void FleetPushSink::Loop(std::stop_token stop) {
  while (true) {
    std::deque<BatchPtr> work;
    {
      std::unique_lock lock(mu_);
      auto ready = [&] {
        const int64_t now = MonotonicNanos();
        const bool send_due = !spool_.empty() && now >= next_try_mono_;
        const bool merge_due =
            !queue_.empty() && (flush_requested_ || queued_samples_ >= options_.max_batch_samples ||
                                now - first_queued_mono_ >= options_.linger_ns);
        return stop.stop_requested() || send_due || merge_due;
      };
      cv_.wait_for(lock, stop, std::chrono::milliseconds(50), ready);
      work.swap(queue_);
      queued_samples_ = 0;
      in_flight_ = work.size();
    }
    if (!work.empty()) SpoolBatches(work);
    {
      std::lock_guard lock(mu_);
      in_flight_ = 0;
    }
    bool due = false;
    {
      std::lock_guard lock(mu_);
      due = MonotonicNanos() >= next_try_mono_;
    }
    if (stop.stop_requested()) {
      // Everything consumed is on disk now; deliver what can be delivered, the rest waits.
      Deliver(stop, MonotonicNanos() + options_.stop_timeout_ns);
      return;
    }
    if (due) Deliver(stop, 0);
    cv_.notify_all();
  }
}

void FleetPushSink::Flush(int64_t timeout_ns) {
  std::unique_lock lock(mu_);
  flush_requested_ = true;
  next_try_mono_ = 0;  // One attempt now, whatever the backoff.
  cv_.notify_all();
  cv_.wait_for(lock, std::chrono::nanoseconds(timeout_ns),
               [this] { return queue_.empty() && in_flight_ == 0 && spool_.empty(); });
  flush_requested_ = false;
}

void FleetPushSink::Stop() {
  if (!thread_.joinable()) return;
  Flush(options_.stop_timeout_ns);
  thread_.request_stop();
  cv_.notify_all();
  thread_.join();
  std::lock_guard lock(mu_);
  stopped_ = true;
}

SinkHealth FleetPushSink::health() const {
  std::lock_guard lock(mu_);
  SinkHealth h;
  h.dropped = stats_.dropped_batches;
  if (stopped_) {
    h.state = SinkHealth::State::kStopped;
  } else if (!error_.empty()) {
    h.state = SinkHealth::State::kFailed;
    h.message = error_;
  }
  return h;
}

FleetPushStats FleetPushSink::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace vigil
