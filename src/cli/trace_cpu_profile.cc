// SPDX-License-Identifier: Apache-2.0
#include "cli/trace_cpu_profile.h"

#include <chrono>
#include <future>
#include <thread>

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/time_util.h"
#include "profile/json_output.h"
#include "profile/profile_request.h"

namespace vigil {

StatusOr<std::string> TakeTraceCpuProfile(const CliContext& ctx, const TraceCpuProfileRequest& r) {
  ProfileSessionOptions options;
  options.pids = r.pids;
  options.duration = std::chrono::milliseconds(std::max<int64_t>(r.duration_ms, 100));
  nlohmann::json request = ProfileRequestJson(options);
  if (!r.job_id.empty()) {
    request["job_id"] = r.job_id;
    if (r.pids.empty()) request.erase("pids");
  }
  // Start with the trace: its start time is a known instant, so this is a wait for a deadline.
  const int64_t wait_ms = r.start_unix_ms - UnixNanos() / kNanosPerMilli;
  if (wait_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  std::vector<std::future<StatusOr<nlohmann::json>>> replies;
  for (const std::string& host : r.hosts) {
    replies.push_back(std::async(std::launch::async, [&ctx, &request, &options, host] {
      CliContext one = ctx;
      one.host = host;
      one.timeout = std::to_string(options.duration.count() / 1000 + 60) + "s";
      return one.Call(request);
    }));
  }
  Profile merged;
  std::string failures;
  int ok = 0;
  for (size_t i = 0; i < r.hosts.size(); ++i) {
    StatusOr<nlohmann::json> reply = replies[i].get();
    StatusOr<Profile> profile = reply.ok()
                                    ? ProfileFromJson(reply->value("profile", nlohmann::json()))
                                    : StatusOr<Profile>(reply.status());
    if (!profile.ok()) {
      failures += fmt::format("; {}: {}", r.hosts[i], profile.status().message());
      continue;
    }
    MergeProfileUnder(r.hosts[i], *profile, &merged);
    merged.info() = profile->info();
    ++ok;
  }
  if (ok == 0) {
    return UnavailableError("cpu profile: no host returned one" + failures);
  }
  VIGIL_RETURN_IF_ERROR(WriteFileAtomic(
      r.path,
      ProfileToJson(merged).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"));
  return fmt::format(
      "cpu profile: {} samples from {} of {} host(s) written to {} (vigil analyze TRACE "
      "--cpu-profile {}){}\n",
      merged.total_samples(), ok, r.hosts.size(), r.path, r.path, failures);
}

}  // namespace vigil
