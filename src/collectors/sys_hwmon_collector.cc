// SPDX-License-Identifier: Apache-2.0
#include "collectors/sys_hwmon_collector.h"

#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <utility>

#include "base/file_util.h"
#include "collectors/collector_context.h"

namespace vigil {
namespace {

constexpr MetricDesc kTemp{"vigil_host_hwmon_temperature_celsius",
                           "Sensor temperature (temp*_input / 1000).", MetricKind::kGauge,
                           "celsius"};
constexpr MetricDesc kTempMax{"vigil_host_hwmon_temperature_max_celsius",
                              "Temperature high limit of the sensor (temp*_max / 1000).",
                              MetricKind::kGauge, "celsius"};
constexpr MetricDesc kTempCrit{"vigil_host_hwmon_temperature_critical_celsius",
                               "Critical temperature of the sensor (temp*_crit / 1000).",
                               MetricKind::kGauge, "celsius"};
constexpr MetricDesc kTempMin{"vigil_host_hwmon_temperature_min_celsius",
                              "Temperature low limit of the sensor (temp*_min / 1000).",
                              MetricKind::kGauge, "celsius"};
constexpr MetricDesc kFan{"vigil_host_hwmon_fan_rpm", "Fan speed (fan*_input).", MetricKind::kGauge,
                          "rpm"};
constexpr MetricDesc kFanMin{"vigil_host_hwmon_fan_min_rpm", "Fan speed low limit (fan*_min).",
                             MetricKind::kGauge, "rpm"};
constexpr MetricDesc kFanMax{"vigil_host_hwmon_fan_max_rpm", "Fan speed high limit (fan*_max).",
                             MetricKind::kGauge, "rpm"};
constexpr MetricDesc kFanTarget{"vigil_host_hwmon_fan_target_rpm",
                                "Fan speed the chip is asked to hold (fan*_target).",
                                MetricKind::kGauge, "rpm"};
constexpr MetricDesc kFreq{"vigil_host_hwmon_frequency_hertz",
                           "Clock frequency the chip reports (freq*_input; GPU clocks).",
                           MetricKind::kGauge, "hertz"};
constexpr MetricDesc kVolt{"vigil_host_hwmon_voltage_volts", "Voltage (in*_input / 1000).",
                           MetricKind::kGauge, "volts"};
constexpr MetricDesc kVoltMin{"vigil_host_hwmon_voltage_min_volts",
                              "Voltage low limit (in*_min / 1000).", MetricKind::kGauge, "volts"};
constexpr MetricDesc kVoltMax{"vigil_host_hwmon_voltage_max_volts",
                              "Voltage high limit (in*_max / 1000).", MetricKind::kGauge, "volts"};
constexpr MetricDesc kCurr{"vigil_host_hwmon_current_amperes", "Current (curr*_input / 1000).",
                           MetricKind::kGauge, "amperes"};
constexpr MetricDesc kPower{"vigil_host_hwmon_power_watts",
                            "Power (power*_input, or power*_average, / 1e6).", MetricKind::kGauge,
                            "watts"};
constexpr MetricDesc kPowerCap{"vigil_host_hwmon_power_cap_watts",
                               "Power cap of the sensor (power*_cap / 1e6).", MetricKind::kGauge,
                               "watts"};
constexpr MetricDesc kEnergy{"vigil_host_hwmon_energy_joules_total",
                             "Energy used since the chip started counting (energy*_input / 1e6).",
                             MetricKind::kCounter, "joules"};
constexpr MetricDesc kHumidity{"vigil_host_hwmon_humidity_ratio",
                               "Relative humidity (humidity*_input / 100000).", MetricKind::kGauge,
                               "ratio"};
constexpr MetricDesc kAlarm{"vigil_host_hwmon_alarm",
                            "1 when the sensor's alarm or fault flag (label condition) is raised.",
                            MetricKind::kGauge, ""};
constexpr MetricDesc kChipInfo{"vigil_host_hwmon_chip_info",
                               "Chip label and the driver's name for it (the name file); 1.",
                               MetricKind::kGauge, "info"};
constexpr MetricDesc kSensorInfo{"vigil_host_hwmon_sensor_info",
                                 "The driver's label of a sensor (the *_label file); 1.",
                                 MetricKind::kGauge, "info"};
constexpr const MetricDesc* kMetrics[] = {
    &kTemp,      &kTempMax, &kTempCrit, &kTempMin, &kFan,      &kFanMin,    &kFanMax,
    &kFanTarget, &kFreq,    &kVolt,     &kVoltMin, &kVoltMax,  &kCurr,      &kPower,
    &kPowerCap,  &kEnergy,  &kHumidity, &kAlarm,   &kChipInfo, &kSensorInfo};

// <type><N>_<property> -> family and factor (sysfs-interface.rst units: millidegree Celsius,
// millivolt, milliampere, microwatt, microjoule, milli-percent humidity, hertz).
struct Attribute {
  std::string_view type;
  std::string_view property;
  const MetricDesc* desc;
  double scale;
};
constexpr Attribute kAttributes[] = {
    {"temp", "input", &kTemp, 1e-3},     {"temp", "max", &kTempMax, 1e-3},
    {"temp", "crit", &kTempCrit, 1e-3},  {"temp", "min", &kTempMin, 1e-3},
    {"fan", "input", &kFan, 1},          {"fan", "min", &kFanMin, 1},
    {"fan", "max", &kFanMax, 1},         {"fan", "target", &kFanTarget, 1},
    {"freq", "input", &kFreq, 1},        {"in", "input", &kVolt, 1e-3},
    {"in", "min", &kVoltMin, 1e-3},      {"in", "max", &kVoltMax, 1e-3},
    {"curr", "input", &kCurr, 1e-3},     {"power", "input", &kPower, 1e-6},
    {"power", "average", &kPower, 1e-6}, {"power", "cap", &kPowerCap, 1e-6},
    {"energy", "input", &kEnergy, 1e-6}, {"humidity", "input", &kHumidity, 1e-5},
};

// Sensor types of sysfs-interface.rst (and node_exporter's list); the device/ directory also
// holds unrelated files that look like attributes (a PCI device's resource0_wc).
constexpr std::string_view kSensorTypes[] = {
    "temp", "fan", "in", "curr", "power", "energy", "humidity", "freq", "intrusion", "cpu", "pwm"};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<SysHwmonCollector>(context.paths);
}

// Splits "temp1_crit_alarm" into sensor "temp1", type "temp" and property "crit_alarm".
bool SplitAttribute(std::string_view file, std::string_view* sensor, std::string_view* type,
                    std::string_view* property) {
  size_t digits = 0;
  while (digits < file.size() && (file[digits] < '0' || file[digits] > '9')) {
    ++digits;
  }
  const size_t underscore = file.find('_', digits);
  if (digits == 0 || digits == file.size() || underscore == std::string_view::npos ||
      underscore == digits) {
    return false;
  }
  for (size_t i = digits; i < underscore; ++i) {
    if (file[i] < '0' || file[i] > '9') {
      return false;
    }
  }
  *type = file.substr(0, digits);
  *sensor = file.substr(0, underscore);
  *property = file.substr(underscore + 1);
  return true;
}

}  // namespace

