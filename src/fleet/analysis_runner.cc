// SPDX-License-Identifier: Apache-2.0
#include "fleet/analysis_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string_view>
#include <thread>
#include <vector>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/time_util.h"

namespace vigil {
namespace {

// AddressSanitizer reserves terabytes of shadow address space, so a sanitized `vigil` (built
// beside a sanitized vigil-fleet) cannot start under an address-space limit.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitizedBuild = true;
#else
constexpr bool kSanitizedBuild = false;
#endif

}  // namespace

std::string SiblingVigilBinary() {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return "";
  std::string path(self, static_cast<size_t>(n));
  path = path.substr(0, path.rfind('/') + 1) + "vigil";
  return access(path.c_str(), X_OK) == 0 ? path : "";
}

Status RunAnalysisChild(const AnalysisRun& run) {
  const std::string binary = run.vigil_binary.empty() ? SiblingVigilBinary() : run.vigil_binary;
  if (binary.empty() || access(binary.c_str(), X_OK) != 0) {
    return NotFoundError("no vigil binary to run the analysis (looked for " +
                         (binary.empty() ? std::string("vigil beside vigil-fleet") : binary) + ")");
  }
  // stderr goes to an unlinked temporary file: no pipe to drain while waiting.
  FILE* err = tmpfile();
  if (err == nullptr) return ErrnoStatus(errno, "analysis: tmpfile");
  // --same-job: the files were collected for one profiling request of one job, so the check
  // that refuses a mix of jobs' traces does not apply (a test job's ranks may share no collective).
  std::vector<std::string> args = {
      binary,      "analyze",    run.input, "--json",    run.json_path,
      "--quiet",   "--progress", "never",   "--threads", std::to_string(std::max(1, run.threads)),
      "--same-job"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    fclose(err);
    return ErrnoStatus(errno, "analysis: fork");
  }
  if (pid == 0) {
    // Only async-signal-safe calls until execv.
    const int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      dup2(devnull, STDIN_FILENO);
      dup2(devnull, STDOUT_FILENO);
    }
    dup2(fileno(err), STDERR_FILENO);
    if (run.max_address_space_bytes > 0 && !kSanitizedBuild) {
      const rlimit limit{run.max_address_space_bytes, run.max_address_space_bytes};
      setrlimit(RLIMIT_AS, &limit);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  const int64_t deadline = MonotonicNanos() + run.timeout_ns;
  int status = 0;
  bool timed_out = false;
  while (true) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) break;
    if (MonotonicNanos() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      timed_out = true;
      break;
    }
    // The child runs for seconds to minutes; a 20 ms poll costs nothing next to that.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  rewind(err);
  char buf[2048];
  const size_t n = fread(buf, 1, sizeof(buf) - 1, err);
  fclose(err);
  const std::string stderr_text = SanitizeForLog(Trim(std::string_view(buf, n)), 600);
  if (timed_out) {
    return DeadlineExceededError("vigil analyze ran past " + FormatDuration(run.timeout_ns) +
                                 " and was killed");
  }
  if (WIFSIGNALED(status)) {
    return InternalError("vigil analyze was killed by signal " + std::to_string(WTERMSIG(status)) +
                         (stderr_text.empty() ? "" : ": " + stderr_text));
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code != 0) {
    return InternalError("vigil analyze failed with code " + std::to_string(code) +
                         (stderr_text.empty() ? "" : ": " + stderr_text));
  }
  return OkStatus();
}

}  // namespace vigil
