// SPDX-License-Identifier: Apache-2.0
// A stand-in for one rank of a PyTorch job with KINETO_USE_DAEMON=1, for the fleet profiling
// test: it registers with vigild's IPC fabric through the spec-written Kineto client (job id 0,
// so the daemon resolves the job from this process's environment, VIGIL_JOB_ID), polls as Kineto
// does, and when a trace config arrives writes a real Kineto trace (a gzipped fixture, inflated)
// where ACTIVITIES_LOG_FILE says, as Kineto names it. Usage:
//   kineto_trace_client IPC_NAME TRACE.json.gz READY_FILE
// It writes READY_FILE once registered and runs until killed (at most 10 minutes).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include <zlib.h>

#include "base/file_util.h"
#include "ipc/trace_config.h"
#include "kineto_spec_client.h"

namespace {

constexpr int32_t kActivities = 2;  // Kineto's ACTIVITIES request bit.

std::string Inflate(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return "";
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s IPC_NAME TRACE.json.gz READY_FILE\n", argv[0]);
    return 2;
  }
  const std::string trace = Inflate(argv[2]);
  if (trace.empty()) {
    std::fprintf(stderr, "cannot read %s\n", argv[2]);
    return 1;
  }
  const int32_t pid = static_cast<int32_t>(getpid());
  vigil::testing_util::KinetoSpecClient kineto("vigil-ktc-" + std::to_string(pid), argv[1]);
  if (!kineto.ok() || !kineto.RegisterContext(0, pid, 0).has_value()) {
    std::fprintf(stderr, "cannot register with the daemon's IPC name %s\n", argv[1]);
    return 1;
  }
  const auto pids = vigil::testing_util::OwnAncestorPids();
  if (!kineto.Poll(kActivities, 0, pids).has_value()) return 1;
  if (!vigil::WriteFileAtomic(argv[3], std::to_string(pid)).ok()) return 1;
  const auto end = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  const std::string key = "ACTIVITIES_LOG_FILE=";
  while (std::chrono::steady_clock::now() < end) {
    std::optional<std::string> config = kineto.Poll(kActivities, 0, pids);
    if (config && config->find(key) != std::string::npos) {
      const size_t at = config->find(key) + key.size();
      const std::string log = config->substr(at, config->find('\n', at) - at);
      const std::string file = vigil::KinetoTraceFileForPid(log, pid);
      if (!vigil::WriteFileAtomic(file, trace).ok()) {
        std::fprintf(stderr, "cannot write %s\n", file.c_str());
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return 0;
}
