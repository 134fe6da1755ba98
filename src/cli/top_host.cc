// SPDX-License-Identifier: Apache-2.0
// The host part of a `vigil top` frame: CPU busy share and its split by mode, load, memory,
// pressure, and the busiest cgroups.
//
// CPU shares follow htop: the rate of each mode's counter (CPU-seconds per second, summed over
// all CPUs in the cpu="all" series) divided by the sum of the rates of all modes, so the shares
// add up to 100% and "busy" is everything but idle and iowait. Per-CPU series only count CPUs:
// adding them to the host-wide sum would count every second twice.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "cli/format.h"
#include "cli/top_sections.h"

namespace vigil::top {
namespace {

constexpr size_t kMaxCgroups = 10;

// Newest value of the first candidate name present with no labels other than `host`.
double HostGauge(const TopData& d, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    for (const SeriesView& s : d.latest) {
      if (s.name == name &&
          (s.labels.empty() || (s.labels.size() == 1 && s.labels.count("host")))) {
        return s.last();
      }
    }
  }
  return kNaN;
}

std::string CpuLines(const TopData& d, int width) {
  std::map<std::string, double> by_mode;  // Host-wide CPU-seconds per second, by mode.
  double total = 0;
  double gauge = kNaN;
  std::set<std::string> cpus;
  for (const SeriesView& s : d.latest) {
    const std::string cpu = Label(s, "cpu");
    const bool host_wide = cpu == "all" || cpu.empty();
    if (s.name == "vigil_host_cpu_utilization_ratio") {
      host_wide ? (void)(gauge = s.last()) : (void)cpus.insert(cpu);
      continue;
    }
    if (s.name != "vigil_host_cpu_seconds_total") {
      continue;
    }
    if (!host_wide) {
      cpus.insert(cpu);
      continue;
    }
    if (const double r = Rate(d, s); !std::isnan(r)) {
      by_mode[Label(s, "mode")] += r;
      total += r;
    }
  }
  auto share = [&](const char* mode) {
    auto it = by_mode.find(mode);
    return it == by_mode.end() ? 0.0 : it->second / total;
  };
  const double busy = total > 0 ? 1 - share("idle") - share("iowait") : gauge;
  if (std::isnan(busy)) {
    return "";
  }
  std::string line = fmt::format("CPU     {} busy", FormatPercent(busy));
  if (!cpus.empty()) {
    line += fmt::format("  ({} cpus)", cpus.size());
  } else if (total > 0) {
    line += fmt::format("  ({:.0f} cpus)", total);
  }
  if (total <= 0) {
    return line + "\n";
  }
  // htop's order and abbreviations; a mode the kernel does not report is left out.
  static constexpr std::pair<const char*, const char*> kModes[] = {
      {"user", "usr"},     {"nice", "nice"},   {"system", "sys"}, {"irq", "irq"},
      {"softirq", "sirq"}, {"iowait", "wait"}, {"steal", "steal"}};
  // Wrapped under the busy share on a narrow terminal.
  constexpr std::string_view kIndent = "       ";
  std::string split(kIndent);
  for (const auto& [mode, abbrev] : kModes) {
    if (by_mode.count(mode) == 0) {
      continue;
    }
    const std::string item = fmt::format(" {} {}", abbrev, FormatPercent(share(mode)));
    const size_t line_start = split.rfind('\n') == std::string::npos ? 0 : split.rfind('\n') + 1;
    if (width > 0 && split.size() - line_start + item.size() > static_cast<size_t>(width) &&
        split.size() - line_start > kIndent.size()) {
      split += "\n" + std::string(kIndent);
    }
    split += item;
  }
  return line + "\n" + split + "\n";
}

std::string LoadLine(const TopData& d) {
  std::string line;
  for (const char* period : {"1", "5", "15"}) {
    const std::string name = std::string("vigil_host_load") + period;
    const double load = HostGauge(d, {name.c_str()});
    if (!std::isnan(load)) {
      line += fmt::format("  {}m {:.2f}", period, load);
    }
  }
  return line.empty() ? "" : "LOAD  " + line + "\n";
}

std::string MemoryLine(const TopData& d) {
  const double total = HostGauge(d, {"vigil_host_memory_total_bytes"});
  const double avail =
      HostGauge(d, {"vigil_host_memory_available_bytes", "vigil_host_memory_free_bytes"});
  if (std::isnan(total) || total <= 0) {
    return "";
  }
  if (std::isnan(avail)) {
    return fmt::format("MEMORY  {} total\n", FormatBytes(total));
  }
  return fmt::format("MEMORY  {} used of {} ({})  available {}\n", FormatBytes(total - avail),
                     FormatBytes(total), FormatPercent((total - avail) / total),
                     FormatBytes(avail));
}

std::string PressureLine(const TopData& d, int width) {
  // The kernel's 10 s average when exported, else the rate of the cumulative counter.
  std::map<std::string, double> waiting;
  for (const SeriesView& s : d.latest) {
    if (s.name == "vigil_host_pressure_waiting_ratio") {
      waiting[Label(s, "resource")] = s.last();
    }
  }
  for (const SeriesView& s : d.latest) {
    if (s.name == "vigil_host_pressure_waiting_seconds_total") {
      waiting.emplace(Label(s, "resource"), Rate(d, s));
    }
  }
  std::string line;
  for (const auto& [resource, ratio] : waiting) {
    line += fmt::format("  {} {}", resource, FormatPercent(ratio));
  }
  if (line.empty()) {
    return "";
  }
  constexpr std::string_view kNote = "  (share of time some task waited)";
  line = "PSI   " + line;
  if (width <= 0 || line.size() + kNote.size() <= static_cast<size_t>(width)) {
    line += kNote;
  }
  return line + "\n";
}

}  // namespace

