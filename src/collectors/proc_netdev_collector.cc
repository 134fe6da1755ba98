// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_netdev_collector.h"

#include <span>

#include "base/strings.h"
#include "collectors/collector_context.h"
#include "collectors/proc_parse.h"

namespace vigil {
namespace {

constexpr MetricDesc kRxBytes{"vigil_host_network_receive_bytes_total", "Bytes received.",
                              MetricKind::kCounter, "bytes"};
constexpr MetricDesc kRxPackets{"vigil_host_network_receive_packets_total", "Packets received.",
                                MetricKind::kCounter, ""};
constexpr MetricDesc kRxErrors{"vigil_host_network_receive_errors_total", "Receive errors.",
                               MetricKind::kCounter, ""};
constexpr MetricDesc kRxDrops{"vigil_host_network_receive_drops_total", "Received packets dropped.",
                              MetricKind::kCounter, ""};
constexpr MetricDesc kTxBytes{"vigil_host_network_transmit_bytes_total", "Bytes transmitted.",
                              MetricKind::kCounter, "bytes"};
constexpr MetricDesc kTxPackets{"vigil_host_network_transmit_packets_total", "Packets transmitted.",
                                MetricKind::kCounter, ""};
constexpr MetricDesc kTxErrors{"vigil_host_network_transmit_errors_total", "Transmit errors.",
                               MetricKind::kCounter, ""};
constexpr MetricDesc kTxDrops{"vigil_host_network_transmit_drops_total",
                              "Packets dropped on transmit.", MetricKind::kCounter, ""};

// The less common /proc/net/dev columns (node_exporter exports them all).
constexpr MetricDesc kRxFifo{"vigil_host_network_receive_fifo_errors_total",
                             "Receive FIFO (ring buffer) overruns.", MetricKind::kCounter, ""};
constexpr MetricDesc kRxFrame{"vigil_host_network_receive_frame_errors_total",
                              "Received frames with alignment or CRC errors.", MetricKind::kCounter,
                              ""};
constexpr MetricDesc kRxCompressed{"vigil_host_network_receive_compressed_packets_total",
                                   "Compressed packets received (PPP, SLIP).", MetricKind::kCounter,
                                   ""};
constexpr MetricDesc kRxMulticast{"vigil_host_network_receive_multicast_packets_total",
                                  "Multicast packets received.", MetricKind::kCounter, ""};
constexpr MetricDesc kTxFifo{"vigil_host_network_transmit_fifo_errors_total",
                             "Transmit FIFO underruns.", MetricKind::kCounter, ""};
constexpr MetricDesc kTxCollisions{"vigil_host_network_transmit_collisions_total",
                                   "Collisions detected while transmitting.", MetricKind::kCounter,
                                   ""};
constexpr MetricDesc kTxCarrier{"vigil_host_network_transmit_carrier_errors_total",
                                "Transmit errors from a lost or bad carrier.", MetricKind::kCounter,
                                ""};
constexpr MetricDesc kTxCompressed{"vigil_host_network_transmit_compressed_packets_total",
                                   "Compressed packets transmitted (PPP, SLIP).",
                                   MetricKind::kCounter, ""};

constexpr MetricDesc kTcpActiveOpens{"vigil_host_tcp_active_opens_total",
                                     "TCP connections opened by this host (connect).",
                                     MetricKind::kCounter, ""};
constexpr MetricDesc kTcpPassiveOpens{"vigil_host_tcp_passive_opens_total",
                                      "TCP connections accepted from peers.", MetricKind::kCounter,
                                      ""};
constexpr MetricDesc kTcpEstabResets{"vigil_host_tcp_established_resets_total",
                                     "TCP connections reset from established or close-wait.",
                                     MetricKind::kCounter, ""};
constexpr MetricDesc kTcpCurrEstab{"vigil_host_tcp_established",
                                   "TCP connections in established or close-wait state.",
                                   MetricKind::kGauge, ""};
constexpr MetricDesc kTcpInSegs{"vigil_host_tcp_in_segments_total", "TCP segments received.",
                                MetricKind::kCounter, ""};
constexpr MetricDesc kTcpOutSegs{"vigil_host_tcp_out_segments_total",
                                 "TCP segments sent, excluding retransmissions.",
                                 MetricKind::kCounter, ""};
constexpr MetricDesc kTcpRetransSegs{"vigil_host_tcp_retransmitted_segments_total",
                                     "TCP segments retransmitted.", MetricKind::kCounter, ""};
constexpr MetricDesc kTcpOutRsts{"vigil_host_tcp_out_resets_total",
                                 "TCP segments sent with the RST flag.", MetricKind::kCounter, ""};
constexpr MetricDesc kTcpListenOverflows{"vigil_host_tcp_listen_overflows_total",
                                         "Times a listen queue was full when a connection came.",
                                         MetricKind::kCounter, ""};
constexpr MetricDesc kTcpListenDrops{"vigil_host_tcp_listen_drops_total",
                                     "Incoming connections dropped at a listening socket.",
                                     MetricKind::kCounter, ""};

constexpr const MetricDesc* kMetrics[] = {
    &kRxBytes,        &kRxPackets,          &kRxErrors,       &kRxDrops,        &kTxBytes,
    &kTxPackets,      &kTxErrors,           &kTxDrops,        &kTcpActiveOpens, &kTcpPassiveOpens,
    &kTcpEstabResets, &kTcpCurrEstab,       &kTcpInSegs,      &kTcpOutSegs,     &kTcpRetransSegs,
    &kTcpOutRsts,     &kTcpListenOverflows, &kTcpListenDrops, &kRxFifo,         &kRxFrame,
    &kRxCompressed,   &kRxMulticast,        &kTxFifo,         &kTxCollisions,   &kTxCarrier,
    &kTxCompressed};

struct Column {
  const MetricDesc* desc;
  int index;
};
constexpr Column kColumns[] = {
    {&kRxBytes, 0}, {&kRxPackets, 1},     {&kRxErrors, 2},     {&kRxDrops, 3},
    {&kRxFifo, 4},  {&kRxFrame, 5},       {&kRxCompressed, 6}, {&kRxMulticast, 7},
    {&kTxBytes, 8}, {&kTxPackets, 9},     {&kTxErrors, 10},    {&kTxDrops, 11},
    {&kTxFifo, 12}, {&kTxCollisions, 13}, {&kTxCarrier, 14},   {&kTxCompressed, 15}};

struct SnmpField {
  std::string_view name;
  const MetricDesc* desc;
};
constexpr SnmpField kTcpFields[] = {
    {"ActiveOpens", &kTcpActiveOpens}, {"PassiveOpens", &kTcpPassiveOpens},
    {"EstabResets", &kTcpEstabResets}, {"CurrEstab", &kTcpCurrEstab},
    {"InSegs", &kTcpInSegs},           {"OutSegs", &kTcpOutSegs},
    {"RetransSegs", &kTcpRetransSegs}, {"OutRsts", &kTcpOutRsts}};
constexpr SnmpField kTcpExtFields[] = {{"ListenOverflows", &kTcpListenOverflows},
                                       {"ListenDrops", &kTcpListenDrops}};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcNetdevCollector>(context.paths,
                                               context.OptionsFor<ProcNetdevOptions>());
}

void AddSnmp(const ProcNetdevCollector::Pairs& pairs, std::span<const SnmpField> fields,
             MetricWriter& out) {
  for (const SnmpField& f : fields) {
    for (const auto& [name, value] : pairs) {
      if (name == f.name) {
        out.Add(*f.desc, static_cast<double>(value));
        break;
      }
    }
  }
}

}  // namespace

