// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_netstat_collector.h"

#include <array>
#include <span>
#include <utility>

#include "collectors/collector_context.h"
#include "collectors/proc_parse.h"

namespace vigil {
namespace {

constexpr MetricKind kCounter = MetricKind::kCounter;

constexpr MetricDesc kIpForwarding{"vigil_host_ip_forwarding",
                                   "1 when the host forwards IPv4 packets, else 0.",
                                   MetricKind::kGauge, ""};
constexpr MetricDesc kIpInBytes{"vigil_host_ip_received_bytes_total",
                                "Bytes received in IP packets, headers included.", kCounter,
                                "bytes"};
constexpr MetricDesc kIpOutBytes{"vigil_host_ip_sent_bytes_total",
                                 "Bytes sent in IP packets, headers included.", kCounter, "bytes"};
constexpr MetricDesc kIcmpInMsgs{"vigil_host_icmp_in_messages_total", "ICMP messages received.",
                                 kCounter, ""};
constexpr MetricDesc kIcmpInErrors{"vigil_host_icmp_in_errors_total",
                                   "ICMP messages received with errors (bad checksum, length).",
                                   kCounter, ""};
constexpr MetricDesc kIcmpOutMsgs{"vigil_host_icmp_out_messages_total", "ICMP messages sent.",
                                  kCounter, ""};
constexpr MetricDesc kTcpInErrors{"vigil_host_tcp_in_errors_total",
                                  "TCP segments received in error (bad checksum, bad header).",
                                  kCounter, ""};
constexpr MetricDesc kSyncookiesSent{"vigil_host_tcp_syncookies_sent_total",
                                     "SYN cookies sent because a SYN queue overflowed.", kCounter,
                                     ""};
constexpr MetricDesc kSyncookiesRecv{"vigil_host_tcp_syncookies_received_total",
                                     "Valid SYN cookies received back.", kCounter, ""};
constexpr MetricDesc kSyncookiesFailed{"vigil_host_tcp_syncookies_failed_total",
                                       "Invalid SYN cookies received.", kCounter, ""};
constexpr MetricDesc kSynRetrans{"vigil_host_tcp_syn_retransmits_total",
                                 "SYN and SYN-ACK segments retransmitted.", kCounter, ""};
constexpr MetricDesc kTcpTimeouts{"vigil_host_tcp_timeouts_total",
                                  "TCP retransmission timer expirations.", kCounter, ""};
constexpr MetricDesc kTcpOfo{"vigil_host_tcp_out_of_order_queued_total",
                             "TCP segments queued because they arrived out of order.", kCounter,
                             ""};
constexpr MetricDesc kUdpInDatagrams{"vigil_host_udp_in_datagrams_total",
                                     "UDP datagrams delivered to sockets.", kCounter, ""};
constexpr MetricDesc kUdpOutDatagrams{"vigil_host_udp_out_datagrams_total", "UDP datagrams sent.",
                                      kCounter, ""};
constexpr MetricDesc kUdpNoPorts{"vigil_host_udp_no_port_total",
                                 "UDP datagrams received for a port nobody listens on.", kCounter,
                                 ""};
constexpr MetricDesc kUdpInErrors{"vigil_host_udp_in_errors_total",
                                  "UDP datagrams received that could not be delivered.", kCounter,
                                  ""};
constexpr MetricDesc kUdpRcvbufErrors{"vigil_host_udp_receive_buffer_errors_total",
                                      "UDP datagrams dropped because a socket buffer was full.",
                                      kCounter, ""};
constexpr MetricDesc kUdpSndbufErrors{"vigil_host_udp_send_buffer_errors_total",
                                      "UDP datagrams not sent for lack of send buffer space.",
                                      kCounter, ""};
constexpr MetricDesc kUdpLiteInErrors{"vigil_host_udplite_in_errors_total",
                                      "UDP-Lite datagrams received that could not be delivered.",
                                      kCounter, ""};

constexpr const MetricDesc* kMetrics[] = {
    &kIpForwarding, &kIpInBytes,   &kIpOutBytes,      &kIcmpInMsgs,      &kIcmpInErrors,
    &kIcmpOutMsgs,  &kTcpInErrors, &kSyncookiesSent,  &kSyncookiesRecv,  &kSyncookiesFailed,
    &kSynRetrans,   &kTcpTimeouts, &kTcpOfo,          &kUdpInDatagrams,  &kUdpOutDatagrams,
    &kUdpNoPorts,   &kUdpInErrors, &kUdpRcvbufErrors, &kUdpSndbufErrors, &kUdpLiteInErrors};

struct Field {
  std::string_view name;  // Column name (net/snmp, net/netstat) or key (net/snmp6).
  const MetricDesc* desc;
};
struct Section {
  std::string_view name;
  std::span<const Field> fields;
  bool ipv4_label;  // TCP counters have no IPv6 twin (the kernel counts both together).
};

constexpr Field kIp[] = {{"Forwarding", &kIpForwarding}};
constexpr Field kIcmp[] = {
    {"InMsgs", &kIcmpInMsgs}, {"InErrors", &kIcmpInErrors}, {"OutMsgs", &kIcmpOutMsgs}};
constexpr Field kTcp[] = {{"InErrs", &kTcpInErrors}};
constexpr Field kUdp[] = {{"InDatagrams", &kUdpInDatagrams},   {"OutDatagrams", &kUdpOutDatagrams},
                          {"NoPorts", &kUdpNoPorts},           {"InErrors", &kUdpInErrors},
                          {"RcvbufErrors", &kUdpRcvbufErrors}, {"SndbufErrors", &kUdpSndbufErrors}};
constexpr Field kUdpLite[] = {{"InErrors", &kUdpLiteInErrors}};
constexpr Field kIpExt[] = {{"InOctets", &kIpInBytes}, {"OutOctets", &kIpOutBytes}};
constexpr Field kTcpExt[] = {
    {"SyncookiesSent", &kSyncookiesSent},     {"SyncookiesRecv", &kSyncookiesRecv},
    {"SyncookiesFailed", &kSyncookiesFailed}, {"TCPSynRetrans", &kSynRetrans},
    {"TCPTimeouts", &kTcpTimeouts},           {"TCPOFOQueue", &kTcpOfo}};

constexpr Section kSnmpSections[] = {{"Ip", kIp, false},
                                     {"Icmp", kIcmp, true},
                                     {"Tcp", kTcp, false},
                                     {"Udp", kUdp, true},
                                     {"UdpLite", kUdpLite, true}};
constexpr Section kNetstatSections[] = {{"IpExt", kIpExt, true}, {"TcpExt", kTcpExt, false}};

// net/snmp6 keys, "Ip6InOctets 123" (net/ipv6/proc.c).
constexpr Field kSnmp6[] = {{"Ip6InOctets", &kIpInBytes},
                            {"Ip6OutOctets", &kIpOutBytes},
                            {"Icmp6InMsgs", &kIcmpInMsgs},
                            {"Icmp6InErrors", &kIcmpInErrors},
                            {"Icmp6OutMsgs", &kIcmpOutMsgs},
                            {"Udp6InDatagrams", &kUdpInDatagrams},
                            {"Udp6OutDatagrams", &kUdpOutDatagrams},
                            {"Udp6NoPorts", &kUdpNoPorts},
                            {"Udp6InErrors", &kUdpInErrors},
                            {"Udp6RcvbufErrors", &kUdpRcvbufErrors},
                            {"Udp6SndbufErrors", &kUdpSndbufErrors},
                            {"UdpLite6InErrors", &kUdpLiteInErrors}};

constexpr size_t kMaxFields = 12;

template <size_t N>
size_t Names(std::span<const Field> fields, std::array<std::string_view, N>* names) {
  size_t n = 0;
  for (; n < fields.size() && n < N; ++n) {
    (*names)[n] = fields[n].name;
  }
  return n;
}

void Add(MetricWriter& out, const Section& section, const MetricDesc& desc, double value) {
  if (&desc == &kIpForwarding) {
    out.Add(desc, value == 1 ? 1 : 0);  // RFC 1213 ipForwarding: 1 forwarding, 2 not.
  } else if (section.ipv4_label) {
    out.Add(desc, value, {{"ip_version", "4"}});
  } else {
    out.Add(desc, value);
  }
}

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcNetstatCollector>(context.paths);
}

}  // namespace

