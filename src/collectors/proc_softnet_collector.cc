// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_softnet_collector.h"

#include <charconv>
#include <utility>

#include "base/strings.h"
#include "collectors/collector_context.h"

namespace vigil {
namespace {

constexpr MetricDesc kProcessed{"vigil_host_softnet_processed_packets_total",
                                "Packets taken from this CPU's receive backlog and processed.",
                                MetricKind::kCounter, ""};
constexpr MetricDesc kDropped{"vigil_host_softnet_dropped_packets_total",
                              "Packets dropped because this CPU's receive backlog was full.",
                              MetricKind::kCounter, ""};
constexpr MetricDesc kSqueezed{
    "vigil_host_softnet_squeezed_total",
    "Times the receive softirq stopped with work left (budget or time exhausted).",
    MetricKind::kCounter, ""};
constexpr MetricDesc kCollisions{"vigil_host_softnet_cpu_collisions_total",
                                 "Times a transmit lock was already held by another CPU.",
                                 MetricKind::kCounter, ""};
constexpr MetricDesc kReceivedRps{"vigil_host_softnet_received_rps_total",
                                  "Times this CPU was woken to process packets steered to it.",
                                  MetricKind::kCounter, ""};
constexpr MetricDesc kFlowLimited{"vigil_host_softnet_flow_limited_packets_total",
                                  "Packets dropped by the per-flow backlog limit.",
                                  MetricKind::kCounter, ""};
constexpr MetricDesc kBacklog{"vigil_host_softnet_backlog_packets",
                              "Packets waiting in this CPU's receive backlog.", MetricKind::kGauge,
                              ""};

constexpr const MetricDesc* kMetrics[] = {&kProcessed,   &kDropped,     &kSqueezed, &kCollisions,
                                          &kReceivedRps, &kFlowLimited, &kBacklog};

struct Column {
  const MetricDesc* desc;
  int index;
};
constexpr Column kColumns[] = {{&kProcessed, 0},  {&kDropped, 1},     {&kSqueezed, 2},
                               {&kCollisions, 8}, {&kReceivedRps, 9}, {&kFlowLimited, 10},
                               {&kBacklog, 11}};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcSoftnetCollector>(context.paths);
}

bool ParseHex(std::string_view field, uint64_t* v) {
  auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), *v, 16);
  return ec == std::errc() && ptr == field.data() + field.size() && !field.empty();
}

}  // namespace

const CollectorInfo ProcSoftnetCollector::kInfo = {
    .name = "proc_softnet",
    .help = "Per-CPU packet processing and drops from /proc/net/softnet_stat.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

ProcSoftnetCollector::ProcSoftnetCollector(HostPaths paths) : paths_(std::move(paths)) {}

Status ProcSoftnetCollector::Parse(std::string_view text, std::vector<Cpu>* out) {
  out->clear();
  std::string_view line;
  uint32_t position = 0;
  while (NextLine(&text, &line)) {
    if (Trim(line).empty()) {
      continue;
    }
    Cpu cpu;
    cpu.cpu = position++;
    std::string_view field;
    while (NextField(&line, &field)) {
      uint64_t v = 0;
      if (!ParseHex(field, &v)) {
        return DataLossError("softnet_stat: bad hex number '" + SanitizeForLog(field, 40) + "'");
      }
      if (cpu.columns < static_cast<int>(cpu.v.size())) {
        cpu.v[cpu.columns] = v;
      } else if (cpu.columns == 12 && v < (1u << 20)) {
        cpu.cpu = static_cast<uint32_t>(v);  // Offline CPUs have no line, so positions lie.
      }
      ++cpu.columns;
    }
    if (cpu.columns < 9) {
      return DataLossError("softnet_stat: line with " + std::to_string(cpu.columns) +
                           " columns, want at least 9");
    }
    out->push_back(cpu);
  }
  return OkStatus();
}

Status ProcSoftnetCollector::Collect(MetricWriter& out) {
  const std::string path = paths_.Proc("net/softnet_stat");
  VIGIL_RETURN_IF_ERROR(files_.ReadInto(path, &buf_));
  Status s = Parse(buf_, &cpus_);
  if (!s.ok()) {
    return s.WithContext(path);
  }
  for (const Cpu& cpu : cpus_) {
    const std::string label = std::to_string(cpu.cpu);
    for (const Column& c : kColumns) {
      if (c.index < cpu.columns) {
        out.Add(*c.desc, static_cast<double>(cpu.v[c.index]), {{"cpu", label}});
      }
    }
  }
  return OkStatus();
}

}  // namespace vigil
