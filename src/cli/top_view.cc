// SPDX-License-Identifier: Apache-2.0
#include "cli/top_view.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "base/time_util.h"
#include "cli/format.h"

namespace vigil {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kRateWindowNs = 5 * 60 * kNanosPerSecond;
constexpr size_t kMaxCgroups = 10;
constexpr size_t kMaxProcesses = 15;

bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::string Label(const SeriesView& s, const std::string& name) {
  auto it = s.labels.find(name);
  return it == s.labels.end() ? "" : it->second;
}

double Rate(const TopData& d, const SeriesView& s) {
  auto it = d.rates.find(s.Key());
  return it == d.rates.end() ? kNaN : it->second;
}

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

std::string CpuLine(const TopData& d) {
  // Host-wide series carry cpu="all"; per-CPU ones are only counted.
  std::map<std::string, double> by_mode;
  double total = 0;
  double busy = kNaN;
  std::set<std::string> cpus;
  for (const SeriesView& s : d.latest) {
    const std::string cpu = Label(s, "cpu");
    if (s.name == "vigil_host_cpu_utilization_ratio") {
      if (cpu == "all" || cpu.empty()) {
        busy = s.last();
      } else {
        cpus.insert(cpu);
      }
    }
    if (s.name != "vigil_host_cpu_seconds_total") {
      continue;
    }
    if (cpu != "all" && !cpu.empty()) {
      cpus.insert(cpu);
      continue;
    }
    const double r = Rate(d, s);
    if (!std::isnan(r)) {
      by_mode[Label(s, "mode")] += r;
      total += r;
    }
  }
  auto mode_rate = [&by_mode](const char* mode) {
    auto it = by_mode.find(mode);
    return it == by_mode.end() ? 0.0 : it->second;
  };
  if (std::isnan(busy) && total > 0) {
    busy = 1 - (mode_rate("idle") + mode_rate("iowait")) / total;
  }
  if (std::isnan(busy)) {
    return "";
  }
  std::string line = fmt::format("CPU     {} busy", FormatPercent(busy));
  if (total > 0) {
    for (const char* mode : {"user", "system", "iowait", "steal"}) {
      if (by_mode.count(mode) != 0) {
        line += fmt::format("  {} {}", mode, FormatPercent(mode_rate(mode) / total));
      }
    }
  }
  if (!cpus.empty()) {
    line += fmt::format("  ({} cpus)", cpus.size());
  } else if (total > 0) {
    line += fmt::format("  ({:.0f} cpus)", total);
  }
  return line + "\n";
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

std::string PressureLine(const TopData& d) {
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
  return line.empty() ? "" : "PSI   " + line + "  (share of time some task waited)\n";
}

std::string CgroupTable(const TopData& d) {
  struct Row {
    double cpu = 0;
    double mem = kNaN;
    bool has_cpu = false;
  };
  std::map<std::string, Row> rows;
  for (const SeriesView& s : d.latest) {
    const std::string cg = Label(s, "cgroup");
    if (cg.empty() || !StartsWith(s.name, "vigil_cgroup_")) {
      continue;
    }
    if (TopNeedsRate(s.name)) {
      const double r = Rate(d, s);
      if (!std::isnan(r)) {
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
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.cpu > b.second.cpu; });
  TextTable table({"CGROUP", "CPU", "MEMORY"});
  table.AlignRight(1);
  table.AlignRight(2);
  for (size_t i = 0; i < sorted.size() && i < kMaxCgroups; ++i) {
    const Row& r = sorted[i].second;
    table.AddRow({sorted[i].first, r.has_cpu ? FormatPercent(r.cpu) : "-",
                  std::isnan(r.mem) ? "-" : FormatBytes(r.mem)});
  }
  return "\n" + table.Render();
}

std::string ProcessTable(const TopData& d) {
  const nlohmann::json& procs = JsonArray(d.processes, "processes");
  if (procs.empty()) {
    return "";
  }
  TextTable table({"PID", "COMM", "JOB", "USER", "TEAM", "MODEL", "FRAMEWORK", "REASON"});
  table.AlignRight(0);
  size_t n = 0;
  for (const nlohmann::json& p : procs) {
    if (n++ == kMaxProcesses) {
      break;
    }
    table.AddRow({JsonString(p, "pid"), JsonString(p, "comm"), JsonString(p, "job_id"),
                  JsonString(p, "user"), JsonString(p, "team"), JsonString(p, "model"),
                  JsonString(p, "framework"), JsonString(p, "reason")});
  }
  std::string out = "\n" + table.Render();
  if (procs.size() > kMaxProcesses) {
    out += fmt::format("... and {} more\n", procs.size() - kMaxProcesses);
  }
  return out;
}

// A whole-device series: no labels beyond the GPU's identity (not per pipe, MIG instance, pid).
bool IsDeviceSeries(const SeriesView& s) {
  for (const auto& [name, value] : s.labels) {
    if (name != "gpu_uuid" && name != "gpu_index" && name != "gpu_model" && name != "host" &&
        name != "simulated") {
      return false;
    }
  }
  return true;
}

std::string FormatFlops(double flops) {
  if (std::isnan(flops)) {
    return "-";
  }
  static constexpr const char* kPrefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  size_t i = 0;
  while (flops >= 1000 && i + 1 < std::size(kPrefixes)) {
    flops /= 1000;
    ++i;
  }
  return fmt::format("{:.1f}{}", flops, kPrefixes[i]);
}

std::string GpuTable(const TopData& d) {
  struct Gpu {
    std::string index, model;
    std::map<std::string, double> values;  // Per-GPU series (no job_id/pipe label) by name.
    std::set<std::string> jobs;
  };
  std::map<std::string, Gpu> gpus;  // By gpu_uuid (or gpu_index).
  for (const SeriesView& s : d.latest) {
    if (!StartsWith(s.name, "vigil_gpu_")) {
      continue;
    }
    std::string id = Label(s, "gpu_uuid");
    if (id.empty()) {
      id = Label(s, "gpu_index");
    }
    if (id.empty()) {
      continue;
    }
    Gpu& g = gpus[id];
    if (g.index.empty()) {
      g.index = Label(s, "gpu_index");
    }
    if (g.model.empty()) {
      g.model = Label(s, "gpu_model");
    }
    if (const std::string job = Label(s, "job_id"); !job.empty()) {
      g.jobs.insert(job);
    } else if (IsDeviceSeries(s)) {
      g.values[s.name] = s.last();
    }
  }
  if (gpus.empty()) {
    return "";
  }
  auto get = [](const Gpu& g, const char* name) {
    auto it = g.values.find(name);
    return it == g.values.end() ? kNaN : it->second;
  };
  TextTable table({"GPU", "MODEL", "UTIL", "SM", "MEMORY", "POWER", "TEMP", "FLOP/S", "JOBS"});
  for (size_t c = 2; c <= 7; ++c) {
    table.AlignRight(c);
  }
  std::vector<const Gpu*> ordered;
  for (const auto& [id, g] : gpus) {
    ordered.push_back(&g);
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const Gpu* a, const Gpu* b) {
    return a->index.size() != b->index.size() ? a->index.size() < b->index.size()
                                              : a->index < b->index;
  });
  for (const Gpu* g : ordered) {
    const double used = get(*g, "vigil_gpu_memory_used_bytes");
    const double total = get(*g, "vigil_gpu_memory_total_bytes");
    std::string mem = std::isnan(used) ? "-" : FormatBytes(used);
    if (!std::isnan(total)) {
      mem += " / " + FormatBytes(total);
    }
    const double power = get(*g, "vigil_gpu_power_watts");
    const double temp = get(*g, "vigil_gpu_temperature_celsius");
    std::string jobs;
    for (const std::string& j : g->jobs) {
      jobs += (jobs.empty() ? "" : ",") + j;
    }
    table.AddRow({g->index.empty() ? "?" : g->index, g->model,
                  FormatPercent(get(*g, "vigil_gpu_utilization_ratio")),
                  FormatPercent(get(*g, "vigil_gpu_sm_active_ratio")), mem,
                  std::isnan(power) ? "-" : fmt::format("{:.0f} W", power),
                  std::isnan(temp) ? "-" : fmt::format("{:.0f} C", temp),
                  FormatFlops(get(*g, "vigil_gpu_flops_estimated")), jobs.empty() ? "-" : jobs});
  }
  return "\n" + table.Render();
}

}  // namespace

bool TopNeedsRate(const std::string& name) {
  return name == "vigil_host_cpu_seconds_total" ||
         name == "vigil_host_pressure_waiting_seconds_total" ||
         name == "vigil_cgroup_cpu_usage_seconds_total";
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

std::string RenderTop(const TopData& d, int width) {
  std::string out = "vigil top";
  if (d.status.is_object()) {
    out += fmt::format("  {}  vigild {}  up {}", JsonString(d.status, "hostname", "?"),
                       JsonString(d.status, "version", "?"),
                       FormatSeconds(JsonNumber(d.status, "uptime_s", -1)));
  }
  out += "  " + FormatTimestamp(d.time_ns) + "\n\n";
  const std::string host = CpuLine(d) + LoadLine(d) + MemoryLine(d) + PressureLine(d);
  out += host.empty() ? "no host metrics yet\n" : host;
  out += CgroupTable(d) + ProcessTable(d) + GpuTable(d);
  if (width <= 0) {
    return out;
  }
  std::string clipped;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) {
      end = out.size();
    }
    clipped += out.substr(start, std::min(end - start, static_cast<size_t>(width))) + "\n";
    start = end + 1;
  }
  return clipped;
}

}  // namespace vigil
