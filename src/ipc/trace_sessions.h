// SPDX-License-Identifier: Apache-2.0
// On-demand trace sessions. Each request gets a trace id and, for every matched process, a state
// that moves queued -> delivered (the process polled and took the config) -> running (its start
// time or warm-up passed) -> written (the trace file appeared and stopped growing), or ends in
// failed (cancelled, never polled, no file by the deadline) or expired (the process went silent).
// The daemon decides where files go (under the trace root), passes only allow-listed Kineto keys,
// never lets two traces overlap on one process, and explains an empty match by listing what is
// registered. Tick() (called by the daemon about once a second) advances time-based states and
// watches the files. Owner: ipc. Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/beneath.h"
#include "base/status.h"
#include "ipc/process_registry.h"
#include "ipc/trace_config.h"
#include "ipc/trace_root.h"

namespace vigil {

enum class TraceState { kQueued, kDelivered, kRunning, kWritten, kFailed, kExpired };
std::string_view TraceStateName(TraceState state);
inline bool IsTerminal(TraceState s) {
  return s == TraceState::kWritten || s == TraceState::kFailed || s == TraceState::kExpired;
}

struct TraceProcess {
  int32_t pid = 0;
  int32_t host_pid = 0;
  std::string job_id;
  TraceState state = TraceState::kQueued;
  std::string reason;      // Why it failed or expired.
  int uid = -1;            // The process's user: the trace file must be its.
  std::string path;        // Where Kineto writes, as the process sees it.
  std::string watch_path;  // Where the daemon looks (through /proc/<pid>/root in containers).
  FileBeneath file;        // How the daemon opens it: no symlinks, owner checked.
  uint64_t size_bytes = 0;
  int64_t last_size_change_ns = 0;
  int64_t delivered_ns = 0;
  int64_t finished_ns = 0;
};

struct TraceSession {
  std::string trace_id;
  std::string origin;  // "setKinetOnDemandRequest", "vigilTraceStart", "auto:<policy>".
  std::string reason;  // Why it was taken (free text from the caller or the policy).
  std::string caller;
  std::string job_id;
  std::set<int32_t> pids;
  std::string upload_request_id;  // Non-empty: upload written files to vigil-fleet under it.
  std::string config;             // As sent to the processes.
  LogFileDecision log_file;
  int64_t created_unix_ns = 0;
  int64_t created_ns = 0;     // Monotonic.
  int64_t start_unix_ms = 0;  // PROFILE_START_TIME, 0 when immediate.
  int64_t duration_ms = 0;    // 0 when iteration-based.
  int64_t iterations = 0;
  int64_t warmup_ms = 5000;
  std::vector<TraceProcess> processes;
  std::vector<std::pair<int32_t, std::string>> busy;  // (pid, trace holding it).
  int owner_uid = -1;  // >= 0: started by this unprivileged uid; only its processes matched.
  bool cancelled = false;
  bool Done() const;
};

// What a caller asks for; turned into a Kineto config by BuildConfig().
struct TraceRequest {
  std::string job_id;      // "" matches every job.
  std::set<int32_t> pids;  // Empty or {0}: every process of the job.
  int process_limit = 1000;
  int64_t duration_ms = 500;
  int64_t iterations = -1;            // > 0 selects an iteration-based trace.
  std::string log_file;               // Requested; the daemon decides (DecideLogFile).
  int64_t profile_start_time_ms = 0;  // Unix ms; 0 = as soon as possible.
  int64_t start_delay_ms = 0;         // Alternative: the daemon sets start = now + delay.
  int64_t profile_start_iteration_roundup = 1;
  bool record_shapes = false, profile_memory = false, with_stacks = false, with_flops = false,
       with_modules = false;
  KinetoConfig extra;  // Further allow-listed keys.
  std::string reason;
  std::string origin = "vigilTraceStart";
  std::string caller;
  std::string upload_request_id;  // "upload": {"request_id": ...}; "" = no upload.
  int owner_uid = -1;             // >= 0: match only this uid's processes (unprivileged caller).
};

struct TraceServiceOptions {
  std::string trace_root = "/tmp/vigil-traces";
  std::string proc_root = "/proc";
  int64_t delivery_timeout_ns = int64_t{120} * 1000000000;  // Queued this long: failed.
  int64_t finish_grace_ns = int64_t{60} * 1000000000;       // After the expected end.
  int64_t iteration_timeout_ns = int64_t{600} * 1000000000;
  int64_t stable_ns = int64_t{2} * 1000000000;  // File size unchanged this long: written.
  size_t max_sessions = 256;                    // Finished sessions beyond this are forgotten.
  int max_starts_per_minute = 60;
  std::function<int64_t()> unix_clock;  // Defaults to UnixNanos.
};

class TraceService : public RegistryObserver {
 public:
  TraceService(TraceServiceOptions options, ProcessRegistry* registry);
  ~TraceService() override;

