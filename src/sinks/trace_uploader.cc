// SPDX-License-Identifier: Apache-2.0
#include "sinks/trace_uploader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/gzip.h"
#include "base/http_exchange.h"
#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "sinks/fleet_url.h"

namespace vigil {
namespace {

constexpr size_t kPeekBytes = 1 << 20;

std::string Query(const TraceUploaderOptions& o, const TraceUpload& u, int32_t rank) {
  auto enc = [](const std::string& v) { return PercentEncode(v); };
  // A trace without a request says what the service needs to make one of it.
  std::string q = u.request_id.empty() ? "?origin=" + enc(u.origin) + "&reason=" + enc(u.reason) +
                                             "&expected=" + std::to_string(u.expected_files)
                                       : "?request_id=" + enc(u.request_id);
  q += "&host=" + enc(o.host) + "&job_id=" + enc(u.job_id) + "&pid=" + std::to_string(u.pid) +
       "&trace_id=" + enc(u.trace_id);
  if (rank >= 0) q += "&rank=" + std::to_string(rank);
  return q;
}

}  // namespace

int32_t TraceUploader::PeekRank(const std::string& head) {
  const size_t info = head.find("\"distributedInfo\"");
  if (info == std::string::npos) return -1;
  const size_t key = head.find("\"rank\"", info);
  if (key == std::string::npos || key - info > 4096) return -1;
  size_t at = head.find(':', key);
  if (at == std::string::npos) return -1;
  ++at;
  while (at < head.size() && (head[at] == ' ' || head[at] == '\t' || head[at] == '\n')) ++at;
  size_t end = at;
  while (end < head.size() && head[end] >= '0' && head[end] <= '9') ++end;
  const std::optional<int64_t> rank = ParseInt64(std::string_view(head).substr(at, end - at));
  return rank && *rank >= 0 && *rank < (1 << 30) ? static_cast<int32_t>(*rank) : -1;
}

StatusOr<std::unique_ptr<TraceUploader>> TraceUploader::Create(TraceUploaderOptions options) {
  if (options.host.empty()) {
    return InvalidArgumentError("trace upload: empty host name");
  }
  VIGIL_RETURN_IF_ERROR(FleetEndpointFor(options.url, "traces", "trace upload").status());
  return std::unique_ptr<TraceUploader>(new TraceUploader(std::move(options)));
}

TraceUploader::TraceUploader(TraceUploaderOptions options)
    : options_(std::move(options)),
      pipeline_(
          {.name = "trace upload", .max_queued_batches = options_.max_queue, .stop_timeout_ns = 0},
          this, [](const TraceUpload&) -> size_t { return 1; },
          [this](TraceUpload upload) { Dropped(std::move(upload)); }) {
  // --fleet-url may name the ingest path (…/api/v1/ingest); traces go beside it. Create()
  // checked the URL.
  FleetEndpoint endpoint = FleetEndpointFor(options_.url, "traces", "trace upload").value();
  base_url_ = std::move(endpoint.base_url);
  path_ = std::move(endpoint.path);
  pipeline_.Start();
}

TraceUploader::~TraceUploader() { Stop(); }

bool TraceUploader::Enqueue(TraceUpload upload) {
  if (pipeline_.stopped()) {
    Item item;
    item.state.upload = std::move(upload);
    item.state.queued_unix_ns = UnixNanos();
    std::lock_guard lock(mu_);
    FinishLocked(std::move(item), "failed", "daemon stopping");
    return false;
  }
  VIGIL_LOG_INFO("trace upload queued: request_id={} trace_id={} pid={} path={}",
                 SanitizeForLog(upload.request_id), upload.trace_id, upload.pid, upload.path);
  {
    std::lock_guard lock(mu_);
    ++in_pipeline_;
  }
  pipeline_.Push(std::move(upload));
  return true;
}

void TraceUploader::Dropped(TraceUpload upload) {
  Item item;
  item.state.upload = std::move(upload);
  item.state.queued_unix_ns = UnixNanos();
  const bool stopped = pipeline_.stopped();
  std::lock_guard lock(mu_);
  in_pipeline_ -= std::min<size_t>(in_pipeline_, 1);
  FinishLocked(std::move(item), "failed",
               stopped ? "daemon stopped before the upload finished" : "upload queue full");
}

void TraceUploader::FinishLocked(Item item, const std::string& state, const std::string& error) {
  item.state.state = state;
  item.state.error = error;
  item.state.finished_unix_ns = UnixNanos();
  if (state == "uploaded") {
    ++uploaded_;
    bytes_sent_ += item.state.bytes;
  } else {
    ++failed_;
    VIGIL_LOG_WARN("trace upload failed: request_id={} trace_id={} pid={} err={}",
                   SanitizeForLog(item.state.upload.request_id), item.state.upload.trace_id,
                   item.state.upload.pid, error);
  }
  recent_.push_back(std::move(item.state));
  while (recent_.size() > options_.keep_recent) recent_.pop_front();
}

// The file as the traced process's user wrote it: opened beneath its directory handle with no
// symlink followed, and only when it is a regular file of that user (never a root-only file a
// link points at).
StatusOr<std::string> ReadTraceFile(const TraceUpload& upload, size_t max_bytes) {
  FileBeneath file = upload.file;
  if (file.empty()) {  // Only a path: the file must be in that directory and the daemon's own.
    const size_t slash = upload.path.rfind('/');
    if (slash == std::string::npos) {
      return InvalidArgumentError("trace upload: not an absolute path: " + upload.path);
    }
    file.dir_path = slash == 0 ? "/" : upload.path.substr(0, slash);
    file.relative = upload.path.substr(slash + 1);
  }
  struct stat st {};
  VIGIL_ASSIGN_OR_RETURN(ScopedFd fd, OpenOwnedRegularFile(file, &st));
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return DataLossError(fmt::format("{}: larger than {} bytes", file.DisplayPath(), max_bytes));
  }
  return ReadFdCapped(fd.get(), max_bytes, file.DisplayPath());
}