std::string Label(const SeriesView& s, const std::string& name) {
  auto it = s.labels.find(name);
  return it == s.labels.end() ? "" : it->second;
}

double Rate(const TopData& d, const SeriesView& s) {
  auto it = d.rates.find(s.Key());
  return it == d.rates.end() ? kNaN : it->second;
}

std::string HostLines(const TopData& d, int width) {
  return CpuLines(d, width) + LoadLine(d) + MemoryLine(d) + PressureLine(d, width);
}

std::string CgroupTable(const TopData& d, const TopLayout& layout) {
  struct Row {
    double cpu = 0;
    double mem = kNaN;
    bool has_cpu = false;
  };
  std::map<std::string, Row> rows;
  for (const SeriesView& s : d.latest) {
    const std::string cg = Label(s, "cgroup");
    if (cg.empty() || !s.name.starts_with("vigil_cgroup_")) {
      continue;
    }
    if (s.name == "vigil_cgroup_cpu_usage_seconds_total") {
      if (const double r = Rate(d, s); !std::isnan(r)) {
        rows[cg].cpu += r;
        rows[cg].has_cpu = true;
      }
    } else if (s.name == "vigil_cgroup_memory_usage_bytes") {
      rows[cg].mem = s.last();
    }
  }
  if (rows.empty()) {
    return "";
  }
  std::vector<std::pair<std::string, Row>> sorted(rows.begin(), rows.end());
  std::stable_sort(sorted.begin(), sorted.end(), [&](const auto& a, const auto& b) {
    switch (layout.sort) {
      case TopSort::kMemory:
      case TopSort::kGpuMemory:
        return (std::isnan(a.second.mem) ? -1 : a.second.mem) >
               (std::isnan(b.second.mem) ? -1 : b.second.mem);
      case TopSort::kName:
      case TopSort::kPid:
        return a.first < b.first;
      case TopSort::kCpu:
        break;
    }
    return a.second.cpu > b.second.cpu;
  });
  // The cgroup path is the column that gives way on a narrow terminal, from the left: the
  // leaf is the part that names the job.
  const size_t max_path =
      layout.width > 0 ? static_cast<size_t>(std::max(layout.width - 24, 12)) : std::string::npos;
  TextTable table({"CGROUP", "CPU", "MEMORY"});
  table.AlignRight(1);
  table.AlignRight(2);
  for (size_t i = 0; i < sorted.size() && i < kMaxCgroups; ++i) {
    const Row& r = sorted[i].second;
    std::string path = sorted[i].first;
    if (path.size() > max_path) {
      path = "..." + path.substr(path.size() - (max_path - 3));
    }
    table.AddRow({path, r.has_cpu ? FormatPercent(r.cpu) : "-",
                  std::isnan(r.mem) ? "-" : FormatBytes(r.mem)});
  }
  return "\n" + table.Render();
}

}  // namespace vigil::top