const CollectorInfo SysHwmonCollector::kInfo = {
    .name = "sys_hwmon",
    .help =
        "Hardware monitor temperatures, fans, voltages, power and alarms from /sys/class/hwmon.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

SysHwmonCollector::SysHwmonCollector(HostPaths paths, int rescan_every)
    : paths_(std::move(paths)), schedule_(rescan_every) {}

std::string SysHwmonCollector::CleanName(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
    const bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == ':' || c == '_';
    out.push_back(keep ? c : '_');
  }
  const size_t first = out.find_first_not_of('_');
  if (first == std::string::npos) {
    return {};
  }
  return out.substr(first, out.find_last_not_of('_') - first + 1);
}

std::string SysHwmonCollector::ChipName(const std::string& dir) {
  // Preference 1: the device's bus directory and name; stable across module load order.
  if (char* real = realpath(JoinPath(dir, "device").c_str(), nullptr)) {
    const std::string device(real);
    free(real);  // NOLINT(cppcoreguidelines-no-malloc): realpath's contract.
    const size_t slash = device.rfind('/');
    const std::string name = CleanName(std::string_view(device).substr(slash + 1));
    const std::string_view parent = std::string_view(device).substr(0, slash);
    const std::string bus = CleanName(parent.substr(parent.rfind('/') + 1));
    if (!bus.empty() && !name.empty()) {
      return bus + "_" + name;
    }
    if (!name.empty()) {
      return name;
    }
  }
  // Preference 2: the driver's name; 3: the hwmon directory itself.
  StatusOr<std::string> name = ReadSmallFile(JoinPath(dir, "name"), 4096);
  if (name.ok() && !CleanName(*name).empty()) {
    return CleanName(*name);
  }
  return CleanName(std::string_view(dir).substr(dir.rfind('/') + 1));
}

