// SPDX-License-Identifier: Apache-2.0
#include "sinks/profile_uploader.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "base/gzip.h"
#include "base/http_exchange.h"
#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "sinks/fleet_url.h"

namespace vigil {

StatusOr<std::unique_ptr<ProfileUploader>> ProfileUploader::Create(ProfileUploaderOptions options) {
  if (options.host.empty()) {
    return InvalidArgumentError("cpu profile upload: empty host name");
  }
  VIGIL_RETURN_IF_ERROR(
      FleetEndpointFor(options.url, "cpu-profiles", "cpu profile upload").status());
  return std::unique_ptr<ProfileUploader>(new ProfileUploader(std::move(options)));
}

ProfileUploader::ProfileUploader(ProfileUploaderOptions options)
    : options_(std::move(options)),
      backoff_(options_.backoff),
      pipeline_(
          {.name = "cpu profile upload",
           .max_queued_batches = std::max<size_t>(options_.max_queue, 1),
           .stop_timeout_ns = 0},
          this, [](const ProfileUpload&) -> size_t { return 1; },
          [this](ProfileUpload upload) {
            const bool stopped = pipeline_.stopped();
            std::lock_guard lock(mu_);
            in_pipeline_ -= std::min<size_t>(in_pipeline_, 1);
            FailLocked(upload, stopped ? "daemon stopped before the upload" : "upload queue full");
          }) {
  FleetEndpoint endpoint =
      FleetEndpointFor(options_.url, "cpu-profiles", "cpu profile upload").value();
  base_url_ = std::move(endpoint.base_url);
  path_ = std::move(endpoint.path);
  pipeline_.Start();
}

ProfileUploader::~ProfileUploader() { Stop(); }

bool ProfileUploader::Enqueue(ProfileUpload upload) {
  if (pipeline_.stopped()) {
    std::lock_guard lock(mu_);
    FailLocked(upload, "daemon stopping");
    return false;
  }
  {
    std::lock_guard lock(mu_);
    ++in_pipeline_;
  }
  pipeline_.Push(std::move(upload));
  return true;
}

void ProfileUploader::FailLocked(const ProfileUpload& upload, const std::string& error) {
  ++failed_;
  last_failed_ = true;
  last_error_ = error;
  last_error_unix_ns_ = UnixNanos();
  VIGIL_LOG_EVERY_N_SEC(WARN, 30, "cpu profile upload: dropped job={} window={}: {}",
                        SanitizeForLog(upload.job_id, 64), FormatTimestamp(upload.start_unix_ns),
                        error);
}

void ProfileUploader::Process(std::vector<ProfileUpload> uploads) {
  // Compressed here, on the worker, so the sampler thread that queued them never waits.
  std::vector<Item> items;
  for (ProfileUpload& upload : uploads) {
    Item item{.upload = std::move(upload), .body = "", .queued_mono = MonotonicNanos()};
    item.body = Gzip(item.upload.folded);
    item.upload.folded.clear();
    item.upload.folded.shrink_to_fit();
    items.push_back(std::move(item));
  }
  std::lock_guard lock(mu_);
  for (Item& item : items) {
    in_pipeline_ -= std::min<size_t>(in_pipeline_, 1);
    if (item.body.size() > options_.max_upload_bytes) {
      FailLocked(item.upload, fmt::format("window of {} bytes gzipped is over the cap of {}",
                                          item.body.size(), options_.max_upload_bytes));
      continue;
    }
    if (pending_.size() >= std::max<size_t>(options_.max_queue, 1)) {
      FailLocked(pending_.front().upload, "upload queue full");
      pending_.pop_front();
    }
    pending_.push_back(std::move(item));
  }
}

ProfileUploader::Outcome ProfileUploader::Send(const Item& item, std::string* error) {
  const ProfileUpload& u = item.upload;
  auto enc = [](const std::string& v) { return PercentEncode(v); };
  const std::string query = "?job_id=" + enc(u.job_id) + "&host=" + enc(options_.host) +
                            "&start_ns=" + std::to_string(u.start_unix_ns) +
                            "&end_ns=" + std::to_string(u.end_unix_ns) +
                            "&frequency_hz=" + std::to_string(u.frequency_hz);
  HttpRequest request = FleetPost(base_url_, path_ + query, item.body, "text/plain", options_.token,
                                  options_.ca_file, options_.request_timeout_ns);
  request.headers.emplace_back("Content-Encoding", "gzip");
  StatusOr<HttpReply> res = HttpExchange(request);
  if (!res.ok()) {
    *error = base_url_ + ": " + res.status().message();
    return Outcome::kRetry;
  }
  if (res->status >= 200 && res->status < 300) return Outcome::kDone;
  *error = path_ + ": HTTP " + std::to_string(res->status) + " " + SanitizeForLog(res->body, 300);
  const int s = res->status;
  return s >= 500 || s == 408 || s == 429 ? Outcome::kRetry : Outcome::kRefused;
}

int64_t ProfileUploader::Pump(bool stopping) {
  std::unique_lock lock(mu_);
  if (stopping) {
    for (const Item& item : pending_) FailLocked(item.upload, "daemon stopped before the upload");
    pending_.clear();
    return 0;
  }
  while (!pending_.empty()) {
    const int64_t now = MonotonicNanos();
    if (now < next_try_mono_) return next_try_mono_;
    Item item = std::move(pending_.front());
    pending_.pop_front();
    if (now - item.queued_mono > options_.deadline_ns) {
      FailLocked(item.upload, "not delivered within the deadline; last error: " + last_error_);
      continue;
    }
    sending_ = true;
    lock.unlock();
    std::string error;
    const Outcome outcome = Send(item, &error);
    lock.lock();
    sending_ = false;
    if (outcome == Outcome::kDone) {
      ++uploaded_;
      bytes_sent_ += item.body.size();
      samples_sent_ += item.upload.samples;
      last_upload_unix_ns_ = UnixNanos();
      last_failed_ = false;
      waiting_retry_ = false;
      backoff_.Reset();
    } else if (outcome == Outcome::kRefused) {
      waiting_retry_ = false;
      FailLocked(item.upload, error);
    } else {
      // The fleet may come back: this window waits at the head, in order, and the round ends.
      last_error_ = error;
      last_error_unix_ns_ = UnixNanos();
      last_failed_ = true;
      waiting_retry_ = true;
      const int64_t delay = backoff_.NextDelayNs();
      next_try_mono_ = MonotonicNanos() + delay;
      VIGIL_LOG_EVERY_N_SEC(WARN, 30, "cpu profile upload: retrying: err={} backoff={}", error,
                            FormatDuration(delay));
      pending_.push_front(std::move(item));
      return next_try_mono_;
    }
  }
  return 0;
}

void ProfileUploader::OnFlush() {
  std::lock_guard lock(mu_);
  next_try_mono_ = 0;
}

bool ProfileUploader::Settled() const {
  std::lock_guard lock(mu_);
  return pending_.empty();
}

void ProfileUploader::WaitIdle(int64_t timeout_ns) { pipeline_.Flush(timeout_ns); }

void ProfileUploader::Stop() { pipeline_.Stop(); }

nlohmann::json ProfileUploader::StatusJson() const {
  std::lock_guard lock(mu_);
  const size_t queued = in_pipeline_ + pending_.size() + (sending_ ? 1 : 0);
  std::string state = "idle";
  if (last_failed_) {
    state = waiting_retry_ && !pending_.empty() ? "retrying" : "failing";
  } else if (uploaded_ > 0) {
    state = "ok";
  }
  nlohmann::json out{{"url", base_url_ + path_},
                     {"state", state},
                     {"uploaded", uploaded_},
                     {"failed", failed_},
                     {"queued", queued},
                     {"bytes_sent", bytes_sent_},
                     {"samples_sent", samples_sent_}};
  if (!last_error_.empty()) {
    out["last_error"] = last_error_;
    out["last_error_time"] = FormatTimestamp(last_error_unix_ns_);
  }
  if (last_upload_unix_ns_ > 0) out["last_upload_time"] = FormatTimestamp(last_upload_unix_ns_);
  return out;
}

}  // namespace vigil
