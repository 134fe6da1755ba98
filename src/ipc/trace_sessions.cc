// SPDX-License-Identifier: Apache-2.0
#include "ipc/trace_sessions.h"

#include <sys/stat.h>

#include <algorithm>
#include <random>
#include <utility>

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"

namespace vigil {
namespace {

constexpr size_t kMaxListedProcesses = 100;

std::string BoolText(bool b) { return b ? "true" : "false"; }

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The file the daemon opens for a process: beneath the root's handle for a process of the host,
// inside /proc/<pid>/root (resolved as that root) for one in another mount namespace.
FileBeneath LocateTraceFile(const TraceRoot& root, const std::string& proc_root,
                            const RegisteredProcess& p, const std::string& path) {
  if (!p.InNamespace()) {
    return root.Locate(path, p.uid);
  }
  FileBeneath file;
  file.dir_path = JoinPath(JoinPath(proc_root, std::to_string(p.host_pid)), "root");
  file.relative = path;
  file.in_root = true;
  file.owner_uid = p.uid;
  return file;
}

}  // namespace

std::string_view TraceStateName(TraceState state) {
  switch (state) {
    case TraceState::kQueued:
      return "queued";
    case TraceState::kDelivered:
      return "delivered";
    case TraceState::kRunning:
      return "running";
    case TraceState::kWritten:
      return "written";
    case TraceState::kFailed:
      return "failed";
    case TraceState::kExpired:
      return "expired";
  }
  return "unknown";
}

bool TraceSession::Done() const {
  return std::all_of(processes.begin(), processes.end(),
                     [](const TraceProcess& p) { return IsTerminal(p.state); });
}

TraceService::TraceService(TraceServiceOptions options, ProcessRegistry* registry)
    : options_(std::move(options)), registry_(registry) {
  if (!options_.unix_clock) {
    options_.unix_clock = &UnixNanos;
  }
  registry_->SetObserver(this);
}

TraceService::~TraceService() { registry_->SetObserver(nullptr); }

StatusOr<KinetoConfig> TraceService::BuildConfig(const TraceRequest& request) {
  KinetoConfig config;
  if (!request.log_file.empty()) {
    config.Set(kKinetoLogFileKey, request.log_file);
  }
  if (request.iterations > 0) {
    config.Set("PROFILE_START_ITERATION", "0");
    config.Set("PROFILE_START_ITERATION_ROUNDUP",
               std::to_string(request.profile_start_iteration_roundup));
    config.Set("ACTIVITIES_ITERATIONS", std::to_string(request.iterations));
  } else {
    config.Set("PROFILE_START_TIME", std::to_string(request.profile_start_time_ms));
    config.Set("ACTIVITIES_DURATION_MSECS", std::to_string(request.duration_ms));
  }
  config.Set("PROFILE_REPORT_INPUT_SHAPES", BoolText(request.record_shapes));
  config.Set("PROFILE_PROFILE_MEMORY", BoolText(request.profile_memory));
  config.Set("PROFILE_WITH_STACK", BoolText(request.with_stacks));
  config.Set("PROFILE_WITH_FLOPS", BoolText(request.with_flops));
  config.Set("PROFILE_WITH_MODULES", BoolText(request.with_modules));
  for (const auto& [key, value] : request.extra.entries) {
    config.Set(key, value);
  }
  for (const auto& [key, value] : config.entries) {
    VIGIL_RETURN_IF_ERROR(ValidateKinetoEntry(key, value));
  }
  return config;
}

std::string TraceService::NewTraceId() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("tr-{:08x}-{:04x}", static_cast<uint32_t>(rng()), next_serial_++ & 0xffff);
}

Status TraceService::CheckRateLimit(int64_t now_ns) {
  while (!recent_starts_.empty() && now_ns - recent_starts_.front() > 60 * kNanosPerSecond) {
    recent_starts_.pop_front();
  }
  if (options_.max_starts_per_minute > 0 &&
      recent_starts_.size() >= static_cast<size_t>(options_.max_starts_per_minute)) {
    return ResourceExhaustedError(fmt::format("rate limited: at most {} trace requests per minute",
                                              options_.max_starts_per_minute));
  }
  recent_starts_.push_back(now_ns);
  return OkStatus();
}