const CollectorInfo ProcNetdevCollector::kInfo = {
    .name = "proc_netdev",
    .help = "Per-interface traffic from /proc/net/dev and TCP counters from /proc/net/snmp.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

ProcNetdevCollector::ProcNetdevCollector(HostPaths paths, ProcNetdevOptions options)
    : paths_(std::move(paths)) {
  if (options.interface_exclude.empty()) {
    return;
  }
  try {  // std::regex reports a bad pattern only by throwing.
    exclude_.emplace(options.interface_exclude, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    options_status_ = InvalidArgumentError("proc_netdev: bad interface_exclude regex '" +
                                           options.interface_exclude + "': " + e.what());
  }
}

StatusOr<std::vector<ProcNetdevCollector::Interface>> ProcNetdevCollector::ParseNetDev(
    std::string_view text) {
  std::vector<Interface> out;
  std::string_view line;
  while (NextLine(&text, &line)) {
    // Header lines contain '|'; data lines are "name: counters" (old kernels print no space
    // after the colon once the first counter is wide, hence the split at the colon).
    const size_t colon = line.find(':');
    if (line.find('|') != std::string_view::npos || Trim(line).empty()) {
      continue;
    }
    if (colon == std::string_view::npos) {
      return DataLossError("net/dev: line without ':'");
    }
    Interface iface;
    iface.name = Trim(line.substr(0, colon));
    std::string_view rest = line.substr(colon + 1);
    std::string_view field;
    size_t n = 0;
    while (n < iface.v.size() && NextField(&rest, &field)) {
      StatusOr<uint64_t> v = ParseCounterField(field, "net/dev");
      if (!v.ok()) {
        return v.status().WithContext(SanitizeForLog(iface.name, 40));
      }
      iface.v[n] = *v;
      ++n;
    }
    if (n < iface.v.size()) {
      return DataLossError("net/dev: truncated line for " + SanitizeForLog(iface.name, 40));
    }
    out.push_back(iface);
  }
  return out;
}

StatusOr<ProcNetdevCollector::Pairs> ProcNetdevCollector::ParseSnmpSection(
    std::string_view text, std::string_view section) {
  Pairs out;
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view tag;
    std::string_view names = line;
    if (!NextField(&names, &tag) || tag.size() != section.size() + 1 || !tag.starts_with(section) ||
        tag.back() != ':') {
      continue;
    }
    std::string_view values;
    std::string_view value_tag;
    if (!NextLine(&text, &values) || !NextField(&values, &value_tag) || value_tag != tag) {
      return DataLossError(std::string(section) + ": header line without a value line");
    }
    std::string_view name;
    std::string_view value;
    while (NextField(&names, &name)) {
      if (!NextField(&values, &value)) {
        return DataLossError(std::string(section) + ": fewer values than names");
      }
      std::optional<int64_t> v = ParseInt64(value);  // MaxConn is -1.
      if (!v) {
        return DataLossError(std::string(section) + ": bad number '" + SanitizeForLog(value, 40) +
                             "' for " + std::string(name));
      }
      out.emplace_back(name, *v);
    }
    return out;
  }
  return out;
}

Status ProcNetdevCollector::Collect(MetricWriter& out) {
  VIGIL_RETURN_IF_ERROR(options_status_);
  const std::string path = paths_.Proc("net/dev");
  VIGIL_RETURN_IF_ERROR(files_.ReadInto(path, &buf_));
  StatusOr<std::vector<Interface>> parsed = ParseNetDev(buf_);
  if (!parsed.ok()) {
    return parsed.status().WithContext(path);
  }
  for (const Interface& iface : *parsed) {
    if (exclude_ && std::regex_search(iface.name.begin(), iface.name.end(), *exclude_)) {
      continue;
    }
    const std::string name(iface.name);
    for (const Column& c : kColumns) {
      out.Add(*c.desc, static_cast<double>(iface.v[c.index]), {{"interface", name}});
    }
  }
  return CollectTcp(out);
}

Status ProcNetdevCollector::CollectTcp(MetricWriter& out) {
  // Interface samples are already written: a missing TCP file must not read as "absent".
  auto as_failure = [](const Status& s) { return IsAbsent(s) ? DataLossError(s.message()) : s; };
  std::string path = paths_.Proc("net/snmp");
  VIGIL_RETURN_IF_ERROR(as_failure(files_.ReadInto(path, &buf_)));
  StatusOr<Pairs> tcp = ParseSnmpSection(buf_, "Tcp");
  if (!tcp.ok()) {
    return tcp.status().WithContext(path);
  }
  AddSnmp(*tcp, kTcpFields, out);
  path = paths_.Proc("net/netstat");
  VIGIL_RETURN_IF_ERROR(as_failure(files_.ReadInto(path, &buf_)));
  StatusOr<Pairs> ext = ParseSnmpSection(buf_, "TcpExt");
  if (!ext.ok()) {
    return ext.status().WithContext(path);
  }
  AddSnmp(*ext, kTcpExtFields, out);
  return OkStatus();
}

}  // namespace vigil
