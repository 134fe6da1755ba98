// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_udp_collector.h"

#include <charconv>
#include <utility>

#include "base/strings.h"
#include "collectors/collector_context.h"

namespace vigil {
namespace {

constexpr MetricDesc kQueued{"vigil_host_udp_queued_bytes",
                             "Bytes waiting in UDP socket queues, by IP version and queue.",
                             MetricKind::kGauge, "bytes"};

constexpr const MetricDesc* kMetrics[] = {&kQueued};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcUdpCollector>(context.paths);
}

bool ParseHex(std::string_view s, uint64_t* v) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *v, 16);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

void AddQueues(const ProcUdpCollector::Queues& q, const char* version, MetricWriter& out) {
  out.Add(kQueued, static_cast<double>(q.receive), {{"ip_version", version}, {"queue", "receive"}});
  out.Add(kQueued, static_cast<double>(q.transmit),
          {{"ip_version", version}, {"queue", "transmit"}});
}

}  // namespace

const CollectorInfo ProcUdpCollector::kInfo = {
    .name = "proc_udp",
    .help = "Bytes queued in UDP sockets from /proc/net/udp and udp6.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

ProcUdpCollector::ProcUdpCollector(HostPaths paths) : paths_(std::move(paths)) {}

StatusOr<ProcUdpCollector::Queues> ProcUdpCollector::Parse(std::string_view text) {
  Queues q;
  std::string_view line;
  NextLine(&text, &line);  // Header.
  while (NextLine(&text, &line)) {
    // sl, local_address, rem_address, st, tx_queue:rx_queue (net/ipv4/udp.c udp4_format_sock).
    std::string_view field;
    int n = 0;
    while (n < 5 && NextField(&line, &field)) {
      ++n;
    }
    if (n == 0) {
      continue;
    }
    const size_t colon = field.find(':');
    uint64_t tx = 0;
    uint64_t rx = 0;
    if (n < 5 || colon == std::string_view::npos || !ParseHex(field.substr(0, colon), &tx) ||
        !ParseHex(field.substr(colon + 1), &rx)) {
      return DataLossError("udp: bad queue column '" + SanitizeForLog(field, 40) + "'");
    }
    q.transmit += tx;
    q.receive += rx;
  }
  return q;
}

Status ProcUdpCollector::Collect(MetricWriter& out) {
  std::string path = paths_.Proc("net/udp");
  VIGIL_RETURN_IF_ERROR(files_.ReadInto(path, &buf_));
  StatusOr<Queues> v4 = Parse(buf_);
  if (!v4.ok()) {
    return v4.status().WithContext(path);
  }
  AddQueues(*v4, "4", out);
  path = paths_.Proc("net/udp6");
  Status read = files_.ReadInto(path, &buf_);
  if (read.code() == StatusCode::kNotFound) {
    return OkStatus();  // IPv6 disabled.
  }
  VIGIL_RETURN_IF_ERROR(read);
  StatusOr<Queues> v6 = Parse(buf_);
  if (!v6.ok()) {
    return v6.status().WithContext(path);
  }
  AddQueues(*v6, "6", out);
  return OkStatus();
}

}  // namespace vigil
