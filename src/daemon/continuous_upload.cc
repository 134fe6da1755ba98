// SPDX-License-Identifier: Apache-2.0
// Continuous profiling's path to vigil-fleet: each finished window's job profiles, folded, onto
// the ProfileUploader (continuous_profiler.h says when and why).
#include "base/file_util.h"
#include "base/logging.h"
#include "base/strings.h"
#include "daemon/continuous_profiler.h"
#include "profile/folded_output.h"

namespace vigil::daemon {

void ContinuousProfiler::Upload(const ProfileWindow& window) {
  if (!uploader_) {
    return;
  }
  for (const auto& [job, profile] : window.jobs) {
    if (job == kNoJob || profile.total_samples() == 0) {
      continue;  // The fleet keeps profiles per job; the host's others stay on /api/v1/profiles.
    }
    uploader_->Enqueue(ProfileUpload{.job_id = job,
                                     .start_unix_ns = window.start_unix_ns,
                                     .end_unix_ns = window.end_unix_ns,
                                     .frequency_hz = window.frequency_hz,
                                     .samples = profile.total_samples(),
                                     .folded = WriteFolded(profile)});
  }
}

std::unique_ptr<ProfileUploader> MakeProfileUploader(const std::string& fleet_url,
                                                     const std::string& host,
                                                     const std::string& token_file,
                                                     const std::string& ca_file) {
  if (fleet_url.empty()) {
    return nullptr;
  }
  ProfileUploaderOptions options;
  options.url = fleet_url;
  options.host = host;
  options.ca_file = ca_file;
  if (!token_file.empty()) {
    StatusOr<std::string> token = ReadSmallFile(token_file, 4096);
    if (!token.ok()) {
      VIGIL_LOG_WARN("continuous profiling: fleet token: {}", token.status().message());
    }
    options.token = token.ok() ? std::string(Trim(*token)) : std::string();
  }
  StatusOr<std::unique_ptr<ProfileUploader>> uploader = ProfileUploader::Create(options);
  if (!uploader.ok()) {
    VIGIL_LOG_WARN("continuous profiling: uploads to vigil-fleet are off: {}",
                   uploader.status().message());
    return nullptr;
  }
  return std::move(*uploader);
}

}  // namespace vigil::daemon
