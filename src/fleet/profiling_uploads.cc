// SPDX-License-Identifier: Apache-2.0
// ProfilingService's side of trace uploads: files for a request, and the requests made for traces
// a daemon took on its own (profiling_service.h).
#include <algorithm>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/logging.h"
#include "base/strings.h"
#include "fleet/ledger_host_jobs.h"
#include "fleet/profiling_service.h"

namespace vigil {
namespace {

// Host names come from the ledger but end up in file names: keep [A-Za-z0-9._-].
std::string SafeName(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 128)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    out.push_back(ok ? c : '_');
  }
  return out.empty() || out[0] == '.' ? "_" + out : out;
}

}  // namespace

StatusOr<std::string> ProfilingService::AdoptDaemonTrace(const DaemonTrace& t) {
  if (t.trace_id.empty() || t.job_id.empty() || t.expected_files <= 0 ||
      static_cast<size_t>(t.expected_files) > options_.max_files) {
    return InvalidArgumentError(
        fmt::format("a trace without request_id needs trace_id, job_id and expected=1..{}",
                    options_.max_files));
  }
  // A host's daemon traces its own jobs: it may not make analyses of another host's.
  if (Status s = CheckJobOnHost(*store_, t.host, t.job_id); !s.ok()) {
    VIGIL_LOG_EVERY_N_SEC(WARN, 10, "profiling refused a daemon's trace: host={} job_id={} err={}",
                          SanitizeForLog(t.host, 64), SanitizeForLog(t.job_id, 64), s.message());
    return s;
  }
  // One id per (host, trace): the daemon's retries and its other processes' files find it again.
  const std::string id =
      "daemon-" + SafeName(t.host).substr(0, 48) + "-" + SafeName(t.trace_id).substr(0, 48);
  const int64_t now = Now();
  std::lock_guard lock(mu_);
  if (requests_.count(id) != 0) return id;
  ProfilingRequest r;
  r.request_id = id;
  r.job_id = SanitizeForLog(t.job_id, 128);
  r.trigger = "daemon";
  r.reason = SanitizeForLog(t.origin.empty() ? t.reason : t.origin + ": " + t.reason, 200);
  r.state = "collecting";
  r.created_ns = r.updated_ns = now;
  r.deadline_ns = now + options_.collect_deadline_ns;
  r.hosts = {{t.host, "", "tracing", SanitizeForLog(t.trace_id, 64), t.expected_files, ""}};
  r.trace_dir = JoinPath(options_.trace_dir, id);
  requests_[id] = r;
  PersistLocked(r);
  VIGIL_LOG_INFO("profiling adopted a daemon's trace: request_id={} job_id={} reason={} files={}",
                 id, r.job_id, r.reason, t.expected_files);
  return id;
}

StatusOr<ProfilingFile> ProfilingService::AcceptUpload(const std::string& request_id,
                                                       const std::string& host, int32_t pid,
                                                       int32_t rank, const std::string& trace_id,
                                                       std::string_view gzip_body) {
  if (gzip_body.size() > options_.max_file_bytes) {
    return ResourceExhaustedError(fmt::format("trace of {} bytes is over the cap of {}",
                                              gzip_body.size(), options_.max_file_bytes));
  }
  if (gzip_body.size() < 2 || gzip_body[0] != '\x1f' || gzip_body[1] != '\x8b') {
    return InvalidArgumentError("the body must be the gzip-compressed trace file");
  }
  std::unique_lock lock(mu_);
  auto it = requests_.find(request_id);
  if (it == requests_.end()) {
    return NotFoundError("no profiling request " + SanitizeForLog(request_id, 64));
  }
  ProfilingRequest& r = it->second;
  if (r.state != "collecting" && r.state != "starting") {
    return FailedPreconditionError("profiling request " + request_id + " is " + r.state +
                                   ", no longer collecting files");
  }
  const bool known_host = std::any_of(r.hosts.begin(), r.hosts.end(),
                                      [&](const ProfilingHost& h) { return h.host == host; });
  if (!known_host) {
    return FailedPreconditionError("host " + SanitizeForLog(host, 64) +
                                   " is not part of profiling request " + request_id);
  }
  auto same = std::find_if(r.files.begin(), r.files.end(),
                           [&](const ProfilingFile& f) { return f.host == host && f.pid == pid; });
  if (same == r.files.end() && r.files.size() >= options_.max_files) {
    return ResourceExhaustedError("profiling request " + request_id + " has all its files");
  }
  ProfilingFile f;
  f.host = host;
  f.pid = pid;
  f.rank = rank;
  f.trace_id = SanitizeForLog(trace_id, 64);
  // The analyser takes a rank from a file name when the trace does not name its own.
  f.path =
      JoinPath(r.trace_dir, SafeName(host) + "-" + std::to_string(pid) +
                                (rank >= 0 ? "-rank" + std::to_string(rank) : "") + ".json.gz");
  f.bytes = gzip_body.size();
  f.received_ns = Now();
  const std::string dir = r.trace_dir;
  lock.unlock();  // File I/O without the lock; the request cannot go away.
  VIGIL_RETURN_IF_ERROR(MakeDirs(dir, 0750));
  VIGIL_RETURN_IF_ERROR(WriteFileAtomic(f.path, gzip_body, 0640));
  lock.lock();
  ProfilingRequest& live = requests_[request_id];
  same = std::find_if(live.files.begin(), live.files.end(),
                      [&](const ProfilingFile& g) { return g.host == host && g.pid == pid; });
  if (same != live.files.end()) {
    *same = f;
  } else {
    live.files.push_back(f);
  }
  live.updated_ns = f.received_ns;
  MaybeFinishCollectingLocked(&live, f.received_ns);
  PersistLocked(live);
  VIGIL_LOG_INFO("profiling upload: request_id={} host={} pid={} rank={} bytes={}", request_id,
                 SanitizeForLog(host), pid, rank, f.bytes);
  return f;
}

}  // namespace vigil
