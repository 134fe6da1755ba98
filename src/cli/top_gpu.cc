// SPDX-License-Identifier: Apache-2.0
// The GPU part of a `vigil top` frame: one row per GPU (like nvtop), then one row per process
// holding GPU memory (like nvidia-smi's process list) with its SM share where the driver reports
// one (vigil_gpu_process_sm_utilization_ratio), and the user and command from vigilProcesses.
// Temperatures carry a sensor label (gpu, memory): the die ("gpu") is shown. With no GPU series at
// all one line says so, with the GPU collector's own message when the daemon reports one, instead
// of a silently missing section.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "cli/format.h"
#include "cli/top_sections.h"

namespace vigil::top {
namespace {

constexpr size_t kMaxGpuProcesses = 20;

// A whole-device series: no labels beyond the GPU's identity (not per pipe, MIG instance, pid),
// except the die temperature sensor.
bool IsDeviceSeries(const SeriesView& s) {
  for (const auto& [name, value] : s.labels) {
    if (name == "sensor" && value == "gpu") {
      continue;
    }
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

struct Gpu {
  std::string index, model;
  std::map<std::string, double> values;  // Whole-device series by name.
  std::set<std::string> jobs;
};

bool IndexLess(const std::string& a, const std::string& b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

// Why there is no GPU: the message of a GPU collector that is not ok.
std::string NoGpuLine(const TopData& d) {
  std::string why;
  for (const nlohmann::json& c : JsonArray(d.status, "collectors")) {
    const std::string name = JsonString(c, "name");
    const std::string state = JsonString(c, "state");
    if (name.starts_with("gpu") && state != "ok" && !state.empty()) {
      why = fmt::format(" ({} {}: {})", name, state, JsonString(c, "message"));
      break;
    }
  }
  return "\nGPU     none reported by this host" + why + "\n";
}

std::string ProcessRows(const TopData& d, const std::map<std::string, Gpu>& gpus,
                        const TopLayout& layout) {
  std::map<std::string, const nlohmann::json*> by_pid;
  for (const nlohmann::json& p : JsonArray(d.processes, "processes")) {
    by_pid[JsonString(p, "pid")] = &p;
  }
  // Users also come from the accounting series of the GPU's jobs (also for simulated jobs,
  // whose pids do not exist).
  std::map<std::pair<std::string, std::string>, std::string> job_users;  // (uuid, job) -> user.
  for (const SeriesView& s : d.latest) {
    if (s.name == "vigil_gpu_allocated_seconds_total" && !Label(s, "user").empty()) {
      job_users[{Label(s, "gpu_uuid"), Label(s, "job_id")}] = Label(s, "user");
    }
  }
  // SM share per (gpu_uuid, pid), where the driver reports it.
  std::map<std::pair<std::string, std::string>, double> sm;
  for (const SeriesView& s : d.latest) {
    if (s.name == "vigil_gpu_process_sm_utilization_ratio") {
      sm[{Label(s, "gpu_uuid"), Label(s, "pid")}] = s.last();
    }
  }
  struct Row {
    std::string gpu, pid, user, job, comm;
    double mem;
    double sm = kNaN;
  };
  std::vector<Row> rows;
  for (const SeriesView& s : d.latest) {
    if (s.name != "vigil_gpu_process_memory_used_bytes") {
      continue;
    }
    Row r{Label(s, "gpu_index"), Label(s, "pid"), "", Label(s, "job_id"), "", s.last()};
    if (r.gpu.empty()) {
      auto it = gpus.find(Label(s, "gpu_uuid"));
      r.gpu = it == gpus.end() ? "?" : it->second.index;
    }
    if (auto it = by_pid.find(r.pid); it != by_pid.end()) {
      r.user = JsonString(*it->second, "user");
      r.comm = JsonString(*it->second, "comm");
      if (r.job.empty()) r.job = JsonString(*it->second, "job_id");
    }
    if (auto it = sm.find({Label(s, "gpu_uuid"), r.pid}); it != sm.end()) {
      r.sm = it->second;
    }
    if (auto it = job_users.find({Label(s, "gpu_uuid"), r.job});
        r.user.empty() && it != job_users.end()) {
      r.user = it->second;
    }
    rows.push_back(std::move(r));
  }
  if (rows.empty()) {
    return "";
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    switch (layout.sort) {
      case TopSort::kPid:
        return std::atoll(a.pid.c_str()) < std::atoll(b.pid.c_str());
      case TopSort::kName:
        return a.comm < b.comm;
      default:
        return a.mem > b.mem;  // No per-process CPU on a GPU: memory is the useful order.
    }
  });
  const bool narrow = layout.width > 0 && layout.width < 70;
  TextTable table({"GPU", "PID", "USER", "JOB", "GPU MEM", "SM", "COMMAND"});
  table.AlignRight(1);
  table.AlignRight(4);
  table.AlignRight(5);
  auto clip = [](std::string s, size_t n) {
    return s.empty() ? "-" : (s.size() > n ? s.substr(0, n - 1) + "+" : s);
  };
  for (size_t i = 0; i < rows.size() && i < kMaxGpuProcesses; ++i) {
    const Row& r = rows[i];
    table.AddRow({r.gpu, r.pid, clip(r.user, narrow ? 8 : 12), clip(r.job, narrow ? 14 : 24),
                  FormatBytes(r.mem), FormatPercent(r.sm), clip(r.comm, narrow ? 12 : 16)});
  }
  std::string out = "\n" + table.Render();
  if (rows.size() > kMaxGpuProcesses) {
    out += fmt::format("... and {} more\n", rows.size() - kMaxGpuProcesses);
  }
  return out;
}

}  // namespace

std::string GpuSection(const TopData& d, const TopLayout& layout) {
  std::map<std::string, Gpu> gpus;  // By gpu_uuid (or gpu_index).
  for (const SeriesView& s : d.latest) {
    if (!s.name.starts_with("vigil_gpu_") || s.name == "vigil_gpu_backend_info") {
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
    return NoGpuLine(d);
  }
  auto get = [](const Gpu& g, const char* name) {
    auto it = g.values.find(name);
    return it == g.values.end() ? kNaN : it->second;
  };
  // Narrow terminals keep the columns one acts on; FLOP/s and jobs move out first.
  const int w = layout.width;
  const bool wide = w <= 0 || w >= 100;
  const bool narrow = w > 0 && w < 70;
  std::vector<std::string> header = {"GPU", "MODEL", "UTIL", "SM", "MEMORY", "POWER", "TEMP"};
  if (narrow) {
    header = {"GPU", "UTIL", "SM", "MEMORY", "POWER", "TEMP"};
  }
  if (wide) {
    header.insert(header.end(), {"FLOP/S", "JOBS"});
  }
  TextTable table(header);
  for (size_t c = narrow ? 1 : 2; c < header.size() - (wide ? 1 : 0); ++c) {
    table.AlignRight(c);
  }
  std::vector<const Gpu*> ordered;
  for (const auto& [id, g] : gpus) {
    ordered.push_back(&g);
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const Gpu* a, const Gpu* b) { return IndexLess(a->index, b->index); });
  for (const Gpu* g : ordered) {
    const double used = get(*g, "vigil_gpu_memory_used_bytes");
    const double total = get(*g, "vigil_gpu_memory_total_bytes");
    std::string mem = std::isnan(used) ? "-" : FormatBytes(used);
    if (!std::isnan(total)) {
      mem += " / " + FormatBytes(total);
    }
    const double power = get(*g, "vigil_gpu_power_watts");
    const double temp = get(*g, "vigil_gpu_temperature_celsius");
    std::vector<std::string> cells = {g->index.empty() ? "?" : g->index};
    if (!narrow) {
      cells.push_back(g->model.empty() ? "-" : g->model);
    }
    cells.insert(cells.end(), {FormatPercent(get(*g, "vigil_gpu_utilization_ratio")),
                               FormatPercent(get(*g, "vigil_gpu_sm_active_ratio")), mem,
                               std::isnan(power) ? "-" : fmt::format("{:.0f} W", power),
                               std::isnan(temp) ? "-" : fmt::format("{:.0f} C", temp)});
    if (wide) {
      std::string jobs;
      for (const std::string& j : g->jobs) {
        jobs += (jobs.empty() ? "" : ",") + j;
      }
      cells.push_back(FormatFlops(get(*g, "vigil_gpu_flops_estimated")));
      cells.push_back(jobs.empty() ? "-" : jobs);
    }
    table.AddRow(std::move(cells));
  }
  return "\n" + table.Render() + ProcessRows(d, gpus, layout);
}

}  // namespace vigil::top
