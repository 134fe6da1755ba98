// SPDX-License-Identifier: Apache-2.0
#include "collectors/sys_thermal_collector.h"

#include <string>
#include <utility>

#include "base/file_util.h"
#include "collectors/collector_context.h"

namespace vigil {
namespace {

constexpr MetricDesc kZoneTemp{"vigil_host_thermal_zone_temperature_celsius",
                               "Thermal zone temperature (temp / 1000).", MetricKind::kGauge,
                               "celsius"};
constexpr MetricDesc kCoolingState{"vigil_host_thermal_cooling_device_state",
                                   "Current throttle state of a cooling device (cur_state).",
                                   MetricKind::kGauge, ""};
constexpr MetricDesc kCoolingMax{"vigil_host_thermal_cooling_device_max_state",
                                 "Highest throttle state of a cooling device (max_state).",
                                 MetricKind::kGauge, ""};
constexpr const MetricDesc* kMetrics[] = {&kZoneTemp, &kCoolingState, &kCoolingMax};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<SysThermalCollector>(context.paths);
}

}  // namespace

const CollectorInfo SysThermalCollector::kInfo = {
    .name = "sys_thermal",
    .help = "Thermal zone temperatures and cooling device states from /sys/class/thermal.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

SysThermalCollector::SysThermalCollector(HostPaths paths, int rescan_every)
    : paths_(std::move(paths)), schedule_(rescan_every) {}

Status SysThermalCollector::Rescan() {
  reader_.CloseKept();  // Nothing from the old listing stays open.
  plan_.clear();
  const std::string root = paths_.Sys("class/thermal");
  Status error;
  for (const std::string& entry : ListSorted(root, "", &error)) {
    uint64_t n = 0;
    const std::string dir = JoinPath(root, entry);
    const bool zone = NumberAfterPrefix(entry, "thermal_zone", &n);
    if (!zone && !NumberAfterPrefix(entry, "cooling_device", &n)) {
      continue;
    }
    StatusOr<std::string_view> type = reader_.Read(JoinPath(dir, "type"));
    const std::string type_text = type.ok() ? std::string(*type) : "";
    if (zone) {
      plan_.push_back({JoinPath(dir, "temp"),
                       &kZoneTemp,
                       1e-3,
                       {{"zone", std::to_string(n)}, {"type", type_text}}});
      continue;
    }
    const Labels labels = {{"device", std::to_string(n)}, {"type", type_text}};
    plan_.push_back({JoinPath(dir, "cur_state"), &kCoolingState, 1, labels});
    plan_.push_back({JoinPath(dir, "max_state"), &kCoolingMax, 1, labels});
  }
  // A zone whose driver has no temp file would otherwise force a rescan every tick.
  std::erase_if(plan_, [](const PlannedValue& p) { return !PathExists(p.path); });
  if (plan_.empty()) {
    return NotFoundError(root + ": no thermal zones or cooling devices" +
                         (error.ok() ? "" : " (" + error.message() + ")"));
  }
  return OkStatus();
}

Status SysThermalCollector::Collect(MetricWriter& out) {
  VIGIL_RETURN_IF_ERROR(schedule_.RescanIfDue([this] { return Rescan(); }));
  return EmitPlanned(plan_, reader_, schedule_, out);
}

}  // namespace vigil
