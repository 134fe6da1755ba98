// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_diskstats_collector.h"

#include <algorithm>
#include <utility>

#include "base/strings.h"
#include "collectors/collector_context.h"
#include "collectors/proc_parse.h"

namespace vigil {
namespace {

constexpr MetricDesc kReads{"vigil_host_disk_reads_completed_total",
                            "Reads completed successfully.", MetricKind::kCounter, ""};
constexpr MetricDesc kReadBytes{"vigil_host_disk_read_bytes_total", "Bytes read.",
                                MetricKind::kCounter, "bytes"};
constexpr MetricDesc kReadTime{"vigil_host_disk_read_time_seconds_total",
                               "Time spent by all reads.", MetricKind::kCounter, "seconds"};
constexpr MetricDesc kWrites{"vigil_host_disk_writes_completed_total",
                             "Writes completed successfully.", MetricKind::kCounter, ""};
constexpr MetricDesc kWrittenBytes{"vigil_host_disk_written_bytes_total", "Bytes written.",
                                   MetricKind::kCounter, "bytes"};
constexpr MetricDesc kWriteTime{"vigil_host_disk_write_time_seconds_total",
                                "Time spent by all writes.", MetricKind::kCounter, "seconds"};
constexpr MetricDesc kInProgress{"vigil_host_disk_io_in_progress",
                                 "I/Os issued to the device and not yet completed.",
                                 MetricKind::kGauge, ""};
constexpr MetricDesc kIoTime{"vigil_host_disk_io_time_seconds_total",
                             "Time the device had at least one I/O in flight (busy time).",
                             MetricKind::kCounter, "seconds"};
constexpr MetricDesc kIoTimeWeighted{
    "vigil_host_disk_io_time_weighted_seconds_total",
    "I/O time weighted by the number of I/Os in flight (queue time).", MetricKind::kCounter,
    "seconds"};
constexpr MetricDesc kDiscards{"vigil_host_disk_discards_completed_total",
                               "Discards completed successfully (Linux 4.18+).",
                               MetricKind::kCounter, ""};
constexpr MetricDesc kDiscardedBytes{"vigil_host_disk_discarded_bytes_total",
                                     "Bytes discarded (Linux 4.18+).", MetricKind::kCounter,
                                     "bytes"};
constexpr MetricDesc kFlushes{"vigil_host_disk_flush_requests_total",
                              "Flush requests completed (Linux 5.5+).", MetricKind::kCounter, ""};
constexpr const MetricDesc* kMetrics[] = {
    &kReads,      &kReadBytes, &kReadTime,       &kWrites,   &kWrittenBytes,   &kWriteTime,
    &kInProgress, &kIoTime,    &kIoTimeWeighted, &kDiscards, &kDiscardedBytes, &kFlushes};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcDiskstatsCollector>(context.paths,
                                                  context.OptionsFor<ProcDiskstatsOptions>());
}

// Which field feeds which family, and the scale to base units.
struct Column {
  const MetricDesc* desc;
  int index;
  double scale;
};
constexpr Column kColumns[] = {
    {&kReads, 0, 1},
    {&kReadBytes, 2, kSectorBytes},
    {&kReadTime, 3, 1e-3},
    {&kWrites, 4, 1},
    {&kWrittenBytes, 6, kSectorBytes},
    {&kWriteTime, 7, 1e-3},
    {&kInProgress, 8, 1},
    {&kIoTime, 9, 1e-3},
    {&kIoTimeWeighted, 10, 1e-3},
    {&kDiscards, 11, 1},
    {&kDiscardedBytes, 13, kSectorBytes},
    {&kFlushes, 15, 1},
};

}  // namespace

const CollectorInfo ProcDiskstatsCollector::kInfo = {
    .name = "proc_diskstats",
    .help = "Per-disk I/O counts, bytes, times and queue depth from /proc/diskstats.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

ProcDiskstatsCollector::ProcDiskstatsCollector(HostPaths paths, ProcDiskstatsOptions options)
    : paths_(std::move(paths)) {
  if (options.device_exclude.empty()) {
    return;
  }
  try {  // std::regex reports a bad pattern only by throwing.
    exclude_.emplace(options.device_exclude, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    options_status_ = InvalidArgumentError("proc_diskstats: bad device_exclude regex '" +
                                           options.device_exclude + "': " + e.what());
  }
}

StatusOr<std::vector<ProcDiskstatsCollector::Device>> ProcDiskstatsCollector::Parse(
    std::string_view text) {
  std::vector<Device> out;
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view major;
    std::string_view minor;
    Device dev;
    if (!NextField(&line, &major)) {
      continue;  // Blank line.
    }
    if (!NextField(&line, &minor) || !NextField(&line, &dev.name)) {
      return DataLossError("diskstats: truncated line");
    }
    std::string_view field;
    while (dev.fields < static_cast<int>(dev.v.size()) && NextField(&line, &field)) {
      StatusOr<uint64_t> v = ParseCounterField(field, "diskstats");
      if (!v.ok()) {
        return v.status().WithContext(SanitizeForLog(dev.name, 40));
      }
      dev.v[dev.fields] = *v;
      ++dev.fields;
    }
    if (dev.fields < 11) {
      return DataLossError("diskstats: truncated line for " + SanitizeForLog(dev.name, 40));
    }
    out.push_back(dev);
  }
  return out;
}

bool ProcDiskstatsCollector::ChooseReported(const std::vector<Device>& devices) {
  // <sys>/block names whole disks ('/' in a name is '!' there); without it every device is kept.
  StatusOr<std::vector<std::string>> disks = ListDir(paths_.Sys("block"));
  if (disks.ok()) {
    std::sort(disks->begin(), disks->end());
  }
  reported_.assign(devices.size(), false);
  std::string sys_name;
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string_view name = devices[i].name;
    if (disks.ok()) {
      sys_name.assign(name);
      std::replace(sys_name.begin(), sys_name.end(), '/', '!');
      if (!std::binary_search(disks->begin(), disks->end(), sys_name)) {
        continue;  // A partition (or a device sysfs does not show).
      }
    }
    reported_[i] = !(exclude_ && std::regex_search(name.begin(), name.end(), *exclude_));
  }
  return disks.ok();
}

Status ProcDiskstatsCollector::Collect(MetricWriter& out) {
  VIGIL_RETURN_IF_ERROR(options_status_);
  const std::string path = paths_.Proc("diskstats");
  VIGIL_RETURN_IF_ERROR(files_.ReadInto(path, &buf_));
  StatusOr<std::vector<Device>> parsed = Parse(buf_);
  if (!parsed.ok()) {
    return parsed.status().WithContext(path);
  }
  // Which devices to report depends only on their names: it is worked out again (one listing of
  // <sys>/block, the exclude regex) only when the devices in the file changed.
  std::string names;
  for (const Device& dev : *parsed) {
    names.append(dev.name).push_back('\n');
  }
  if (names != reported_for_) {
    // Without a <sys>/block view this time, it looks again next tick.
    reported_for_ = ChooseReported(*parsed) ? std::move(names) : std::string();
  }
  for (size_t i = 0; i < parsed->size(); ++i) {
    const Device& dev = (*parsed)[i];
    if (!reported_[i]) {
      continue;
    }
    const std::string name(dev.name);
    for (const Column& c : kColumns) {
      if (c.index < dev.fields) {
        out.Add(*c.desc, static_cast<double>(dev.v[c.index]) * c.scale, {{"device", name}});
      }
    }
  }
  return OkStatus();
}

}  // namespace vigil