const CollectorInfo ProcNetstatCollector::kInfo = {
    .name = "proc_netstat",
    .help = "IP, ICMP, UDP and TCP error counters from /proc/net/snmp, netstat and snmp6.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

ProcNetstatCollector::ProcNetstatCollector(HostPaths paths) : paths_(std::move(paths)) {}

Status ProcNetstatCollector::CollectSections(std::string_view file, bool samples_written,
                                             MetricWriter& out) {
  const std::string path = paths_.Proc(file);
  Status read = files_.ReadInto(path, &buf_);
  if (!read.ok()) {
    // net/snmp missing means no network stack view at all (absent); net/netstat missing after
    // net/snmp was read is a failure, since samples were already written.
    return samples_written && IsAbsent(read) ? DataLossError(read.message()) : read;
  }
  std::span<const Section> sections = file == "net/snmp"
                                          ? std::span<const Section>(kSnmpSections)
                                          : std::span<const Section>(kNetstatSections);
  for (const Section& section : sections) {
    std::array<std::string_view, kMaxFields> names;
    std::array<int64_t, kMaxFields> values{};
    const size_t n = Names(section.fields, &names);
    uint64_t found = 0;
    Status s = ParseSnmpFields(buf_, section.name, std::span(names).first(n),
                               std::span(values).first(n), &found);
    if (!s.ok()) {
      return s.WithContext(path);
    }
    for (size_t i = 0; i < n; ++i) {
      if (found & (uint64_t{1} << i)) {
        Add(out, section, *section.fields[i].desc, static_cast<double>(values[i]));
      }
    }
  }
  return OkStatus();
}

Status ProcNetstatCollector::CollectSnmp6(MetricWriter& out) {
  const std::string path = paths_.Proc("net/snmp6");
  Status read = files_.ReadInto(path, &buf_);
  if (read.code() == StatusCode::kNotFound) {
    return OkStatus();  // IPv6 disabled (ipv6.disable=1 or no module): no IPv6 series.
  }
  VIGIL_RETURN_IF_ERROR(read);
  std::array<std::string_view, kMaxFields> names;
  std::array<uint64_t, kMaxFields> values{};
  const size_t n = Names(kSnmp6, &names);
  uint64_t found = 0;
  Status s = ParseNamedCounters(buf_, std::span(names).first(n), std::span(values).first(n), &found,
                                "snmp6");
  if (!s.ok()) {
    return s.WithContext(path);
  }
  for (size_t i = 0; i < n; ++i) {
    if (found & (uint64_t{1} << i)) {
      out.Add(*kSnmp6[i].desc, static_cast<double>(values[i]), {{"ip_version", "6"}});
    }
  }
  return OkStatus();
}

Status ProcNetstatCollector::Collect(MetricWriter& out) {
  VIGIL_RETURN_IF_ERROR(CollectSections("net/snmp", /*samples_written=*/false, out));
  VIGIL_RETURN_IF_ERROR(CollectSections("net/netstat", /*samples_written=*/true, out));
  return CollectSnmp6(out);
}

}  // namespace vigil
