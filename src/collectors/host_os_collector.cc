// SPDX-License-Identifier: Apache-2.0
#include "collectors/host_os_collector.h"

#include <errno.h>

#include <cctype>
#include <optional>

#include "base/strings.h"
#include "collectors/collector_context.h"

namespace vigil {
namespace {

constexpr MetricDesc kUname{"vigil_host_uname_info",
                            "The kernel's uname fields as labels (always 1).", MetricKind::kGauge,
                            "info"};
constexpr MetricDesc kOsInfo{"vigil_host_os_info",
                             "The distribution's os-release fields as labels (always 1).",
                             MetricKind::kGauge, "info"};
constexpr MetricDesc kOsVersion{
    "vigil_host_os_version", "The distribution's VERSION_ID as a number.", MetricKind::kGauge, ""};

constexpr const MetricDesc* kMetrics[] = {&kUname, &kOsInfo, &kOsVersion};

// os-release keys exported as labels of vigil_host_os_info (node_exporter's set).
constexpr std::string_view kOsKeys[] = {
    "build_id",    "id",      "id_like",    "image_id", "image_version",    "name",
    "pretty_name", "variant", "variant_id", "version",  "version_codename", "version_id"};
constexpr size_t kMaxLabelBytes = 256;

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<HostOsCollector>(context.paths);
}

std::string RootOf(const std::string& proc_root) {
  std::string_view p = proc_root;
  while (p.size() > 1 && p.back() == '/') {
    p.remove_suffix(1);
  }
  if (!p.ends_with("/proc")) {
    return "/";
  }
  p.remove_suffix(5);
  return p.empty() ? "/" : std::string(p);
}

std::string Unquote(std::string_view v) {
  std::string out;
  if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') {
    return std::string(v.substr(1, v.size() - 2));
  }
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') {
    v = v.substr(1, v.size() - 2);
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] == '\\' && i + 1 < v.size()) {
        ++i;
      }
      out.push_back(v[i]);
    }
    return out;
  }
  return std::string(v);
}

}  // namespace

const CollectorInfo HostOsCollector::kInfo = {
    .name = "host_os",
    .help = "Kernel (uname) and distribution (os-release) as info gauges.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

HostOsCollector::HostOsCollector(HostPaths paths, HostOsOptions options)
    : paths_(std::move(paths)), options_(options), root_(RootOf(paths_.proc_root)) {}

HostOsCollector::Fields HostOsCollector::ParseOsRelease(std::string_view text) {
  Fields fields;
  std::string_view line;
  while (NextLine(&text, &line) && fields.size() < 64) {
    line = Trim(line);
    const size_t eq = line.find('=');
    if (line.empty() || line.front() == '#' || eq == std::string_view::npos || eq == 0) {
      continue;
    }
    std::string key(line.substr(0, eq));
    for (char& c : key) {
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    fields.emplace_back(std::move(key),
                        SanitizeForLog(Unquote(line.substr(eq + 1)), kMaxLabelBytes));
  }
  return fields;
}

Status HostOsCollector::Collect(MetricWriter& out) {
  struct utsname u {};
  if (options_.uname(&u) != 0) {
    return ErrnoStatus(errno, "uname");
  }
  out.Add(kUname, 1,
          {{"domainname", u.domainname},
           {"machine", u.machine},
           {"nodename", u.nodename},
           {"release", u.release},
           {"sysname", u.sysname},
           {"version", u.version}});
  Status read = files_.ReadInto(JoinPath(root_, "etc/os-release"), &buf_, 64 << 10);
  if (IsAbsent(read)) {
    read = files_.ReadInto(JoinPath(root_, "usr/lib/os-release"), &buf_, 64 << 10);
  }
  if (IsAbsent(read)) {
    return OkStatus();  // No os-release: a minimal image; the uname sample stands alone.
  }
  VIGIL_RETURN_IF_ERROR(read);
  const Fields fields = ParseOsRelease(buf_);
  Labels info;
  Labels version_labels;
  std::string version_id;
  auto set = [](Labels* labels, const std::string& key, const std::string& value) {
    for (auto& [k, v] : *labels) {
      if (k == key) {
        v = value;  // A repeated key: the last one wins, as in a shell.
        return;
      }
    }
    labels->emplace_back(key, value);
  };
  for (const auto& [key, value] : fields) {
    for (std::string_view wanted : kOsKeys) {
      if (key == wanted) {
        set(&info, key, value);
      }
    }
    if (key == "id" || key == "id_like" || key == "name") {
      set(&version_labels, key, value);
    }
    version_id = key == "version_id" ? value : version_id;
  }
  out.Add(kOsInfo, 1, std::move(info));
  if (std::optional<double> v = ParseDouble(version_id)) {
    out.Add(kOsVersion, *v, std::move(version_labels));
  }
  return OkStatus();
}

}  // namespace vigil
