// SPDX-License-Identifier: Apache-2.0
#include "ipc/trace_rpc.h"

#include <algorithm>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "base/strings.h"

namespace vigil {
namespace {

// Bounds of the numeric request fields (docs/protocols.md, "vigilTraceStart").
constexpr int64_t kMaxProcessLimit = 100000;
constexpr int64_t kMaxDurationMs = 3600000;  // As ACTIVITIES_DURATION_MSECS allows.
constexpr int64_t kMaxIterations = 1000000;
constexpr int64_t kMaxUnixMs = 4102444800000;   // 2100-01-01.
constexpr int64_t kMaxStartDelayMs = 86400000;  // One day.

nlohmann::json Error(const std::string& message) { return nlohmann::json{{"error", message}}; }

nlohmann::json NotYours(const char* method, const std::string& trace_id) {
  return Error(fmt::format("{}: permission denied: trace {} holds other users' processes", method,
                           trace_id));
}

// Job ids arrive as Dynolog's integer or as Vigil's string.
bool ReadJobId(const nlohmann::json& request, std::string* out, std::string* error) {
  auto it = request.find("job_id");
  if (it == request.end() || it->is_null()) {
    return true;
  }
  if (it->is_number_integer()) {
    *out = std::to_string(it->get<int64_t>());
    return true;
  }
  if (it->is_string() && it->get_ref<const std::string&>().size() <= 256) {
    *out = it->get<std::string>();
    return true;
  }
  *error = "job_id must be an integer or a string";
  return false;
}

bool ReadPids(const nlohmann::json& request, std::set<int32_t>* out, std::string* error) {
  auto it = request.find("pids");
  if (it == request.end()) {
    return true;
  }
  if (!it->is_array() || it->size() > 4096) {
    *error = "pids must be an array of at most 4096 integers";
    return false;
  }
  for (const auto& v : *it) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 0x7fffffff) {
      *error = "pids must hold non-negative integers";
      return false;
    }
    out->insert(v.get<int32_t>());
  }
  return true;
}

// An integer field within [min, max]: floats, strings and out-of-range values are refused with
// a message naming the field and its range (so no later arithmetic can overflow).
template <typename T>
bool ReadNumber(const nlohmann::json& request, const char* key, int64_t min, int64_t max, T* out,
                std::string* error) {
  auto it = request.find(key);
  if (it == request.end() || it->is_null()) {
    return true;
  }
  const bool in_range =
      it->is_number_integer() &&
      !(it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(max)) &&
      it->get<int64_t>() >= min && it->get<int64_t>() <= max;
  if (!in_range) {
    *error = fmt::format("{} must be an integer in [{}, {}]", key, min, max);
    return false;
  }
  *out = static_cast<T>(it->get<int64_t>());
  return true;
}

bool ReadBool(const nlohmann::json& request, const char* key, bool* out, std::string* error) {
  auto it = request.find(key);
  if (it == request.end() || it->is_null()) {
    return true;
  }
  if (!it->is_boolean()) {
    *error = fmt::format("{} must be true or false", key);
    return false;
  }
  *out = it->get<bool>();
  return true;
}