StatusOr<TraceSession> TraceService::Start(const TraceRequest& request) {
  VIGIL_ASSIGN_OR_RETURN(KinetoConfig config, BuildConfig(request));
  TraceSession session;
  session.origin = request.origin;
  session.reason = request.reason;
  session.caller = request.caller;
  session.job_id = request.job_id;
  session.pids = request.pids;
  session.upload_request_id = request.upload_request_id;
  session.owner_uid = request.owner_uid;
  if (request.start_delay_ms > 0 && request.profile_start_time_ms == 0 && request.iterations <= 0) {
    const int64_t start = options_.unix_clock() / kNanosPerMilli + request.start_delay_ms;
    config.Set("PROFILE_START_TIME", std::to_string(start));
  }
  session.config = config.ToString();
  return StartSession(std::move(session), request.process_limit);
}

StatusOr<TraceSession> TraceService::StartRaw(const std::string& job_id,
                                              const std::set<int32_t>& pids,
                                              const std::string& config_text, int process_limit,
                                              const std::string& caller, int owner_uid) {
  VIGIL_ASSIGN_OR_RETURN(KinetoConfig config, ParseKinetoConfig(config_text));
  TraceSession session;
  session.origin = "setKinetOnDemandRequest";
  session.caller = caller;
  session.owner_uid = owner_uid;
  session.job_id = job_id;
  session.pids = pids;
  session.config = config.ToString();
  return StartSession(std::move(session), process_limit);
}

StatusOr<TraceSession> TraceService::StartSession(TraceSession session, int process_limit) {
  VIGIL_ASSIGN_OR_RETURN(KinetoConfig config, ParseKinetoConfig(session.config));
  const int64_t now = registry_->Now();
  std::lock_guard<std::mutex> lock(mu_);
  VIGIL_RETURN_IF_ERROR(CheckRateLimit(now));
  session.trace_id = NewTraceId();
  session.created_ns = now;
  session.created_unix_ns = options_.unix_clock();
  const std::string* found = config.Find(kKinetoLogFileKey);
  const std::string requested = found ? *found : "";
  const std::string root_path = OpenRootLocked().ok() ? root_->path() : options_.trace_root;
  session.log_file = DecideLogFile(root_path, session.trace_id, requested);
  config.Set(kKinetoLogFileKey, session.log_file.path);
  // As Dynolog does: Kineto writes it into the trace's `trace_id`, which joins a file to the
  // request that made it (vigil analyze, vigil-fleet). A caller's own value is replaced.
  config.Set("REQUEST_TRACE_ID", session.trace_id);
  if (const std::string* v = config.Find("PROFILE_START_TIME")) {
    session.start_unix_ms = ParseInt64(*v).value_or(0);
  }
  if (const std::string* v = config.Find("ACTIVITIES_DURATION_MSECS")) {
    session.duration_ms = ParseInt64(*v).value_or(0);
  } else if (const std::string* s = config.Find("ACTIVITIES_DURATION_SECS")) {
    session.duration_ms = ParseInt64(*s).value_or(0) * 1000;
  } else {
    session.duration_ms = 500;  // Kineto's default.
  }
  if (const std::string* v = config.Find("ACTIVITIES_ITERATIONS")) {
    session.iterations = ParseInt64(*v).value_or(0);
  }
  if (const std::string* v = config.Find("ACTIVITIES_WARMUP_PERIOD_SECS")) {
    session.warmup_ms = ParseInt64(*v).value_or(5) * 1000;
  }
  session.config = config.ToString();

  std::vector<RegisteredProcess> matched = registry_->Match(session.job_id, session.pids);
  if (session.owner_uid >= 0) {  // An unprivileged caller traces only its own processes.
    std::erase_if(matched, [&](const RegisteredProcess& p) { return p.uid != session.owner_uid; });
  }
  std::map<int, std::string> log_file_by_uid;
  if (!matched.empty()) {
    VIGIL_ASSIGN_OR_RETURN(log_file_by_uid, MakeTraceDirsLocked(session, matched));
  }
  int triggered = 0;
  for (const RegisteredProcess& p : matched) {
    TraceProcess proc;
    proc.pid = p.pid;
    proc.host_pid = p.host_pid;
    proc.job_id = p.job_id;
    proc.uid = p.uid;
    if (triggered >= process_limit) {
      continue;  // Matched but beyond the limit (Dynolog reports it as matched only).
    }
    const std::string& log_file = log_file_by_uid.at(p.uid);
    std::string process_config = session.config;
    if (log_file != session.log_file.path) {
      config.Set(kKinetoLogFileKey, log_file);
      process_config = config.ToString();
    }
    if (!registry_->Offer(p.host_pid, process_config, session.trace_id)) {
      session.busy.emplace_back(p.pid, p.trace_id);
      continue;
    }
    ++triggered;
    proc.path = KinetoTraceFileForPid(log_file, p.pid);
    proc.file = LocateTraceFile(*root_, options_.proc_root, p, proc.path);
    proc.watch_path = proc.file.DisplayPath();
    proc.state = TraceState::kQueued;
    session.processes.push_back(std::move(proc));
  }
  VIGIL_LOG_INFO(
      "trace requested: trace_id={} origin={} caller={} job_id={} matched={} triggered={} busy={} "
      "log_file={}{}",
      session.trace_id, session.origin, SanitizeForLog(session.caller),
      SanitizeForLog(session.job_id), matched.size(), triggered, session.busy.size(),
      session.log_file.path, session.log_file.rewritten ? " (rewritten)" : "");
  if (session.log_file.rewritten) {  // One line per rewrite: what was asked, where it goes.
    VIGIL_LOG_INFO(
        "trace log file rewritten: trace_id={} origin={} requested={} written_to={} ({})",
        session.trace_id, session.origin, SanitizeForLog(requested, 512), session.log_file.path,
        session.log_file.note);
  }
  order_.push_back(session.trace_id);
  sessions_[session.trace_id] = session;
  // Keep the matched-but-not-triggered pids visible to callers that want Dynolog's view.
  TraceSession reply = session;
  for (const RegisteredProcess& p : matched) {
    const bool listed =
        std::any_of(reply.processes.begin(), reply.processes.end(),
                    [&](const TraceProcess& t) { return t.host_pid == p.host_pid; });
    const bool busy = std::any_of(reply.busy.begin(), reply.busy.end(),
                                  [&](const auto& b) { return b.first == p.pid; });
    if (!listed && !busy) {
      reply.busy.emplace_back(p.pid, "");  // Over the process limit.
    }
  }
  PruneLocked();
  return reply;
}

