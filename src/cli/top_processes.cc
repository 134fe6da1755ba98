// SPDX-License-Identifier: Apache-2.0
// The processes of interest in a `vigil top` frame: vigilProcesses (pid, command, job) joined
// with the proc_process collector's series. That collector keeps pids out of labels and sums
// processes per (comm, job), so CPU and RSS belong to that group: a row whose group holds
// several processes is marked with `*` and a footnote says so. CPU is htop's per-process share
// of one CPU: the rate of user plus system CPU-seconds.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "cli/format.h"
#include "cli/top_sections.h"

namespace vigil::top {
namespace {

constexpr size_t kMaxProcesses = 15;

struct Group {
  double cpu = kNaN;  // CPUs used (1 = one CPU busy).
  double rss = kNaN;
  double count = 0;
};

std::map<std::pair<std::string, std::string>, Group> Groups(const TopData& d) {
  std::map<std::pair<std::string, std::string>, Group> groups;  // (comm, job_id).
  for (const SeriesView& s : d.latest) {
    if (!s.name.starts_with("vigil_process_")) {
      continue;
    }
    Group& g = groups[{Label(s, "comm"), Label(s, "job_id")}];
    if (s.name == "vigil_process_cpu_user_seconds_total" ||
        s.name == "vigil_process_cpu_system_seconds_total") {
      if (const double r = Rate(d, s); !std::isnan(r)) {
        g.cpu = (std::isnan(g.cpu) ? 0 : g.cpu) + r;
      }
    } else if (s.name == "vigil_process_resident_memory_bytes") {
      g.rss = s.last();
    } else if (s.name == "vigil_process_count") {
      g.count = s.last();
    }
  }
  return groups;
}

std::string Clip(std::string s, size_t n) {
  if (s.size() > n) {
    s.resize(n > 1 ? n - 1 : n);
    s += n > 1 ? "+" : "";
  }
  return s.empty() ? "-" : s;
}

}  // namespace

std::string ProcessTable(const TopData& d, const TopLayout& layout) {
  const nlohmann::json& procs = JsonArray(d.processes, "processes");
  if (procs.empty()) {
    return "";
  }
  const auto groups = Groups(d);
  struct Row {
    const nlohmann::json* p;
    int64_t pid;
    Group g;
  };
  std::vector<Row> rows;
  for (const nlohmann::json& p : procs) {
    auto it = groups.find({JsonString(p, "comm"), JsonString(p, "job_id")});
    rows.push_back({&p, static_cast<int64_t>(JsonNumber(p, "pid", 0)),
                    it == groups.end() ? Group{} : it->second});
  }
  auto key = [](double v) { return std::isnan(v) ? -1.0 : v; };
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    switch (layout.sort) {
      case TopSort::kMemory:
      case TopSort::kGpuMemory:
        return key(a.g.rss) > key(b.g.rss);
      case TopSort::kPid:
        return a.pid < b.pid;
      case TopSort::kName:
        return JsonString(*a.p, "comm") < JsonString(*b.p, "comm");
      case TopSort::kCpu:
        break;
    }
    return key(a.g.cpu) > key(b.g.cpu);
  });
  // Wide: every label; from 100 columns down the team/model/framework go; below 70 the
  // reason goes too and names are clipped.
  const int w = layout.width;
  const bool wide = w <= 0 || w >= 100;
  const bool narrow = w > 0 && w < 70;
  const size_t name_max = narrow ? 10 : 24;
  std::vector<std::string> header = {"PID", "USER", "JOB", "COMMAND", "CPU", "RSS"};
  if (wide) {
    header.insert(header.end(), {"TEAM", "MODEL", "FRAMEWORK"});
  }
  if (!narrow) {
    header.push_back("REASON");
  }
  TextTable table(header);
  table.AlignRight(0);
  table.AlignRight(4);
  table.AlignRight(5);
  bool shared = false;
  for (size_t i = 0; i < rows.size() && i < kMaxProcesses; ++i) {
    const nlohmann::json& p = *rows[i].p;
    const Group& g = rows[i].g;
    const std::string mark = g.count > 1 ? "*" : "";
    shared = shared || !mark.empty();
    std::vector<std::string> cells = {JsonString(p, "pid"),
                                      Clip(JsonString(p, "user"), narrow ? 8 : 12),
                                      Clip(JsonString(p, "job_id"), name_max),
                                      Clip(JsonString(p, "comm"), narrow ? 12 : 16),
                                      std::isnan(g.cpu) ? "-" : FormatPercent(g.cpu) + mark,
                                      std::isnan(g.rss) ? "-" : FormatBytes(g.rss) + mark};
    if (wide) {
      cells.insert(cells.end(),
                   {Clip(JsonString(p, "team"), name_max), Clip(JsonString(p, "model"), name_max),
                    Clip(JsonString(p, "framework"), name_max)});
    }
    if (!narrow) {
      cells.push_back(Clip(JsonString(p, "reason"), 12));
    }
    table.AddRow(std::move(cells));
  }
  std::string out = "\n" + table.Render();
  if (procs.size() > kMaxProcesses) {
    out += fmt::format("... and {} more\n", procs.size() - kMaxProcesses);
  }
  if (shared) {
    out += "* CPU and RSS of all processes with this command in this job\n";
  }
  return out;
}

}  // namespace vigil::top