Status SysHwmonCollector::Rescan() {
  reader_.CloseKept();  // Nothing from the old listing stays open.
  plan_.clear();
  info_.clear();
  const std::string root = paths_.Sys("class/hwmon");
  Status error;
  const std::vector<std::string> chips = ListSorted(root, "hwmon", &error);
  if (chips.empty()) {
    return NotFoundError(root + ": no hardware monitors" +
                         (error.ok() ? "" : " (" + error.message() + ")"));
  }
  for (const std::string& entry : chips) {
    const std::string dir = JoinPath(root, entry);
    const std::string chip = ChipName(dir);
    // The driver's name, cleaned as node_exporter cleans it; chips without one have no info.
    StatusOr<std::string_view> name = reader_.Read(JoinPath(dir, "name"));
    if (name.ok() && !CleanName(*name).empty()) {
      info_.push_back({&kChipInfo, {{"chip", chip}, {"chip_name", CleanName(*name)}}});
    }
    PlanDir(dir, chip);
    PlanDir(JoinPath(dir, "device"), chip);  // Kernels before 3.x kept attributes there.
  }
  return OkStatus();
}

void SysHwmonCollector::PlanDir(const std::string& dir, const std::string& chip) {
  Status ignored;                 // A hwmon without device/ is the normal case.
  std::set<std::string> powered;  // Sensors with power*_input: power*_average is then skipped.
  const std::vector<std::string> files = ListSorted(dir, "", &ignored);
  for (const std::string& file : files) {
    std::string_view sensor, type, property;
    if (!SplitAttribute(file, &sensor, &type, &property) ||
        std::find(std::begin(kSensorTypes), std::end(kSensorTypes), type) ==
            std::end(kSensorTypes)) {
      continue;
    }
    const Labels labels = {{"chip", chip}, {"sensor", std::string(sensor)}};
    const std::string path = JoinPath(dir, file);
    if (property == "label") {
      StatusOr<std::string_view> label = reader_.Read(path);
      if (label.ok()) {
        info_.push_back({&kSensorInfo, {labels[0], labels[1], {"label", std::string(*label)}}});
      }
      continue;
    }
    if (property == "alarm" || property.ends_with("_alarm") || property == "fault") {
      Labels with = labels;
      with.emplace_back("condition", std::string(property));
      plan_.push_back({path, &kAlarm, 1, std::move(with)});
      continue;
    }
    for (const Attribute& a : kAttributes) {
      if (a.type != type || a.property != property) {
        continue;
      }
      if (a.desc == &kPower && property == "input") {
        powered.insert(std::string(sensor));
      }
      plan_.push_back({path, a.desc, a.scale, labels});
    }
  }
  // power*_average sorts before power*_input: drop it where the same sensor has power*_input (one
  // power series per sensor).
  std::erase_if(plan_, [&](const PlannedValue& p) {
    return p.desc == &kPower && p.path.ends_with("_average") &&
           powered.contains(std::string(LabelValue(p.labels, "sensor"))) &&
           p.path.starts_with(dir + "/");
  });
}

Status SysHwmonCollector::Collect(MetricWriter& out) {
  VIGIL_RETURN_IF_ERROR(schedule_.RescanIfDue([this] { return Rescan(); }));
  for (const InfoSample& i : info_) {
    out.Add(*i.desc, 1, i.labels);
  }
  return EmitPlanned(plan_, reader_, schedule_, out);
}

}  // namespace vigil