Status TraceService::OpenRoot() {
  std::lock_guard<std::mutex> lock(mu_);
  return OpenRootLocked();
}

Status TraceService::OpenRootLocked() {
  if (root_) {
    return OkStatus();
  }
  VIGIL_ASSIGN_OR_RETURN(TraceRoot root, TraceRoot::Open(options_.trace_root));
  root_ = std::move(root);
  return OkStatus();
}

StatusOr<std::map<int, std::string>> TraceService::MakeTraceDirsLocked(
    const TraceSession& session, const std::vector<RegisteredProcess>& matched) {
  VIGIL_RETURN_IF_ERROR(OpenRootLocked());
  std::set<int> uids;
  for (const RegisteredProcess& p : matched) {
    if (p.uid < 0) {
      return FailedPreconditionError(fmt::format(
          "the user of pid {} is unknown: its trace directory cannot be handed to it", p.pid));
    }
    uids.insert(p.uid);
  }
  std::map<int, std::string> out;
  const std::string name = BaseName(session.log_file.path);
  if (uids.size() == 1) {
    VIGIL_RETURN_IF_ERROR(root_->MakeDir("", session.trace_id, *uids.begin()));
    out[*uids.begin()] = session.log_file.path;
    return out;
  }
  // Processes of several users: one private directory each, under a directory of the daemon's.
  VIGIL_RETURN_IF_ERROR(root_->MakeDir("", session.trace_id, -1));
  for (int uid : uids) {
    const std::string sub = fmt::format("u{}", uid);
    VIGIL_RETURN_IF_ERROR(root_->MakeDir(session.trace_id, sub, uid));
    out[uid] = JoinPath(JoinPath(JoinPath(root_->path(), session.trace_id), sub), name);
  }
  return out;
}

StatusOr<TraceSession> TraceService::Get(const std::string& trace_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(trace_id);
  if (it == sessions_.end()) {
    return NotFoundError("no trace session " + SanitizeForLog(trace_id, 64));
  }
  return it->second;
}

StatusOr<TraceSession> TraceService::Cancel(const std::string& trace_id) {
  const int64_t now = registry_->Now();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(trace_id);
  if (it == sessions_.end()) {
    return NotFoundError("no trace session " + SanitizeForLog(trace_id, 64));
  }
  TraceSession& s = it->second;
  s.cancelled = true;
  for (TraceProcess& p : s.processes) {
    if (p.state == TraceState::kQueued) {
      FinishLocked(&s, &p, TraceState::kFailed, "cancelled before delivery", now);
    } else if (!IsTerminal(p.state)) {
      FinishLocked(&s, &p, TraceState::kFailed,
                   "cancelled after delivery: Kineto cannot be recalled, the file may still "
                   "appear at " +
                       p.path,
                   now);
    }
  }
  VIGIL_LOG_INFO("trace cancelled: trace_id={}", trace_id);
  return s;
}