bool IsUploadRequestId(const std::string& id) {
  if (id.empty() || id.size() > 128) {
    return false;
  }
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

// Whether `caller` may see or cancel `session`: privileged callers always; others when they
// started it, or when every process in it is theirs.
bool MayTouchSession(TraceService* service, const TraceSession& session, const CallerInfo& caller) {
  if (CallerIsPrivileged(caller)) {
    return true;
  }
  if (caller.uid < 0) {
    return false;
  }
  if (session.owner_uid == caller.uid) {
    return true;
  }
  if (session.processes.empty()) {
    return false;
  }
  return std::all_of(session.processes.begin(), session.processes.end(),
                     [&](const TraceProcess& p) {
                       std::optional<RegisteredProcess> r = service->registry()->Find(p.host_pid);
                       return r.has_value() && r->uid == caller.uid;
                     });
}

// Registered processes as `caller` may see them: every one when privileged, else its own.
nlohmann::json VisibleNoMatch(TraceService* service, const TraceSession& s,
                              const CallerInfo& caller) {
  nlohmann::json why = service->ExplainNoMatch(s.job_id, s.pids);
  if (CallerIsPrivileged(caller) || !why.contains("registered")) {
    return why;
  }
  nlohmann::json own = nlohmann::json::array();
  for (const auto& entry : why["registered"]) {
    std::optional<RegisteredProcess> r =
        service->registry()->Find(entry.value("host_pid", int32_t{0}));
    if (r.has_value() && r->uid == caller.uid) {
      own.push_back(entry);
    }
  }
  why["reason"] = fmt::format(
      "none of your {} registered processes matches (other users' processes are not shown)",
      own.size());
  why["registered_count"] = own.size();
  why["registered"] = std::move(own);
  return why;
}

// Who asked, for the log and for callers that find a process busy: the peer, with its uid on TCP
// (a unix peer's text already names it).
std::string Requester(const CallerInfo& caller) {
  if (caller.transport == CallerInfo::Transport::kTcp && caller.uid >= 0) {
    return fmt::format("{} (uid {})", caller.peer, caller.uid);
  }
  return caller.peer;
}

// Adds to each `busy` entry held by another trace what holds it (TraceService::DescribeHolder).
// The requester and reason of a session the caller may not see are left out.
void DescribeBusy(TraceService* service, const CallerInfo& caller, nlohmann::json* reply) {
  for (nlohmann::json& b : (*reply)["busy"]) {
    const std::string holder = b.value("held_by", "");
    if (holder.empty() || holder == "process_limit") {
      continue;
    }
    nlohmann::json about = service->DescribeHolder(holder, b.value("pid", int32_t{0}));
    if (about.is_null()) {
      continue;
    }
    auto session = service->Get(holder);
    if (!session.ok() || !MayTouchSession(service, *session, caller)) {
      about["requested_by"] = nullptr;
      about.erase("reason");
    }
    b["holder"] = std::move(about);
  }
}

nlohmann::json SessionReply(TraceService* service, const TraceSession& s,
                            const CallerInfo& caller) {
  nlohmann::json reply = TraceSessionToJson(s);
  DescribeBusy(service, caller, &reply);
  return reply;
}

nlohmann::json StartReply(TraceService* service, const TraceSession& s, const CallerInfo& caller) {
  nlohmann::json reply = SessionReply(service, s, caller);
  size_t matched = s.processes.size() + s.busy.size();
  reply["matched"] = matched;
  reply["triggered"] = s.processes.size();
  if (matched == 0) {
    reply["why_nothing_matched"] = VisibleNoMatch(service, s, caller);
  }
  return reply;
}

// The uid an unprivileged caller's request is limited to; -1 for a privileged caller.
int OwnerUid(const CallerInfo& caller) { return CallerIsPrivileged(caller) ? -1 : caller.uid; }

}  // namespace

