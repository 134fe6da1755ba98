// SPDX-License-Identifier: Apache-2.0
#include "collectors/sys_infiniband_collector.h"

#include <utility>

#include "base/strings.h"
#include "collectors/collector_context.h"
#include "collectors/proc_parse.h"

namespace vigil {
namespace {

constexpr MetricDesc kTxBytes{"vigil_host_infiniband_transmit_bytes_total",
                              "Bytes transmitted on the port (port_xmit_data x 4).",
                              MetricKind::kCounter, "bytes"};
constexpr MetricDesc kRxBytes{"vigil_host_infiniband_receive_bytes_total",
                              "Bytes received on the port (port_rcv_data x 4).",
                              MetricKind::kCounter, "bytes"};
constexpr MetricDesc kTxPackets{"vigil_host_infiniband_transmit_packets_total",
                                "Packets transmitted on the port.", MetricKind::kCounter, ""};
constexpr MetricDesc kRxPackets{"vigil_host_infiniband_receive_packets_total",
                                "Packets received on the port.", MetricKind::kCounter, ""};
constexpr MetricDesc kRxErrors{"vigil_host_infiniband_receive_errors_total",
                               "Received packets with errors.", MetricKind::kCounter, ""};
constexpr MetricDesc kTxDiscards{"vigil_host_infiniband_transmit_discards_total",
                                 "Outbound packets discarded (port down or congested).",
                                 MetricKind::kCounter, ""};
constexpr MetricDesc kSymbolErrors{"vigil_host_infiniband_symbol_errors_total",
                                   "Minor link errors detected on a physical lane.",
                                   MetricKind::kCounter, ""};
constexpr MetricDesc kLinkDowned{"vigil_host_infiniband_link_downed_total",
                                 "Times the link error recovery failed and the link went down.",
                                 MetricKind::kCounter, ""};
constexpr MetricDesc kState{"vigil_host_infiniband_port_state",
                            "Logical port state: 1 down, 2 init, 3 armed, 4 active.",
                            MetricKind::kGauge, ""};
constexpr MetricDesc kRate{"vigil_host_infiniband_port_rate_bytes_per_second",
                           "Negotiated link rate.", MetricKind::kGauge, "bytes_per_second"};
constexpr MetricDesc kPhysState{"vigil_host_infiniband_port_physical_state",
                                "Physical port state: 2 polling, 3 disabled, 5 link up, ...",
                                MetricKind::kGauge, ""};
constexpr MetricDesc kPortCounter{"vigil_host_infiniband_port_counter_total",
                                  "Other IBTA port counter (label counter: the counters/ file).",
                                  MetricKind::kCounter, ""};
constexpr MetricDesc kHwCounter{"vigil_host_infiniband_hw_counter_total",
                                "Driver port counter (label counter: the hw_counters/ file).",
                                MetricKind::kCounter, ""};
constexpr MetricDesc kDeviceHwCounter{
    "vigil_host_infiniband_device_hw_counter_total",
    "Driver device-wide counter (label counter: the device's hw_counters/ file).",
    MetricKind::kCounter, ""};
constexpr MetricDesc kAdapterInfo{"vigil_host_infiniband_info",
                                  "Adapter board_id, fw_ver (firmware_version) and hca_type; 1.",
                                  MetricKind::kGauge, "info"};
constexpr const MetricDesc* kMetrics[] = {
    &kTxBytes,    &kRxBytes,      &kTxPackets,  &kRxPackets,       &kRxErrors,
    &kTxDiscards, &kSymbolErrors, &kLinkDowned, &kState,           &kRate,
    &kPhysState,  &kPortCounter,  &kHwCounter,  &kDeviceHwCounter, &kAdapterInfo};
struct CounterFile {
  std::string_view file;
  const MetricDesc* desc;
  double scale;
};
constexpr CounterFile kCounters[] = {
    {"port_xmit_data", &kTxBytes, 4},      {"port_rcv_data", &kRxBytes, 4},
    {"port_xmit_packets", &kTxPackets, 1}, {"port_rcv_packets", &kRxPackets, 1},
    {"port_rcv_errors", &kRxErrors, 1},    {"port_xmit_discards", &kTxDiscards, 1},
    {"symbol_error", &kSymbolErrors, 1},   {"link_downed", &kLinkDowned, 1},
};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<SysInfinibandCollector>(context.paths);
}

}  // namespace