std::vector<TraceSession> TraceService::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<TraceSession> out;
  for (const std::string& id : order_) {
    auto it = sessions_.find(id);
    if (it != sessions_.end()) {
      out.push_back(it->second);
    }
  }
  return out;
}

void TraceService::FinishLocked(TraceSession* session, TraceProcess* proc, TraceState state,
                                std::string reason, int64_t now_ns) {
  proc->state = state;
  proc->reason = std::move(reason);
  proc->finished_ns = now_ns;
  registry_->Release(proc->host_pid, session->trace_id);
}

void TraceService::AdvanceLocked(TraceSession* s, int64_t now) {
  const int64_t now_unix_ms = options_.unix_clock() / kNanosPerMilli;
  for (TraceProcess& p : s->processes) {
    if (IsTerminal(p.state)) {
      continue;
    }
    if (p.state == TraceState::kQueued) {
      if (now - s->created_ns > options_.delivery_timeout_ns) {
        FinishLocked(s, &p, TraceState::kFailed,
                     "not delivered: the process did not poll the daemon in time", now);
      }
      continue;
    }
    // Delivered or running: watch the file, which must be a regular file of the process's user.
    struct stat st;
    StatusOr<ScopedFd> file = OpenOwnedRegularFile(p.file, &st);
    if (!file.ok() && file.status().code() != StatusCode::kNotFound) {
      VIGIL_LOG_WARN("trace file refused: trace_id={} pid={} uid={} err={}", s->trace_id, p.pid,
                     p.uid, file.status().message());
      FinishLocked(s, &p, TraceState::kFailed, "trace file refused: " + file.status().message(),
                   now);
      continue;
    }
    if (file.ok()) {
      const uint64_t size = static_cast<uint64_t>(st.st_size);
      if (size != p.size_bytes || p.last_size_change_ns == 0) {
        p.size_bytes = size;
        p.last_size_change_ns = now;
        p.state = TraceState::kRunning;
      } else if (size > 0 && now - p.last_size_change_ns >= options_.stable_ns) {
        FinishLocked(s, &p, TraceState::kWritten, "", now);
        VIGIL_LOG_INFO("trace written: trace_id={} pid={} path={} bytes={}", s->trace_id, p.pid,
                       p.path, size);
        continue;
      }
    }
    if (p.state == TraceState::kDelivered) {
      const bool started =
          s->iterations > 0 ||
          (s->start_unix_ms > 0 ? now_unix_ms >= s->start_unix_ms
                                : now - p.delivered_ns >= s->warmup_ms * kNanosPerMilli);
      if (started) {
        p.state = TraceState::kRunning;
      }
    }
    int64_t deadline;
    if (s->iterations > 0) {
      deadline = p.delivered_ns + options_.iteration_timeout_ns;
    } else {
      const int64_t wait_for_start_ns =
          s->start_unix_ms > 0
              ? std::max<int64_t>(0, s->start_unix_ms * kNanosPerMilli - s->created_unix_ns)
              : s->warmup_ms * kNanosPerMilli;
      deadline = p.delivered_ns + wait_for_start_ns + s->duration_ms * kNanosPerMilli +
                 options_.finish_grace_ns;
    }
    if (now > deadline) {
      FinishLocked(s, &p, TraceState::kFailed,
                   fmt::format("no complete trace file at {} by the deadline", p.path), now);
    }
  }
}

void TraceService::Tick() {
  registry_->Expire();
  const int64_t now = registry_->Now();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, session] : sessions_) {
    if (!session.Done()) {
      AdvanceLocked(&session, now);
    }
  }
}

void TraceService::OnDelivered(int32_t host_pid, const std::string& trace_id, int64_t now_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(trace_id);
  if (it == sessions_.end()) {
    return;
  }
  for (TraceProcess& p : it->second.processes) {
    if (p.host_pid == host_pid && p.state == TraceState::kQueued) {
      p.state = TraceState::kDelivered;
      p.delivered_ns = now_ns;
    }
  }
}

void TraceService::OnExpired(int32_t host_pid, const std::string& trace_id, int64_t now_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(trace_id);
  if (it == sessions_.end()) {
    return;
  }
  for (TraceProcess& p : it->second.processes) {
    if (p.host_pid != host_pid || IsTerminal(p.state)) {
      continue;
    }
    struct stat st;
    if (p.state != TraceState::kQueued && OpenOwnedRegularFile(p.file, &st).ok() &&
        st.st_size > 0) {
      p.size_bytes = static_cast<uint64_t>(st.st_size);
      FinishLocked(&it->second, &p, TraceState::kWritten, "", now_ns);
    } else {
      FinishLocked(&it->second, &p, TraceState::kExpired,
                   "the process stopped polling the daemon (exited or hung)", now_ns);
    }
  }
}

