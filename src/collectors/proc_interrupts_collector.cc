// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_interrupts_collector.h"

#include <utility>

#include "base/strings.h"
#include "collectors/collector_context.h"
#include "collectors/proc_parse.h"

namespace vigil {
namespace {

constexpr MetricDesc kIrqInterrupts{
    "vigil_host_irq_interrupts_total",
    "Interrupts serviced per IRQ and CPU; info is the chip or the description, devices the "
    "trigger and device names of a numbered IRQ.",
    MetricKind::kCounter, ""};

constexpr const MetricDesc* kMetrics[] = {&kIrqInterrupts};

// More CPUs than this in the header is not a real file.
constexpr size_t kMaxCpus = 8192;
constexpr size_t kMaxLabelBytes = 128;

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcInterruptsCollector>(context.paths);
}

bool IsNumber(std::string_view s) { return !s.empty() && ParseUint64(s).has_value(); }

// The fields of `text` joined by single spaces (the kernel pads columns), capped.
std::string JoinFields(std::string_view text) {
  std::string out;
  std::string_view field;
  while (NextField(&text, &field) && out.size() < kMaxLabelBytes) {
    if (!out.empty()) {
      out.push_back(' ');
    }
    out.append(field);
  }
  return SanitizeForLog(out, kMaxLabelBytes);
}

}  // namespace

const CollectorInfo ProcInterruptsCollector::kInfo = {
    .name = "proc_interrupts",
    .help = "Interrupts per IRQ and CPU from /proc/interrupts (many series).",
    .enabled_by_default = false,
    .metrics = kMetrics,
    .create = &Create,
};

ProcInterruptsCollector::ProcInterruptsCollector(HostPaths paths) : paths_(std::move(paths)) {}

Status ProcInterruptsCollector::Parse(std::string_view text, MetricWriter& out) {
  std::string_view header;
  if (!NextLine(&text, &header)) {
    return DataLossError("interrupts: empty");
  }
  // "CPU0 CPU1 CPU3": offline CPUs are not printed, so the column's name is its CPU.
  std::vector<std::string> cpus;
  std::string_view name;
  while (NextField(&header, &name) && cpus.size() < kMaxCpus) {
    if (!name.starts_with("CPU") || !IsNumber(name.substr(3))) {
      return DataLossError("interrupts: bad header field '" + SanitizeForLog(name, 40) + "'");
    }
    cpus.emplace_back(name.substr(3));
  }
  if (cpus.empty()) {
    return DataLossError("interrupts: header names no CPU");
  }
  std::vector<uint64_t> counts(cpus.size());  // One line's counts, reused for every line.
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view irq;
    if (!NextField(&line, &irq) || irq.size() < 2 || irq.back() != ':') {
      continue;
    }
    irq.remove_suffix(1);
    std::string_view rest = line;
    std::string_view field;
    size_t n = 0;
    std::string_view before = rest;
    while (n < cpus.size() && NextField(&rest, &field)) {
      std::optional<uint64_t> v = ParseUint64(field);
      if (!v) {
        rest = before;  // A short line (ERR, MIS on some arches): no more counts.
        break;
      }
      counts[n++] = *v;
      before = rest;
    }
    if (n < cpus.size()) {
      continue;  // ERR: and MIS: carry one system-wide count, not one per CPU.
    }
    std::string info;
    std::string devices;
    const std::string_view tail = Trim(rest);
    if (IsNumber(irq)) {
      // "IO-APIC   5-edge      ACPI:Ged": chip, then trigger and device names.
      std::string_view t = tail;
      std::string_view chip;
      NextField(&t, &chip);
      info = SanitizeForLog(chip, kMaxLabelBytes);
      devices = JoinFields(t);
    } else {
      info = JoinFields(tail);
    }
    const std::string irq_label(irq);
    for (size_t i = 0; i < n; ++i) {
      out.Add(kIrqInterrupts, static_cast<double>(counts[i]),
              {{"cpu", cpus[i]}, {"devices", devices}, {"info", info}, {"irq", irq_label}});
    }
  }
  return OkStatus();
}

Status ProcInterruptsCollector::Collect(MetricWriter& out) {
  const std::string path = paths_.Proc("interrupts");
  VIGIL_RETURN_IF_ERROR(files_.ReadInto(path, &buf_));
  Status s = Parse(buf_, out);
  return s.ok() ? s : s.WithContext(path);
}

}  // namespace vigil