  // Builds the Kineto config (dyno gputrace's layout) for a structured request.
  static StatusOr<KinetoConfig> BuildConfig(const TraceRequest& request);

  // Opens (creating it) and checks the trace root (TraceRoot::Open). The daemon calls it at start
  // so a bad root is reported at once; otherwise the first session with a match opens it.
  Status OpenRoot();

  // Starts a session from a structured request. Errors: rate limit, bad config, no trace root.
  StatusOr<TraceSession> Start(const TraceRequest& request);
  // Starts a session from a Dynolog config text (setKinetOnDemandRequest).
  StatusOr<TraceSession> StartRaw(const std::string& job_id, const std::set<int32_t>& pids,
                                  const std::string& config_text, int process_limit,
                                  const std::string& caller, int owner_uid = -1);
  StatusOr<TraceSession> Get(const std::string& trace_id) const;
  StatusOr<TraceSession> Cancel(const std::string& trace_id);
  std::vector<TraceSession> List() const;
  // Advances states and watches files; also expires silent processes in the registry.
  void Tick();

  // Why a request matched nothing, with the registered processes (bounded list).
  nlohmann::json ExplainNoMatch(const std::string& job_id, const std::set<int32_t>& pids) const;

  // What holds a busy process (docs/protocols.md "vigilTraceStart", `busy`): the holding
  // session's trace id, origin, requester and reason, the process's state in it, and when its
  // trace should end and when the daemon gives up on it at the latest (trace_busy.cc). Null when
  // the holding session is no longer known.
  nlohmann::json DescribeHolder(const std::string& trace_id, int32_t pid) const;

  // RegistryObserver.
  void OnDelivered(int32_t host_pid, const std::string& trace_id, int64_t now_ns) override;
  void OnExpired(int32_t host_pid, const std::string& trace_id, int64_t now_ns) override;

  ProcessRegistry* registry() { return registry_; }

 private:
  StatusOr<TraceSession> StartSession(TraceSession session, int process_limit);
  Status CheckRateLimit(int64_t now_ns);
  void AdvanceLocked(TraceSession* session, int64_t now_ns);
  void FinishLocked(TraceSession* session, TraceProcess* proc, TraceState state, std::string reason,
                    int64_t now_ns);
  std::string NewTraceId();
  Status OpenRootLocked();
  // Makes the session's directories: <root>/<trace_id> for the processes' user, or one
  // <root>/<trace_id>/u<uid> per user when they differ. Returns the log file per uid.
  StatusOr<std::map<int, std::string>> MakeTraceDirsLocked(const TraceSession& session,
                                                           const std::vector<RegisteredProcess>&);
  void PruneLocked();

  TraceServiceOptions options_;
  ProcessRegistry* registry_;
  mutable std::mutex mu_;
  std::optional<TraceRoot> root_;  // Opened once (OpenRoot); guarded by mu_.
  std::map<std::string, TraceSession> sessions_;
  std::deque<std::string> order_;  // Trace ids, oldest first.
  std::deque<int64_t> recent_starts_;
  uint64_t next_serial_ = 1;
};

nlohmann::json TraceSessionToJson(const TraceSession& session);
nlohmann::json RegisteredProcessToJson(const RegisteredProcess& process, int64_t now_ns);

}  // namespace vigil
