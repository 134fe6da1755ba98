// SPDX-License-Identifier: Apache-2.0
#include "profile/profile_request.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/strings.h"
#include "profile/json_output.h"

namespace vigil {
namespace {

constexpr size_t kMaxPids = 64;
constexpr int64_t kMinDurationMs = 100;
constexpr int64_t kMaxDurationMs = 300000;
constexpr int kMaxFrequencyHz = 1000;

FrameKind KindFromName(const std::string& name) {
  if (name == "kernel") return FrameKind::kKernel;
  if (name == "python") return FrameKind::kPython;
  if (name == "process") return FrameKind::kProcess;
  return FrameKind::kNative;
}

}  // namespace

StatusOr<ProfileSessionOptions> ParseProfileRequest(const nlohmann::json& request) {
  ProfileSessionOptions o;
  if (!request.contains("pids") || !request["pids"].is_array() || request["pids"].empty() ||
      request["pids"].size() > kMaxPids) {
    return InvalidArgumentError(fmt::format("profile: \"pids\" must list 1 to {} pids", kMaxPids));
  }
  for (const nlohmann::json& pid : request["pids"]) {
    if (!pid.is_number_integer() || pid.get<int64_t>() <= 0 || pid.get<int64_t>() > (1 << 22)) {
      return InvalidArgumentError("profile: a pid is not a positive integer");
    }
    o.pids.push_back(pid.get<int>());
  }
  const int64_t duration = request.value("duration_ms", int64_t{30000});
  if (duration < kMinDurationMs || duration > kMaxDurationMs) {
    return InvalidArgumentError(
        fmt::format("profile: duration_ms must be {}..{}", kMinDurationMs, kMaxDurationMs));
  }
  o.duration = std::chrono::milliseconds(duration);
  o.frequency_hz = request.value("frequency_hz", 99);
  if (o.frequency_hz < 1 || o.frequency_hz > kMaxFrequencyHz) {
    return InvalidArgumentError(
        fmt::format("profile: frequency_hz must be 1..{}", kMaxFrequencyHz));
  }
  const std::string unwind = request.value("unwind", std::string("dwarf"));
  if (unwind != "dwarf" && unwind != "fp") {
    return InvalidArgumentError("profile: unwind is \"dwarf\" or \"fp\"");
  }
  o.unwind = unwind == "fp" ? UnwindMode::kFramePointers : UnwindMode::kDwarf;
  o.python = request.value("python", true);
  o.kernel_stacks = request.value("kernel", true);
  return o;
}

nlohmann::json ProfileRequestJson(const ProfileSessionOptions& o) {
  return {{"fn", kProfileMethod},
          {"pids", o.pids},
          {"duration_ms", o.duration.count()},
          {"frequency_hz", o.frequency_hz},
          {"unwind", o.unwind == UnwindMode::kFramePointers ? "fp" : "dwarf"},
          {"python", o.python},
          {"kernel", o.kernel_stacks}};
}

StatusOr<int> ProcessOwnerUid(int pid, const std::string& proc_root) {
  VIGIL_ASSIGN_OR_RETURN(
      std::string status,
      ReadSmallFile(proc_root + "/" + std::to_string(pid) + "/status", 64 << 10));
  std::string_view text = status, line;
  while (NextLine(&text, &line)) {
    if (line.rfind("Uid:", 0) == 0) {
      std::vector<std::string_view> fields = SplitWhitespace(line.substr(4));
      if (!fields.empty()) {
        if (std::optional<int64_t> uid = ParseInt64(fields[0])) {
          return static_cast<int>(*uid);
        }
      }
    }
  }
  return DataLossError(fmt::format("/proc/{}/status: no Uid line", pid));
}

nlohmann::json RunProfileRequest(const nlohmann::json& request,
                                 const std::function<Status(int pid)>& may_sample,
                                 const PidsOfJob& pids_of_job) {
  nlohmann::json resolved = request;
  if (request.contains("job_id")) {
    const nlohmann::json& job = request["job_id"];
    if (!job.is_string() || job.get<std::string>().empty() || job.get<std::string>().size() > 128) {
      return {{"error", "profile: job_id must be a string of 1 to 128 characters"}};
    }
    const std::string id = job.get<std::string>();
    std::vector<int> pids = pids_of_job ? pids_of_job(id) : std::vector<int>{};
    if (pids.empty()) {
      return {{"error", fmt::format("profile: no process of job {} is known on this host (it "
                                    "holds no GPU and has not registered through Kineto or "
                                    "libvigil_client)",
                                    SanitizeForLog(id, 128))}};
    }
    nlohmann::json& list = resolved["pids"];
    if (!list.is_array()) list = nlohmann::json::array();
    for (int pid : pids) {
      if (std::find(list.begin(), list.end(), pid) == list.end()) list.push_back(pid);
    }
    if (list.size() > kMaxPids) list.erase(list.begin() + kMaxPids, list.end());
  }
  StatusOr<ProfileSessionOptions> options = ParseProfileRequest(resolved);
  if (!options.ok()) {
    return {{"error", options.status().message()}};
  }
  for (int pid : options->pids) {
    if (Status allowed = may_sample(pid); !allowed.ok()) {
      return {{"error", allowed.message()}};
    }
  }
  StatusOr<ProfileSessionResult> result = RunProfileSession(*options);
  if (!result.ok()) {
    return {{"error", result.status().message()}};
  }
  return {{"profile", ProfileToJson(result->profile)},
          {"samples", result->samples},
          {"lost", result->lost},
          {"threads", result->threads},
          {"kernel_stacks", result->kernel_stacks}};
}

StatusOr<Profile> ProfileFromJson(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("frames") || !json["frames"].is_array() ||
      !json.contains("stacks") || !json["stacks"].is_array()) {
    return InvalidArgumentError("profile JSON: no frames or stacks");
  }
  Profile profile;
  std::vector<int> ids;
  for (const nlohmann::json& f : json["frames"]) {
    if (!f.is_object()) {
      return InvalidArgumentError("profile JSON: a frame is not an object");
    }
    ProfileFrame frame;
    frame.kind = KindFromName(f.value("kind", std::string("native")));
    frame.function = f.value("name", std::string("[unknown]"));
    frame.module = f.value("module", std::string());
    frame.file = f.value("file", std::string());
    frame.line = f.value("line", 0);
    ids.push_back(profile.Intern(frame));
  }
  for (const nlohmann::json& s : json["stacks"]) {
    if (!s.is_object() || !s.contains("frames") || !s["frames"].is_array()) {
      return InvalidArgumentError("profile JSON: a stack has no frames");
    }
    std::vector<int> stack;
    for (const nlohmann::json& id : s["frames"]) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<size_t>() >= ids.size()) {
        return InvalidArgumentError("profile JSON: a stack names an unknown frame");
      }
      stack.push_back(ids[id.get<size_t>()]);
    }
    profile.Add(stack, s.value("count", uint64_t{0}));
  }
  ProfileInfo& info = profile.info();
  info.event = json.value("event", std::string("cpu-clock"));
  info.frequency_hz = json.value("frequency_hz", 99);
  info.start_unix_ns = json.value("start_unix_ns", int64_t{0});
  info.duration_ns = json.value("duration_ns", int64_t{0});
  info.lost_samples = json.value("lost_samples", uint64_t{0});
  info.python_samples = json.value("python_samples", uint64_t{0});
  info.gil_samples = json.value("gil_samples", uint64_t{0});
  if (json.contains("pids") && json["pids"].is_array()) {
    for (const nlohmann::json& pid : json["pids"]) {
      if (pid.is_number_integer()) info.pids.push_back(pid.get<int>());
    }
  }
  return profile;
}

}  // namespace vigil