const CollectorInfo SysInfinibandCollector::kInfo = {
    .name = "sys_infiniband",
    .help = "InfiniBand port traffic, errors, state and rate from /sys/class/infiniband.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

SysInfinibandCollector::SysInfinibandCollector(HostPaths paths, int rescan_every)
    : paths_(std::move(paths)), schedule_(rescan_every) {}

StatusOr<int> SysInfinibandCollector::ParseState(std::string_view text) {
  text = Trim(text);
  const size_t colon = text.find(':');
  std::optional<uint64_t> state = ParseUint64(text.substr(0, colon));
  if (colon == std::string_view::npos || !state || *state > 7) {
    return DataLossError("infiniband state: expected 'N: NAME', got '" + SanitizeForLog(text, 40) +
                         "'");
  }
  return static_cast<int>(*state);
}

StatusOr<double> SysInfinibandCollector::ParseRate(std::string_view text) {
  const std::string_view original = Trim(text);
  std::string_view number;
  std::string_view unit;
  if (!NextField(&text, &number) || !NextField(&text, &unit) || unit != "Gb/sec") {
    return DataLossError("infiniband rate: expected 'N Gb/sec', got '" +
                         SanitizeForLog(original, 40) + "'");
  }
  VIGIL_ASSIGN_OR_RETURN(double gbits, ParseDecimalField(number, "infiniband rate"));
  return gbits * 1e9 / 8;
}

Status SysInfinibandCollector::Rescan() {
  reader_.CloseKept();  // Nothing from the old listing stays open.
  plan_.clear();
  ports_.clear();
  info_.clear();
  const std::string root = paths_.Sys("class/infiniband");
  if (!IsDirectory(root)) {
    return NotFoundError(root + ": no InfiniBand devices");
  }
  Status error;
  for (const std::string& device : ListSorted(root, "", &error)) {
    const std::string dir = JoinPath(root, device);
    Labels info = {{"device", device}};
    constexpr std::pair<std::string_view, std::string_view> kInfoFiles[] = {
        {"board_id", "board_id"}, {"fw_ver", "firmware_version"}, {"hca_type", "hca_type"}};
    for (const auto& [file, label] : kInfoFiles) {
      StatusOr<std::string_view> text = reader_.Read(JoinPath(dir, file));
      info.emplace_back(label, text.ok() ? std::string(*text) : "");
    }
    info_.push_back({std::move(info)});
    PlanHwCounters(JoinPath(dir, "hw_counters"), {{"device", device}}, kDeviceHwCounter);
    for (const std::string& port : ListSorted(JoinPath(dir, "ports"), "", &error)) {
      PlanPort(device, port);
    }
  }
  // Devices were found, so anything missing below them is a failure, not "absent".
  return IsAbsent(error) ? DataLossError(error.message()) : error;
}

void SysInfinibandCollector::PlanPort(const std::string& device, const std::string& port) {
  const std::string dir = paths_.Sys("class/infiniband/" + device + "/ports/" + port);
  const Labels labels = {{"device", device}, {"port", port}};
  ports_.push_back({dir, labels});
  Status ignored;  // EFA ports have no counters/; most drivers have no hw_counters/.
  for (const std::string& file : ListSorted(JoinPath(dir, "counters"), "", &ignored)) {
    const std::string path = JoinPath(dir, "counters/" + file);
    bool named = false;
    for (const CounterFile& c : kCounters) {
      if (c.file == file) {
        plan_.push_back({path, c.desc, c.scale, labels});
        named = true;
      }
    }
    if (!named) {
      Labels with = labels;
      with.emplace_back("counter", file);
      plan_.push_back({path, &kPortCounter, 1, std::move(with)});
    }
  }
  PlanHwCounters(JoinPath(dir, "hw_counters"), labels, kHwCounter);
}

void SysInfinibandCollector::PlanHwCounters(const std::string& dir, const Labels& labels,
                                            const MetricDesc& desc) {
  Status ignored;
  for (const std::string& file : ListSorted(dir, "", &ignored)) {
    if (file == "lifespan") {
      continue;  // Milliseconds between counter refreshes, a setting.
    }
    Labels with = labels;
    with.emplace_back("counter", file);
    plan_.push_back({JoinPath(dir, file), &desc, 1, std::move(with)});
  }
}

Status SysInfinibandCollector::Collect(MetricWriter& out) {
  const Status scan = schedule_.RescanIfDue([this] { return Rescan(); });
  if (IsAbsent(scan)) {
    return scan;
  }
  for (const Info& i : info_) {
    out.Add(kAdapterInfo, 1, i.labels);
  }
  Status error = EmitPlanned(plan_, reader_, schedule_, out);
  for (const Port& p : ports_) {
    Status s = CollectPortState(p, out);
    if (!s.ok() && error.ok()) {
      error = s;
    }
  }
  return scan.ok() ? error : scan;
}

Status SysInfinibandCollector::CollectPortState(const Port& port, MetricWriter& out) {
  Status error;
  constexpr std::pair<std::string_view, const MetricDesc*> kStates[] = {
      {"state", &kState}, {"phys_state", &kPhysState}};
  for (const auto& [file, desc] : kStates) {
    const std::string path = JoinPath(port.dir, file);
    StatusOr<std::string_view> text = reader_.Read(path);
    if (!text.ok()) {
      continue;
    }
    StatusOr<int> state = ParseState(*text);
    if (state.ok()) {
      out.Add(*desc, *state, port.labels);
    } else {
      error = state.status().WithContext(path);
    }
  }
  const std::string rate_path = JoinPath(port.dir, "rate");
  StatusOr<std::string_view> rate_text = reader_.Read(rate_path);
  if (rate_text.ok()) {
    StatusOr<double> rate = ParseRate(*rate_text);
    if (rate.ok()) {
      out.Add(kRate, *rate, port.labels);
    } else {
      error = rate.status().WithContext(rate_path);
    }
  }
  return error;
}

}  // namespace vigil
