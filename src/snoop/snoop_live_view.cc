// SPDX-License-Identifier: Apache-2.0
#include "snoop/snoop_live_view.h"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "snoop/snoop_format.h"

namespace vigil::snoop {
namespace {

double Delta(uint64_t now, uint64_t before) {
  return now > before ? static_cast<double>(now - before) : 0.0;
}

struct KernelRow {
  double rate = 0;
  uint64_t total = 0;
  int pid = 0;
  std::string name;
};

std::string FitLine(std::string line, size_t width) {
  return width > 0 ? Ellipsize(line, width) : line;
}

void AppendLines(const std::string& text, std::vector<std::string>* lines) {
  size_t start = 0;
  for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
    lines->push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
}

}  // namespace

std::string RenderSnoopLive(const LiveFrame& frame) {
  const SessionSummary& cur = *frame.current;
  const double dt = frame.interval_seconds > 0 ? frame.interval_seconds : 1;
  std::map<int, const ProcessSummary*> before;
  if (frame.previous != nullptr) {
    for (const ProcessSummary& p : frame.previous->processes) {
      before[p.pid] = &p;
    }
  }
  std::vector<std::string> lines;
  std::string header = fmt::format(
      "vigil snoop  {:.0f}s  {} {}  {} events", cur.duration_seconds, cur.processes.size(),
      cur.processes.size() == 1 ? "process" : "processes", cur.events_seen);
  if (cur.sampled) {
    header += fmt::format("  sampled {:.1f}%", cur.sample_ratio * 100);
  }
  lines.push_back(header);
  for (const std::string& warning : cur.warnings) {
    lines.push_back("warning: " + warning);
  }
  lines.emplace_back();

  std::vector<std::vector<std::string>> procs = {
      {"PID", "COMMAND", "LAUNCH/s", "SYNC/s", "BLOCKED", "OUTSTANDING", "PEAK", "LEAKS"}};
  std::vector<KernelRow> kernels;
  for (const ProcessSummary& p : cur.processes) {
    auto it = before.find(p.pid);
    const ProcessSummary* prev = it != before.end() ? it->second : nullptr;
    const double launches = Delta(p.launches_total, prev ? prev->launches_total : 0) / dt;
    const double syncs = Delta(p.syncs_count, prev ? prev->syncs_count : 0) / dt;
    const double blocked = std::max(0.0, p.syncs_seconds - (prev ? prev->syncs_seconds : 0)) / dt;
    uint64_t leak_bytes = 0;
    for (const LeakGroup& leak : p.memory.leaks) {
      leak_bytes += leak.bytes;
    }
    procs.push_back({std::to_string(p.pid), p.command + (p.exited ? " (exited)" : ""),
                     FormatRate(launches), FormatRate(syncs), fmt::format("{:.1f}%", blocked * 100),
                     FormatBytes(p.memory.outstanding_bytes), FormatBytes(p.memory.peak_bytes),
                     FormatBytes(leak_bytes)});
    std::map<std::string, uint64_t> old_counts;
    if (prev != nullptr) {
      for (const KernelLaunches& k : prev->launches_by_kernel) {
        old_counts[k.name] = k.count;
      }
    }
    for (const KernelLaunches& k : p.launches_by_kernel) {
      kernels.push_back({Delta(k.count, old_counts[k.name]) / dt, k.count, p.pid, k.name});
    }
  }
  AppendLines(RenderColumns(procs, {0, 2, 3, 4, 5, 6, 7}, 0), &lines);
  lines.emplace_back();

  std::stable_sort(kernels.begin(), kernels.end(), [](const KernelRow& a, const KernelRow& b) {
    return a.rate != b.rate ? a.rate > b.rate : a.total > b.total;
  });
  // Rows left for kernels: the header line and one per kernel, within the terminal's height.
  size_t room = kernels.size();
  if (frame.height > 0) {
    const size_t used = lines.size() + 2;  // The kernel header and the caller's last line.
    room = frame.height > used ? std::min(room, frame.height - used) : 0;
  }
  std::vector<std::vector<std::string>> rows = {{"LAUNCH/s", "TOTAL", "PID", "KERNEL"}};
  for (size_t i = 0; i < room; ++i) {
    rows.push_back({FormatRate(kernels[i].rate), std::to_string(kernels[i].total),
                    std::to_string(kernels[i].pid), kernels[i].name});
  }
  AppendLines(RenderColumns(rows, {0, 1, 2}, 0), &lines);
  std::string out;
  for (std::string& line : lines) {
    out += FitLine(std::move(line), frame.width);
    out += '\n';
  }
  return out;
}

}  // namespace vigil::snoop