TraceUploader::Outcome TraceUploader::SendOne(Item* item, std::string* error) {
  TraceUploadState& st = item->state;
  StatusOr<std::string> data = ReadTraceFile(st.upload, options_.max_file_bytes);
  if (!data.ok()) {
    *error = data.status().message();
    // Too large (DataLoss), gone (NotFound) or refused (a symlink, another owner) will not
    // change with a retry.
    const StatusCode code = data.status().code();
    return code == StatusCode::kDataLoss || code == StatusCode::kNotFound ||
                   code == StatusCode::kFailedPrecondition || code == StatusCode::kPermissionDenied
               ? Outcome::kRefused
               : Outcome::kRetry;
  }
  int32_t rank = st.upload.rank;
  std::string body;
  if (IsGzip(*data)) {
    body = std::move(*data);
  } else {
    if (rank < 0) rank = PeekRank(data->substr(0, kPeekBytes));
    body = Gzip(*data);
  }
  if (body.size() > options_.max_upload_bytes) {
    *error = "compressed trace of " + std::to_string(body.size()) + " bytes is over the cap of " +
             std::to_string(options_.max_upload_bytes);
    return Outcome::kRefused;
  }
  st.bytes = body.size();
  const HttpRequest request =
      FleetPost(base_url_, path_ + Query(options_, st.upload, rank), std::move(body),
                "application/gzip", options_.token, options_.ca_file, options_.request_timeout_ns);
  StatusOr<HttpReply> res = HttpExchange(request);
  if (!res.ok()) {
    *error = base_url_ + ": " + res.status().message();
    return Outcome::kRetry;
  }
  if (res->status >= 200 && res->status < 300) return Outcome::kDone;
  *error = path_ + ": HTTP " + std::to_string(res->status) + " " + SanitizeForLog(res->body);
  const int s = res->status;
  return s == 400 || s == 401 || s == 403 || s == 404 || s == 409 || s == 413 ? Outcome::kRefused
                                                                              : Outcome::kRetry;
}

void TraceUploader::Process(std::vector<TraceUpload> uploads) {
  std::lock_guard lock(mu_);
  for (TraceUpload& upload : uploads) {
    in_pipeline_ -= std::min<size_t>(in_pipeline_, 1);
    Item item;
    item.state.upload = std::move(upload);
    item.state.queued_unix_ns = UnixNanos();
    item.deadline_mono = MonotonicNanos() + options_.deadline_ns;
    item.backoff = std::make_unique<Backoff>(options_.backoff);
    if (pending_.size() >= std::max<size_t>(options_.max_queue, 1)) {
      Item oldest = std::move(pending_.front());
      pending_.pop_front();
      FinishLocked(std::move(oldest), "failed", "upload queue full");
    }
    pending_.push_back(std::move(item));
  }
}

