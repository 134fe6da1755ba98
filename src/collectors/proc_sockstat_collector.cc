// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_sockstat_collector.h"

#include <utility>

#include "base/strings.h"
#include "collectors/collector_context.h"
#include "collectors/proc_parse.h"

namespace vigil {
namespace {

constexpr MetricDesc kSocketsUsed{"vigil_host_sockets_used",
                                  "Sockets of every family the kernel has allocated.",
                                  MetricKind::kGauge, ""};
constexpr MetricDesc kSocketsInUse{"vigil_host_sockets_in_use",
                                   "Sockets in use, by protocol and IP version.",
                                   MetricKind::kGauge, ""};
constexpr MetricDesc kTcpOrphan{"vigil_host_tcp_orphan_sockets",
                                "TCP sockets no longer attached to a file descriptor.",
                                MetricKind::kGauge, ""};
constexpr MetricDesc kTcpTimeWait{"vigil_host_tcp_time_wait_sockets",
                                  "TCP sockets in the TIME_WAIT state.", MetricKind::kGauge, ""};
constexpr MetricDesc kTcpAlloc{"vigil_host_tcp_allocated_sockets",
                               "TCP sockets allocated, in any state.", MetricKind::kGauge, ""};
constexpr MetricDesc kSocketMemory{"vigil_host_socket_memory_bytes",
                                   "Memory used by socket buffers, by protocol.",
                                   MetricKind::kGauge, "bytes"};
constexpr MetricDesc kReasmQueues{"vigil_host_ip_reassembly_queues",
                                  "IP fragment reassembly queues in use.", MetricKind::kGauge, ""};
constexpr MetricDesc kReasmMemory{"vigil_host_ip_reassembly_memory_bytes",
                                  "Memory used by IP fragment reassembly.", MetricKind::kGauge,
                                  "bytes"};

constexpr const MetricDesc* kMetrics[] = {&kSocketsUsed, &kSocketsInUse, &kTcpOrphan,
                                          &kTcpTimeWait, &kTcpAlloc,     &kSocketMemory,
                                          &kReasmQueues, &kReasmMemory};

struct Protocol {
  std::string_view tag;  // Line tag without the colon.
  std::string_view protocol;
  std::string_view ip_version;
};
constexpr Protocol kProtocols[] = {{"TCP", "tcp", "4"},         {"UDP", "udp", "4"},
                                   {"UDPLITE", "udplite", "4"}, {"RAW", "raw", "4"},
                                   {"FRAG", "frag", "4"},       {"TCP6", "tcp", "6"},
                                   {"UDP6", "udp", "6"},        {"UDPLITE6", "udplite", "6"},
                                   {"RAW6", "raw", "6"},        {"FRAG6", "frag", "6"}};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcSockstatCollector>(context.paths);
}

void AddValue(const Protocol& p, std::string_view key, double value, double page_size,
              MetricWriter& out) {
  const std::string version(p.ip_version);
  if (p.protocol == "frag") {
    if (key == "inuse") {
      out.Add(kReasmQueues, value, {{"ip_version", version}});
    } else if (key == "memory") {  // Already bytes (net/ipv4/proc.c sockstat_seq_show).
      out.Add(kReasmMemory, value, {{"ip_version", version}});
    }
    return;
  }
  if (key == "inuse") {
    out.Add(kSocketsInUse, value, {{"ip_version", version}, {"protocol", std::string(p.protocol)}});
  } else if (key == "mem") {  // Pages, shared by IPv4 and IPv6 sockets of the protocol.
    out.Add(kSocketMemory, value * page_size, {{"protocol", std::string(p.protocol)}});
  } else if (p.tag == "TCP" && key == "orphan") {
    out.Add(kTcpOrphan, value);
  } else if (p.tag == "TCP" && key == "tw") {
    out.Add(kTcpTimeWait, value);
  } else if (p.tag == "TCP" && key == "alloc") {
    out.Add(kTcpAlloc, value);
  }
}

}  // namespace

const CollectorInfo ProcSockstatCollector::kInfo = {
    .name = "proc_sockstat",
    .help = "Sockets in use and socket memory from /proc/net/sockstat and sockstat6.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

ProcSockstatCollector::ProcSockstatCollector(HostPaths paths, double page_size)
    : paths_(std::move(paths)), page_size_(page_size > 0 ? page_size : HostPageSize()) {}

Status ProcSockstatCollector::Parse(std::string_view text, double page_size, MetricWriter& out) {
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view tag;
    if (!NextField(&line, &tag) || tag.size() < 2 || tag.back() != ':') {
      continue;
    }
    tag.remove_suffix(1);
    const Protocol* protocol = nullptr;
    for (const Protocol& p : kProtocols) {
      protocol = p.tag == tag ? &p : protocol;
    }
    if (protocol == nullptr && tag != "sockets") {
      continue;
    }
    std::string_view key;
    std::string_view value;
    while (NextField(&line, &key)) {
      if (!NextField(&line, &value)) {
        return DataLossError("sockstat: " + std::string(tag) + " " + SanitizeForLog(key, 40) +
                             " has no value");
      }
      VIGIL_ASSIGN_OR_RETURN(uint64_t v, ParseCounterField(value, "sockstat"));
      if (protocol == nullptr) {
        if (key == "used") {
          out.Add(kSocketsUsed, static_cast<double>(v));
        }
      } else {
        AddValue(*protocol, key, static_cast<double>(v), page_size, out);
      }
    }
  }
  return OkStatus();
}

Status ProcSockstatCollector::Collect(MetricWriter& out) {
  std::string path = paths_.Proc("net/sockstat");
  VIGIL_RETURN_IF_ERROR(files_.ReadInto(path, &buf_));
  Status s = Parse(buf_, page_size_, out);
  if (!s.ok()) {
    return s.WithContext(path);
  }
  path = paths_.Proc("net/sockstat6");
  Status read = files_.ReadInto(path, &buf_);
  if (read.code() == StatusCode::kNotFound) {
    return OkStatus();  // IPv6 disabled.
  }
  VIGIL_RETURN_IF_ERROR(read);
  s = Parse(buf_, page_size_, out);
  return s.ok() ? s : s.WithContext(path);
}

}  // namespace vigil
