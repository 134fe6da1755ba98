// SPDX-License-Identifier: Apache-2.0
// A profile asked for over the daemon's control RPC (method "vigilProfile"): the request's
// fields and limits, the run, and the reply, so `vigil profile --host H` gets what a local run
// gets. Request: {"pids": [..] and/or "job_id", "duration_ms", "frequency_hz",
// "unwind": "dwarf"|"fp", "python", "kernel"} (a job's pids are the daemon's to resolve); reply:
// {"profile": ProfileToJson(...), "samples", "lost", "threads", "kernel_stacks"} or {"error":
// "..."}. Limits: 1..64 pids, 100 ms..300 s, 1..1000 Hz. Who may sample which process is the
// caller's decision (`may_sample`). Blocks for the duration: the daemon runs it on a worker thread.
// Stateless.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "profile/profile.h"
#include "profile/profile_session.h"

namespace vigil {

inline constexpr char kProfileMethod[] = "vigilProfile";

// The request's session options; InvalidArgument for a field out of its limits.
StatusOr<ProfileSessionOptions> ParseProfileRequest(const nlohmann::json& request);
nlohmann::json ProfileRequestJson(const ProfileSessionOptions& options);

// The processes of a job on this host, as the daemon knows them.
using PidsOfJob = std::function<std::vector<int>(const std::string& job_id)>;

// Runs the request. A "job_id" adds the job's processes (`pids_of_job`; without one, or when it
// finds none, the reply says so). `may_sample(pid)` is asked for every pid first; its error is
// the reply's.
nlohmann::json RunProfileRequest(const nlohmann::json& request,
                                 const std::function<Status(int pid)>& may_sample,
                                 const PidsOfJob& pids_of_job = nullptr);

// The real uid owning `pid` (/proc/PID/status), NotFound when it does not exist.
StatusOr<int> ProcessOwnerUid(int pid, const std::string& proc_root = "/proc");

// A profile back from ProfileToJson's JSON; InvalidArgument when the shape is wrong or a stack
// names a frame id that does not exist.
StatusOr<Profile> ProfileFromJson(const nlohmann::json& json);

}  // namespace vigil
