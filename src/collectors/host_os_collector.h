// SPDX-License-Identifier: Apache-2.0
// host_os: what the host runs, as info gauges (value 1, the facts in labels): the kernel's
// uname(2) fields, and the distribution from os-release(5) (<root>/etc/os-release, else
// <root>/usr/lib/os-release) with its VERSION_ID as a number. <root> is the directory above the
// proc root ("/" for "/proc", "/host" for "/host/proc"), so a daemon given the host's /proc in a
// container reads the host's os-release. uname(2) is reached through HostOsOptions so tests can
// give a kernel. Stateless; owned by the daemon's collection sequence. No os-release leaves the
// os families out (a minimal container image); a failing uname is returned as an error.
#pragma once

#include <sys/utsname.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

struct HostOsOptions {
  int (*uname)(struct utsname* buf) = &::uname;
};

class HostOsCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit HostOsCollector(HostPaths paths, HostOsOptions options = {});
  Status Collect(MetricWriter& out) override;

  // Parses os-release text: KEY=value lines, values optionally in single or double quotes
  // (backslash escapes inside double quotes), '#' comments. Malformed lines are skipped, as
  // os-release(5) asks. Keys are returned lower-cased.
  using Fields = std::vector<std::pair<std::string, std::string>>;
  static Fields ParseOsRelease(std::string_view text);

 private:
  HostPaths paths_;
  HostOsOptions options_;
  std::string root_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
};

}  // namespace vigil