nlohmann::json HandleSetKinetOnDemandRequest(TraceService* service, const nlohmann::json& request,
                                             const CallerInfo& caller) {
  // Dynolog answers {"status": "failed"} when config or pids is missing.
  if (!request.contains("config") || !request.contains("pids") || !request["config"].is_string()) {
    return nlohmann::json{{"status", "failed"}};
  }
  std::string job_id = "0";  // Dynolog's default.
  std::set<int32_t> pids;
  std::string error;
  int process_limit = 1000;
  if (!ReadJobId(request, &job_id, &error) || !ReadPids(request, &pids, &error) ||
      !ReadNumber(request, "process_limit", 1, kMaxProcessLimit, &process_limit, &error)) {
    return nlohmann::json{{"status", "failed with exception = " + error}};
  }
  auto session = service->StartRaw(job_id, pids, request["config"].get<std::string>(),
                                   process_limit, Requester(caller), OwnerUid(caller));
  if (!session.ok()) {
    return nlohmann::json{{"status", "failed: " + session.status().message()}};
  }
  std::vector<int32_t> matched;
  std::vector<int32_t> triggered;
  int busy = 0;
  for (const TraceProcess& p : session->processes) {
    matched.push_back(p.pid);
    triggered.push_back(p.pid);
  }
  for (const auto& [pid, holder] : session->busy) {
    matched.push_back(pid);
    if (!holder.empty()) {
      ++busy;
    }
  }
  // Field for field what Dynolog's SimpleJsonServer sends (nlohmann orders keys alphabetically
  // in both programs, so the bytes match too).
  nlohmann::json reply;
  reply["processesMatched"] = matched;
  reply["eventProfilersTriggered"] = std::vector<int32_t>{};
  reply["activityProfilersTriggered"] = triggered;
  reply["eventProfilersBusy"] = 0;
  reply["activityProfilersBusy"] = busy;
  // Vigil's one addition (Dynolog's clients ignore keys they do not know): where the traces
  // really go when the requested path was moved into the trace root and something was triggered.
  if (session->log_file.rewritten && !session->processes.empty()) {
    nlohmann::json files = nlohmann::json::array();
    for (const TraceProcess& p : session->processes) {
      files.push_back({{"pid", p.pid}, {"path", p.path}});
    }
    auto asked = ParseKinetoConfig(request["config"].get<std::string>());
    const std::string* requested = asked.ok() ? asked->Find(kKinetoLogFileKey) : nullptr;
    reply[kRewrittenLogFilesKey] = {{"trace_id", session->trace_id},
                                    {"requested", requested ? *requested : ""},
                                    {"log_file", session->log_file.path},
                                    {"note", session->log_file.note},
                                    {"files", std::move(files)}};
  }
  return reply;
}

nlohmann::json HandleVigilTraceStart(TraceService* service, const nlohmann::json& request,
                                     const CallerInfo& caller) {
  TraceRequest req;
  req.caller = Requester(caller);
  req.owner_uid = OwnerUid(caller);
  std::string error;
  if (!ReadJobId(request, &req.job_id, &error) || !ReadPids(request, &req.pids, &error) ||
      !ReadNumber(request, "process_limit", 1, kMaxProcessLimit, &req.process_limit, &error) ||
      !ReadNumber(request, "duration_ms", 0, kMaxDurationMs, &req.duration_ms, &error) ||
      !ReadNumber(request, "iterations", -1, kMaxIterations, &req.iterations, &error) ||
      !ReadNumber(request, "profile_start_time", 0, kMaxUnixMs, &req.profile_start_time_ms,
                  &error) ||
      !ReadNumber(request, "start_delay_ms", 0, kMaxStartDelayMs, &req.start_delay_ms, &error) ||
      !ReadNumber(request, "profile_start_iteration_roundup", 1, kMaxIterations,
                  &req.profile_start_iteration_roundup, &error) ||
      !ReadBool(request, "record_shapes", &req.record_shapes, &error) ||
      !ReadBool(request, "profile_memory", &req.profile_memory, &error) ||
      !ReadBool(request, "with_stacks", &req.with_stacks, &error) ||
      !ReadBool(request, "with_flops", &req.with_flops, &error) ||
      !ReadBool(request, "with_modules", &req.with_modules, &error)) {
    return Error("vigilTraceStart: " + error);
  }
  if (auto it = request.find("log_file"); it != request.end() && it->is_string()) {
    req.log_file = it->get<std::string>();
  }
  if (auto it = request.find("reason"); it != request.end() && it->is_string()) {
    req.reason = SanitizeForLog(it->get<std::string>(), 200);
  }
  if (auto it = request.find("upload"); it != request.end() && !it->is_null()) {
    auto id = it->is_object() ? it->find("request_id") : it->end();
    if (!it->is_object() || id == it->end() || !id->is_string() ||
        !IsUploadRequestId(id->get_ref<const std::string&>())) {
      return Error(
          "vigilTraceStart: upload must be {\"request_id\": \"...\"} with 1-128 characters of "
          "[A-Za-z0-9._-]");
    }
    req.upload_request_id = id->get<std::string>();
  }
  if (auto it = request.find("config"); it != request.end()) {
    if (!it->is_object()) {
      return Error("vigilTraceStart: config must be an object of KEY: value");
    }
    for (const auto& [key, value] : it->items()) {
      std::string text = value.is_string() ? value.get<std::string>() : value.dump();
      Status s = ValidateKinetoEntry(key, text);
      if (!s.ok()) {
        return Error("vigilTraceStart: " + s.message());
      }
      req.extra.Set(key, text);
    }
  }
  if (req.process_limit <= 0) {
    return Error("vigilTraceStart: process_limit must be positive");
  }
  auto session = service->Start(req);
  if (!session.ok()) {
    return Error("vigilTraceStart: " + session.status().message());
  }
  return StartReply(service, *session, caller);
}

