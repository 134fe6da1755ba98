// SPDX-License-Identifier: Apache-2.0
#include "collectors/sys_infiniband_collector.h"

#include <algorithm>
#include <utility>
#include <vector>

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
constexpr const MetricDesc* kMetrics[] = {&kTxBytes,  &kRxBytes,    &kTxPackets,    &kRxPackets,
                                          &kRxErrors, &kTxDiscards, &kSymbolErrors, &kLinkDowned,
                                          &kState,    &kRate};

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

std::vector<std::string> SortedDir(const std::string& path, Status* error) {
  StatusOr<std::vector<std::string>> names = ListDir(path);
  if (!names.ok()) {
    *error = names.status();
    return {};
  }
  std::sort(names->begin(), names->end());
  return std::move(*names);
}

}  // namespace

const CollectorInfo SysInfinibandCollector::kInfo = {
    .name = "sys_infiniband",
    .help = "InfiniBand port traffic, errors, state and rate from /sys/class/infiniband.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

SysInfinibandCollector::SysInfinibandCollector(HostPaths paths) : paths_(std::move(paths)) {}

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

Status SysInfinibandCollector::Collect(MetricWriter& out) {
  const std::string root = paths_.Sys("class/infiniband");
  if (!IsDirectory(root)) {
    return NotFoundError(root + ": no InfiniBand devices");
  }
  Status error;
  for (const std::string& device : SortedDir(root, &error)) {
    for (const std::string& port : SortedDir(JoinPath(root, device + "/ports"), &error)) {
      Status s = CollectPort(device, port, out);
      if (!s.ok() && error.ok()) {
        error = s;
      }
    }
  }
  // Devices were found, so anything missing below them is a failure, not "absent".
  return IsAbsent(error) ? DataLossError(error.message()) : error;
}

Status SysInfinibandCollector::CollectPort(const std::string& device, const std::string& port,
                                           MetricWriter& out) {
  const std::string dir = paths_.Sys("class/infiniband/" + device + "/ports/" + port);
  const Labels labels = {{"device", device}, {"port", port}};
  Status error;
  for (const CounterFile& c : kCounters) {
    const std::string path = JoinPath(dir, "counters/" + std::string(c.file));
    if (!ReadFileInto(path, &buf_).ok()) {
      continue;  // Not every driver (or virtual function) provides every counter.
    }
    StatusOr<uint64_t> v = ParseCounterField(Trim(buf_), c.file);
    if (!v.ok()) {
      error = v.status().WithContext(path);
      continue;
    }
    out.Add(*c.desc, static_cast<double>(*v) * c.scale, labels);
  }
  const std::string state_path = JoinPath(dir, "state");
  if (ReadFileInto(state_path, &buf_).ok()) {
    StatusOr<int> state = ParseState(buf_);
    if (state.ok()) {
      out.Add(kState, *state, labels);
    } else {
      error = state.status().WithContext(state_path);
    }
  }
  const std::string rate_path = JoinPath(dir, "rate");
  if (ReadFileInto(rate_path, &buf_).ok()) {
    StatusOr<double> rate = ParseRate(buf_);
    if (rate.ok()) {
      out.Add(kRate, *rate, labels);
    } else {
      error = rate.status().WithContext(rate_path);
    }
  }
  return error;
}

}  // namespace vigil
