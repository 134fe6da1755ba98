// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_pressure_collector.h"

#include <array>
#include <utility>

#include "base/strings.h"
#include "collectors/collector_context.h"
#include "collectors/proc_parse.h"

namespace vigil {
namespace {

constexpr MetricDesc kWaitingSeconds{"vigil_host_pressure_waiting_seconds_total",
                                     "Time at least one task was stalled on the resource.",
                                     MetricKind::kCounter, "seconds"};
constexpr MetricDesc kStalledSeconds{"vigil_host_pressure_stalled_seconds_total",
                                     "Time all non-idle tasks were stalled on the resource.",
                                     MetricKind::kCounter, "seconds"};
constexpr MetricDesc kWaitingRatio{
    "vigil_host_pressure_waiting_ratio",
    "Share of the last 10 s in which at least one task was stalled on the resource.",
    MetricKind::kGauge, "ratio"};
constexpr MetricDesc kStalledRatio{
    "vigil_host_pressure_stalled_ratio",
    "Share of the last 10 s in which all non-idle tasks were stalled on the resource.",
    MetricKind::kGauge, "ratio"};
constexpr const MetricDesc* kMetrics[] = {&kWaitingSeconds, &kStalledSeconds, &kWaitingRatio,
                                          &kStalledRatio};
constexpr std::array<std::string_view, 3> kResources = {"cpu", "memory", "io"};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcPressureCollector>(context.paths);
}

// "avg10=0.12 avg60=0.00 avg300=0.00 total=12345"
StatusOr<ProcPressureCollector::Line> ParseFields(std::string_view rest) {
  ProcPressureCollector::Line line;
  bool have_avg10 = false;
  bool have_total = false;
  std::string_view field;
  while (NextField(&rest, &field)) {
    if (std::string_view v = ValueAfterKey(field, "avg10"); v.data() != nullptr) {
      VIGIL_ASSIGN_OR_RETURN(double avg10, ParseDecimalField(v, "pressure avg10"));
      line.avg10_ratio = avg10 / 100.0;
      have_avg10 = true;
    } else if (std::string_view t = ValueAfterKey(field, "total"); t.data() != nullptr) {
      VIGIL_ASSIGN_OR_RETURN(uint64_t us, ParseCounterField(t, "pressure total"));
      line.total_seconds = static_cast<double>(us) / 1e6;
      have_total = true;
    }
  }
  if (!have_avg10 || !have_total) {
    return DataLossError("pressure: line without avg10= or total=");
  }
  return line;
}

}  // namespace

const CollectorInfo ProcPressureCollector::kInfo = {
    .name = "proc_pressure",
    .help = "Pressure-stall information (PSI) for cpu, memory and io from /proc/pressure.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

ProcPressureCollector::ProcPressureCollector(HostPaths paths) : paths_(std::move(paths)) {}

StatusOr<ProcPressureCollector::Pressure> ProcPressureCollector::Parse(std::string_view text) {
  Pressure out;
  bool have_some = false;
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view kind;
    if (!NextField(&line, &kind)) {
      continue;
    }
    if (kind == "some") {
      VIGIL_ASSIGN_OR_RETURN(out.some, ParseFields(line));
      have_some = true;
    } else if (kind == "full") {
      VIGIL_ASSIGN_OR_RETURN(Line full, ParseFields(line));
      out.full = full;
    }
  }
  if (!have_some) {
    return DataLossError("pressure: no 'some' line");
  }
  return out;
}

Status ProcPressureCollector::Collect(MetricWriter& out) {
  const std::string dir = paths_.Proc("pressure");
  if (!IsDirectory(dir)) {
    return NotFoundError(dir + ": absent kernel support (CONFIG_PSI, Linux 4.20+)");
  }
  Status first_error;
  for (std::string_view resource : kResources) {
    const std::string path = JoinPath(dir, resource);
    Status read = files_.ReadInto(path, &buf_);
    StatusOr<Pressure> parsed = read.ok() ? Parse(buf_) : StatusOr<Pressure>(read);
    if (!parsed.ok()) {
      // Keep the other resources; a file missing inside an existing directory is a failure.
      if (first_error.ok()) {
        first_error = read.ok() ? parsed.status().WithContext(path) : DataLossError(read.message());
      }
      continue;
    }
    const Labels labels = {{"resource", std::string(resource)}};
    out.Add(kWaitingSeconds, parsed->some.total_seconds, labels);
    out.Add(kWaitingRatio, parsed->some.avg10_ratio, labels);
    if (parsed->full) {
      out.Add(kStalledSeconds, parsed->full->total_seconds, labels);
      out.Add(kStalledRatio, parsed->full->avg10_ratio, labels);
    }
  }
  return first_error;
}

}  // namespace vigil