void RegisterTraceMethods(RpcDispatcher* dispatcher, TraceService* service) {
  dispatcher->Register(
      "setKinetOnDemandRequest",
      [service](const nlohmann::json& request, const CallerInfo& caller) {
        return HandleSetKinetOnDemandRequest(service, request, caller);
      },
      RpcAccess::kControl);
  dispatcher->Register(
      "vigilTraceStart",
      [service](const nlohmann::json& request, const CallerInfo& caller) {
        return HandleVigilTraceStart(service, request, caller);
      },
      RpcAccess::kControl);
  dispatcher->Register(
      "vigilTraceStatus",
      [service](const nlohmann::json& request, const CallerInfo& caller) {
        auto id = request.find("trace_id");
        if (id == request.end() || !id->is_string()) {
          return Error("vigilTraceStatus: trace_id (string) is required");
        }
        auto session = service->Get(id->get<std::string>());
        if (!session.ok()) {
          return Error("vigilTraceStatus: " + session.status().message());
        }
        if (!MayTouchSession(service, *session, caller)) {
          return NotYours("vigilTraceStatus", session->trace_id);
        }
        return SessionReply(service, *session, caller);
      },
      RpcAccess::kRead);
  dispatcher->Register(
      "vigilTraceCancel",
      [service](const nlohmann::json& request, const CallerInfo& caller) {
        auto id = request.find("trace_id");
        if (id == request.end() || !id->is_string()) {
          return Error("vigilTraceCancel: trace_id (string) is required");
        }
        auto found = service->Get(id->get<std::string>());
        if (found.ok() && !MayTouchSession(service, *found, caller)) {
          return NotYours("vigilTraceCancel", found->trace_id);
        }
        auto session = service->Cancel(id->get<std::string>());
        if (!session.ok()) {
          return Error("vigilTraceCancel: " + session.status().message());
        }
        return TraceSessionToJson(*session);
      },
      RpcAccess::kControl);
  dispatcher->Register(
      "vigilTraceList",
      [service](const nlohmann::json&, const CallerInfo& caller) {
        // Other users' sessions, pids, paths and upload ids only for privileged callers.
        nlohmann::json sessions = nlohmann::json::array();
        for (const TraceSession& s : service->List()) {
          if (MayTouchSession(service, s, caller)) {
            sessions.push_back(TraceSessionToJson(s));
          }
        }
        nlohmann::json processes = nlohmann::json::array();
        const int64_t now = service->registry()->Now();
        for (const RegisteredProcess& p : service->registry()->Snapshot()) {
          if (CallerMayTouchUid(caller, p.uid)) {
            processes.push_back(RegisteredProcessToJson(p, now));
          }
        }
        return nlohmann::json{{"sessions", std::move(sessions)},
                              {"processes", std::move(processes)}};
      },
      RpcAccess::kRead);
}

}  // namespace vigil
