// SPDX-License-Identifier: Apache-2.0
// Who holds a busy process, and until when. A process holds one trace at a time, so a request
// that finds it busy can only wait; for the caller to know how long, the reply names the holding
// session (trace id, origin, requester, reason) and, from that session's own timing, when the
// trace should end and when the daemon gives up on it and frees the process at the latest. The
// times follow the same rules as TraceService::AdvanceLocked, which ends the hold. Owner: ipc.
#include <algorithm>

#include "base/time_util.h"
#include "ipc/trace_sessions.h"

namespace vigil {
namespace {

// A monotonic time of `session` as Unix ms (the session keeps both clocks at creation).
int64_t UnixMsAt(const TraceSession& session, int64_t monotonic_ns) {
  return (session.created_unix_ns + (monotonic_ns - session.created_ns)) / kNanosPerMilli;
}

nlohmann::json TimeJson(int64_t unix_ms) {
  return unix_ms > 0 ? nlohmann::json(FormatTimestamp(unix_ms * kNanosPerMilli)) : nlohmann::json();
}

}  // namespace

nlohmann::json TraceService::DescribeHolder(const std::string& trace_id, int32_t pid) const {
  const int64_t now = registry_->Now();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(trace_id);
  if (it == sessions_.end()) {
    return nullptr;
  }
  const TraceSession& s = it->second;
  auto proc = std::find_if(s.processes.begin(), s.processes.end(),
                           [&](const TraceProcess& p) { return p.pid == pid; });
  const bool delivered = proc != s.processes.end() && proc->state != TraceState::kQueued;
  // Delivered: from the delivery. Still queued: as if the process took it now (the earliest).
  const int64_t taken_ns = delivered ? proc->delivered_ns : std::max(now, s.created_ns);
  int64_t expected_end_ms = 0;
  int64_t gives_up_ms = 0;
  std::string basis;
  if (s.iterations > 0) {
    basis = "iteration-based: ends after the process's next " + std::to_string(s.iterations) +
            " iterations";
    gives_up_ms = UnixMsAt(s, taken_ns + options_.iteration_timeout_ns);
  } else {
    int64_t wait_for_start_ns = s.warmup_ms * kNanosPerMilli;
    if (s.start_unix_ms > 0) {
      expected_end_ms = s.start_unix_ms + s.duration_ms;
      basis = "its start time plus its duration";
      wait_for_start_ns =
          std::max<int64_t>(0, s.start_unix_ms * kNanosPerMilli - s.created_unix_ns);
    } else {
      expected_end_ms = UnixMsAt(s, taken_ns) + s.warmup_ms + s.duration_ms;
      basis = delivered ? "its delivery plus warm-up and duration"
                        : "not delivered yet: if the process takes it now, warm-up plus duration";
    }
    gives_up_ms = UnixMsAt(s, taken_ns + wait_for_start_ns + s.duration_ms * kNanosPerMilli +
                                  options_.finish_grace_ns);
  }
  if (!delivered) {  // Not taken by the delivery deadline: freed then.
    gives_up_ms = std::max(gives_up_ms, UnixMsAt(s, s.created_ns + options_.delivery_timeout_ns));
  }
  return nlohmann::json{
      {"trace_id", s.trace_id},
      {"origin", s.origin},
      {"requested_by", s.caller},
      {"reason", s.reason},
      {"state", proc == s.processes.end() ? "unknown" : std::string(TraceStateName(proc->state))},
      {"expected_end", TimeJson(expected_end_ms)},
      {"expected_end_unix_ms", expected_end_ms > 0 ? nlohmann::json(expected_end_ms) : nullptr},
      {"expected_end_basis", basis},
      {"gives_up_at", TimeJson(gives_up_ms)},
      {"gives_up_at_unix_ms", gives_up_ms}};
}

}  // namespace vigil
