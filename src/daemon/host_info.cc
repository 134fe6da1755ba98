// SPDX-License-Identifier: Apache-2.0
#include "daemon/host_info.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>

#include "base/strings.h"

namespace vigil::daemon {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) {
    return "unknown";
  }
  return name;
}

std::string UserName(unsigned uid) {
  passwd pw{};
  passwd* result = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof(buf), &result) == 0 && result != nullptr) {
    return result->pw_name;
  }
  return std::to_string(uid);
}

std::string FormatHostPort(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) {
    return "[" + host + "]:" + std::to_string(port);
  }
  return host + ":" + std::to_string(port);
}

std::string AdvertisedRpcAddress(const std::string& listening, const std::string& hostname) {
  const size_t colon = listening.rfind(':');
  if (listening.empty() || colon == std::string::npos) {
    return "";
  }
  std::string host = listening.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty() || host == "0.0.0.0" || host == "::") {
    const int64_t port = ParseInt64(listening.substr(colon + 1)).value_or(0);
    return port > 0 ? FormatHostPort(hostname, static_cast<int>(port)) : "";
  }
  return listening;
}

std::vector<std::string> StaticReducedFeatures(const DaemonConfig& config,
                                               std::span<const std::string_view> collectors) {
  std::vector<std::string> out;
  // With --user the daemon dropped root on purpose, keeping what its collectors need.
  if (geteuid() != 0 && config.user.empty()) {
    out.push_back(
        "not root: other users' /proc files, perf events and some cgroup files are unreadable");
    const std::string socket =
        config.unix_socket.empty() ? DefaultUnixSocketPath() : config.unix_socket;
    if (config.unix_socket.empty()) {
      out.push_back("unix socket at " + socket + " (/run/vigil needs root)");
    }
  }
  const bool has_gpu = std::any_of(collectors.begin(), collectors.end(),
                                   [](std::string_view n) { return n.rfind("gpu", 0) == 0; });
  if (config.gpu_backend == "sim") {
    out.push_back(
        "gpu: simulated GPUs (--gpu-backend sim); every GPU sample carries "
        "simulated=\"true\"");
  }
  if (config.gpu_backend != "none" && !has_gpu) {
    out.push_back("gpu: backend '" + config.gpu_backend + "' is not available in this build");
  }
  return out;
}

}  // namespace vigil::daemon
