// SPDX-License-Identifier: Apache-2.0
// Fetching a `vigil top` frame and putting its sections together (top_sections.h), the help
// screen and the key line, clipped to the terminal's width.
#include "cli/top_view.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "base/time_util.h"
#include "cli/format.h"
#include "cli/top_sections.h"

namespace vigil {
namespace {

constexpr int64_t kRateWindowNs = 5 * 60 * kNanosPerSecond;

struct SortKey {
  TopSort sort;
  char key;
  const char* name;
  const char* help;
};
constexpr SortKey kSortKeys[] = {
    {TopSort::kCpu, 'c', "cpu", "CPU share (processes, cgroups)"},
    {TopSort::kMemory, 'm', "mem", "resident memory"},
    {TopSort::kGpuMemory, 'g', "gpumem", "GPU memory (GPU processes)"},
    {TopSort::kPid, 'p', "pid", "process id"},
    {TopSort::kName, 'n', "name", "command name"},
};

std::string KeyLine(const TopLayout& layout) {
  if (layout.width > 0 && layout.width < 70) {
    return fmt::format("\nsort {}  c m g p n  ? help  q quit\n", TopSortName(layout.sort));
  }
  return fmt::format("\nsort: {}  keys: c cpu  m mem  g gpumem  p pid  n name  ? help  q quit\n",
                     TopSortName(layout.sort));
}

std::string HelpScreen(const TopLayout& layout) {
  std::string out = "\nKeys\n";
  for (const SortKey& k : kSortKeys) {
    out += fmt::format("  {}  sort by {}{}\n", k.key, k.help, k.sort == layout.sort ? " *" : "");
  }
  out += "  ?  show or hide this help\n  q  quit (also Ctrl-C)\n";
  out += "\nCPU shares are of all CPUs (htop's split); a process's CPU is of one CPU.\n";
  return out;
}

std::string Clip(const std::string& text, int width) {
  if (width <= 0) {
    return text;
  }
  std::string clipped;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      end = text.size();
    }
    clipped += text.substr(start, std::min(end - start, static_cast<size_t>(width))) + "\n";
    start = end + 1;
  }
  return clipped;
}

}  // namespace

bool TopSortForKey(int key, TopSort* sort) {
  for (const SortKey& k : kSortKeys) {
    if (key == k.key || key == k.key - 'a' + 'A') {
      *sort = k.sort;
      return true;
    }
  }
  return false;
}

const char* TopSortName(TopSort sort) {
  for (const SortKey& k : kSortKeys) {
    if (k.sort == sort) {
      return k.name;
    }
  }
  return "?";
}

bool ParseTopSort(const std::string& name, TopSort* sort) {
  for (const SortKey& k : kSortKeys) {
    if (name == k.name) {
      *sort = k.sort;
      return true;
    }
  }
  return false;
}

bool TopNeedsRate(const std::string& name) {
  return name == "vigil_host_cpu_seconds_total" ||
         name == "vigil_host_pressure_waiting_seconds_total" ||
         name == "vigil_cgroup_cpu_usage_seconds_total" ||
         name == "vigil_process_cpu_user_seconds_total" ||
         name == "vigil_process_cpu_system_seconds_total";
}

std::map<std::string, double> RatesFromRange(const std::vector<SeriesView>& series) {
  std::map<std::string, double> rates;
  for (const SeriesView& s : series) {
    if (s.points.size() < 2) {
      continue;
    }
    const auto& [t1, v1] = s.points[s.points.size() - 2];
    const auto& [t2, v2] = s.points.back();
    if (t2 <= t1 || std::isnan(v1) || std::isnan(v2) || v2 < v1) {
      continue;  // A counter reset or a gap: no rate this frame.
    }
    rates[s.Key()] = (v2 - v1) / (static_cast<double>(t2 - t1) / 1e9);
  }
  return rates;
}

StatusOr<TopData> FetchTop(const CliContext& ctx) {
  TopData d;
  d.time_ns = UnixNanos();
  VIGIL_ASSIGN_OR_RETURN(nlohmann::json latest,
                         ctx.Call({{"fn", "vigilLatest"}, {"selector", ""}}));
  d.latest = ParseSeries(latest);
  StatusOr<nlohmann::json> status = ctx.Call({{"fn", "vigilStatus"}});
  if (status.ok()) {
    d.status = std::move(*status);
  }
  std::set<std::string> rate_names;
  for (const SeriesView& s : d.latest) {
    if (s.kind == "counter" && TopNeedsRate(s.name)) {
      rate_names.insert(s.name);
    }
  }
  for (const std::string& name : rate_names) {
    // Per-CPU counters are not drawn: fetch only the host-wide sum.
    const std::string selector =
        name == "vigil_host_cpu_seconds_total" ? name + "{cpu=\"all\"}" : name;
    StatusOr<nlohmann::json> range = ctx.Call({{"fn", "vigilRange"},
                                               {"selector", selector},
                                               {"start_ns", d.time_ns - kRateWindowNs},
                                               {"end_ns", d.time_ns},
                                               {"step_ns", 0}});
    if (range.ok()) {
      d.rates.merge(RatesFromRange(ParseSeries(*range)));
    }
  }
  StatusOr<nlohmann::json> procs = ctx.Call({{"fn", "vigilProcesses"}});
  if (procs.ok()) {
    d.processes = std::move(*procs);
  }
  return d;
}

std::string RenderTop(const TopData& d, const TopLayout& layout) {
  // A narrow header drops the daemon's version and the date.
  const bool narrow = layout.width > 0 && layout.width < 80;
  std::string out = "vigil top";
  if (d.status.is_object()) {
    out += "  " + JsonString(d.status, "hostname", "?");
    if (!narrow) {
      out += "  vigild " + JsonString(d.status, "version", "?");
    }
    out += "  up " + FormatSeconds(JsonNumber(d.status, "uptime_s", -1));
  }
  const std::string stamp = FormatTimestamp(d.time_ns);
  const size_t t = stamp.find('T');
  out += "  " + (narrow && t != std::string::npos ? stamp.substr(t + 1, 8) : stamp) + "\n\n";
  const std::string host = top::HostLines(d, layout.width);
  out += host.empty() ? "no host metrics yet\n" : host;
  if (layout.help) {
    out += HelpScreen(layout);
  } else {
    out += top::CgroupTable(d, layout) + top::ProcessTable(d, layout) + top::GpuSection(d, layout);
  }
  if (layout.keys) {
    out += KeyLine(layout);
  }
  return Clip(out, layout.width);
}

}  // namespace vigil
