// SPDX-License-Identifier: Apache-2.0
#include "metrics/naming.h"

#include <array>
#include <string>

namespace vigil {
namespace {

constexpr std::array<std::string_view, 9> kDomains = {"host", "cgroup", "process",   "pmu",  "gpu",
                                                      "job",  "daemon", "collector", "fleet"};
constexpr std::array<std::string_view, 9> kBadSuffixes = {"_percent", "_pct", "_ms", "_us", "_mib",
                                                          "_kib",     "_gib", "_kb", "_mb"};

bool IsNameChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

}  // namespace

Status CheckMetricDesc(const MetricDesc& desc) {
  const std::string name(desc.name);
  if (!name.starts_with("vigil_")) {
    return InvalidArgumentError(name + ": metric names start with vigil_");
  }
  for (char c : name) {
    if (!IsNameChar(c)) {
      return InvalidArgumentError(name + ": metric names are [a-z0-9_]");
    }
  }
  std::string_view rest = std::string_view(name).substr(6);
  bool domain_ok = false;
  for (std::string_view d : kDomains) {
    if (rest.starts_with(d) && rest.size() > d.size() && rest[d.size()] == '_') {
      domain_ok = true;
    }
  }
  if (!domain_ok) {
    return InvalidArgumentError(name + ": unknown domain after vigil_");
  }
  const bool total = name.ends_with("_total");
  if (total != (desc.kind == MetricKind::kCounter)) {
    return InvalidArgumentError(name + ": _total must mark counters and only counters");
  }
  std::string_view stem = std::string_view(name).substr(0, total ? name.size() - 6 : name.size());
  for (std::string_view bad : kBadSuffixes) {
    if (stem.ends_with(bad)) {
      return InvalidArgumentError(name + ": use base units (seconds, bytes, ratio)");
    }
  }
  if (!desc.unit.empty() && desc.unit != "info" && !stem.ends_with(desc.unit)) {
    return InvalidArgumentError(name + ": unit '" + std::string(desc.unit) + "' must end the name");
  }
  if (desc.help.empty() || desc.help.back() != '.') {
    return InvalidArgumentError(name + ": help must be one sentence ending in a period");
  }
  return OkStatus();
}

Status CheckLabelName(std::string_view name) {
  if (name.empty() || name.starts_with("__") || (name[0] >= '0' && name[0] <= '9')) {
    return InvalidArgumentError("bad label name '" + std::string(name) + "'");
  }
  for (char c : name) {
    if (!IsNameChar(c)) {
      return InvalidArgumentError("bad label name '" + std::string(name) + "'");
    }
  }
  if (name == "job") {
    return InvalidArgumentError("label 'job' is renamed by Prometheus: use job_id");
  }
  return OkStatus();
}

}  // namespace vigil