int64_t TraceUploader::Pump(bool stopping) {
  if (stopping) {
    std::lock_guard lock(mu_);
    while (!pending_.empty()) {
      Item item = std::move(pending_.front());
      pending_.pop_front();
      FinishLocked(std::move(item), "failed", "daemon stopped before the upload finished");
    }
    return 0;
  }
  // Each upload due when the round starts is tried once; a retry is due later, in another round.
  const int64_t round = MonotonicNanos();
  while (true) {
    Item item;
    {
      std::lock_guard lock(mu_);
      auto it = std::find_if(pending_.begin(), pending_.end(),
                             [round](const Item& i) { return i.next_try_mono <= round; });
      if (it == pending_.end()) {
        int64_t wake = 0;
        for (const Item& waiting : pending_) {
          wake = wake == 0 ? waiting.next_try_mono : std::min(wake, waiting.next_try_mono);
        }
        return wake;
      }
      item = std::move(*it);
      pending_.erase(it);
      item.state.state = "sending";
      sending_ = true;
    }
    SendAndSettle(std::move(item));
  }
}

void TraceUploader::SendAndSettle(Item item) {
  ++item.state.attempts;
  std::string error;
  const Outcome outcome = SendOne(&item, &error);
  std::lock_guard lock(mu_);
  sending_ = false;
  if (outcome == Outcome::kDone) {
    VIGIL_LOG_INFO("trace uploaded: request_id={} trace_id={} pid={} bytes={}",
                   SanitizeForLog(item.state.upload.request_id), item.state.upload.trace_id,
                   item.state.upload.pid, item.state.bytes);
    FinishLocked(std::move(item), "uploaded", "");
  } else if (outcome == Outcome::kRefused) {
    FinishLocked(std::move(item), "failed", error);
  } else {
    const int64_t delay = item.backoff->NextDelayNs();
    if (MonotonicNanos() + delay > item.deadline_mono) {
      FinishLocked(std::move(item), "failed", "deadline passed; last error: " + error);
    } else {
      VIGIL_LOG_EVERY_N_SEC(WARN, 30, "trace upload: retrying: err={} backoff={}", error,
                            FormatDuration(delay));
      item.state.state = "queued";
      item.state.error = error;
      item.next_try_mono = MonotonicNanos() + delay;
      pending_.push_back(std::move(item));
    }
  }
}

void TraceUploader::OnFlush() {
  std::lock_guard lock(mu_);
  for (Item& item : pending_) {
    item.next_try_mono = 0;
  }
}

bool TraceUploader::Settled() const {
  std::lock_guard lock(mu_);
  return pending_.empty();
}

void TraceUploader::WaitIdle(int64_t timeout_ns) { pipeline_.Flush(timeout_ns); }

void TraceUploader::Stop() { pipeline_.Stop(); }

nlohmann::json TraceUploader::StatusJson() const {
  std::lock_guard lock(mu_);
  auto to_json = [](const TraceUploadState& s) {
    nlohmann::json j{{"request_id", s.upload.request_id},
                     {"trace_id", s.upload.trace_id},
                     {"job_id", s.upload.job_id},
                     {"pid", s.upload.pid},
                     {"path", s.upload.path},
                     {"state", s.state},
                     {"attempts", s.attempts},
                     {"bytes", s.bytes},
                     {"queued", FormatTimestamp(s.queued_unix_ns)}};
    if (!s.error.empty()) j["error"] = s.error;
    if (s.finished_unix_ns > 0) j["finished"] = FormatTimestamp(s.finished_unix_ns);
    return j;
  };
  nlohmann::json recent = nlohmann::json::array();
  for (const Item& i : pending_) recent.push_back(to_json(i.state));
  for (auto it = recent_.rbegin(); it != recent_.rend(); ++it) recent.push_back(to_json(*it));
  return nlohmann::json{
      {"url", base_url_ + path_},  {"queued", in_pipeline_ + pending_.size() + (sending_ ? 1 : 0)},
      {"uploaded", uploaded_},     {"failed", failed_},
      {"bytes_sent", bytes_sent_}, {"recent", std::move(recent)}};
}

}  // namespace vigil