void TraceService::PruneLocked() {
  while (order_.size() > options_.max_sessions) {
    auto it = sessions_.find(order_.front());
    if (it != sessions_.end() && !it->second.Done()) {
      break;  // Never forget a live session.
    }
    if (it != sessions_.end()) {
      sessions_.erase(it);
    }
    order_.pop_front();
  }
}

nlohmann::json TraceService::ExplainNoMatch(const std::string& job_id,
                                            const std::set<int32_t>& pids) const {
  const std::vector<RegisteredProcess> all = registry_->Snapshot();
  const int64_t now = registry_->Now();
  nlohmann::json registered = nlohmann::json::array();
  size_t in_job = 0;
  for (const RegisteredProcess& p : all) {
    if (!job_id.empty() && p.MatchesJob(job_id)) {
      ++in_job;
    }
    if (registered.size() < kMaxListedProcesses) {
      registered.push_back(RegisteredProcessToJson(p, now));
    }
  }
  std::string reason;
  if (all.empty()) {
    reason =
        "no process is registered with this daemon: start the job with KINETO_USE_DAEMON=1 "
        "(PyTorch) or libvigil_client, and check that its IPC name matches the daemon's "
        "--ipc-name (and KINETO_IPC_SOCKET_DIR)";
  } else if (!job_id.empty() && in_job == 0) {
    reason = fmt::format("{} processes are registered but none has job id {}", all.size(),
                         SanitizeForLog(job_id, 64));
  } else {
    reason = fmt::format("no registered process{} has any of the pids [{}] in its ancestor chain",
                         job_id.empty() ? "" : " of job " + SanitizeForLog(job_id, 64),
                         fmt::join(pids, ","));
  }
  return nlohmann::json{
      {"reason", reason}, {"registered_count", all.size()}, {"registered", std::move(registered)}};
}

nlohmann::json RegisteredProcessToJson(const RegisteredProcess& p, int64_t now_ns) {
  return nlohmann::json{
      {"pid", p.pid},
      {"host_pid", p.host_pid},
      {"job_id", p.job_id},
      {"kineto_job_id", p.kineto_job_id},
      {"pids", p.pids},
      {"gpus", p.gpus},
      {"source", p.source},
      {"team", p.team},
      {"model", p.model},
      {"framework", p.framework},
      {"last_seen_seconds_ago", static_cast<double>(now_ns - p.last_seen_ns) / kNanosPerSecond},
      {"trace_id", p.trace_id}};
}

nlohmann::json TraceSessionToJson(const TraceSession& s) {
  nlohmann::json procs = nlohmann::json::array();
  for (const TraceProcess& p : s.processes) {
    nlohmann::json j{{"pid", p.pid},
                     {"host_pid", p.host_pid},
                     {"job_id", p.job_id},
                     {"state", std::string(TraceStateName(p.state))},
                     {"path", p.path}};
    if (p.state == TraceState::kWritten || p.size_bytes > 0) {
      j["size_bytes"] = p.size_bytes;
    }
    if (!p.reason.empty()) {
      j["reason"] = p.reason;
    }
    procs.push_back(std::move(j));
  }
  nlohmann::json busy = nlohmann::json::array();
  for (const auto& [pid, holder] : s.busy) {
    busy.push_back({{"pid", pid}, {"held_by", holder.empty() ? "process_limit" : holder}});
  }
  nlohmann::json out{{"trace_id", s.trace_id},
                     {"origin", s.origin},
                     {"job_id", s.job_id},
                     {"pids", s.pids},
                     {"created", FormatTimestamp(s.created_unix_ns)},
                     {"config", s.config},
                     {"log_file", s.log_file.path},
                     {"log_file_rewritten", s.log_file.rewritten},
                     {"processes", std::move(procs)},
                     {"busy", std::move(busy)},
                     {"cancelled", s.cancelled},
                     {"done", s.Done()}};
  if (!s.log_file.note.empty()) {
    out["log_file_note"] = s.log_file.note;
  }
  if (!s.reason.empty()) {
    out["reason"] = s.reason;
  }
  if (!s.upload_request_id.empty()) {
    out["upload"] = {{"request_id", s.upload_request_id}};
  }
  return out;
}

}  // namespace vigil
