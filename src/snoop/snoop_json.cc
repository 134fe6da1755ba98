// SPDX-License-Identifier: Apache-2.0
#include "snoop/snoop_json.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "snoop/framework_gap.h"

namespace vigil::snoop {
namespace {

using Json = nlohmann::ordered_json;

Json StackJson(const CallStack& stack) {
  Json frames = Json::array();
  for (const std::string& frame : stack.frames) {
    frames.push_back(frame);
  }
  return frames;
}

Json MemoryJson(const MemoryView& m) {
  Json leaks = Json::array();
  for (const LeakGroup& leak : m.leaks) {
    leaks.push_back({{"bytes", leak.bytes},
                     {"count", leak.count},
                     {"api", leak.api},
                     {"stack", StackJson(leak.stack)}});
  }
  Json histogram = Json::array();
  for (const SizeBucket& bucket : m.size_histogram) {
    histogram.push_back({{"upper_bytes", bucket.upper_bytes}, {"count", bucket.count}});
  }
  Json by_device = Json::array();
  for (const DeviceMemory& d : m.by_device) {
    by_device.push_back({{"device", d.device},
                         {"outstanding_bytes", d.outstanding_bytes},
                         {"peak_bytes", d.peak_bytes},
                         {"allocations", d.allocations},
                         {"frees", d.frees}});
  }
  return {{"allocations", m.allocations},
          {"frees", m.frees},
          {"outstanding_bytes", m.outstanding_bytes},
          {"peak_bytes", m.peak_bytes},
          {"leaks", std::move(leaks)},
          {"size_histogram", std::move(histogram)},
          {"mapped_bytes", m.mapped_bytes},
          {"host_outstanding_bytes", m.host_outstanding_bytes},
          {"host_peak_bytes", m.host_peak_bytes},
          {"by_device", std::move(by_device)}};
}

Json ProcessJson(const ProcessSummary& p) {
  Json kernels = Json::array();
  for (const KernelLaunches& k : p.launches_by_kernel) {
    kernels.push_back({{"name", k.name}, {"count", k.count}});
  }
  Json by_api = Json::array();
  for (const ApiCalls& a : p.syncs_by_api) {
    Json buckets = Json::array();
    for (const DurationBucket& b : a.histogram) {
      buckets.push_back({{"upper_ns", b.upper_ns}, {"count", b.count}});
    }
    by_api.push_back({{"api", a.api},
                      {"count", a.count},
                      {"seconds", a.seconds},
                      {"histogram", std::move(buckets)}});
  }
  Json by_stack = Json::array();
  for (const SyncStack& s : p.syncs_by_stack) {
    by_stack.push_back({{"api", s.api},
                        {"count", s.count},
                        {"seconds", s.seconds},
                        {"stack", StackJson(s.stack)}});
  }
  Json copies = Json::array();
  for (const CopyKind& c : p.copies) {
    copies.push_back({{"kind", c.kind}, {"count", c.count}, {"bytes", c.bytes}});
  }
  Json out = {
      {"pid", p.pid},
      {"command", p.command},
      {"libraries", p.libraries},
      {"exited", p.exited},
      {"python", p.python.empty() ? Json(nullptr) : Json(p.python)},
      {"launches",
       {{"total", p.launches_total},
        {"graph_launches", p.graph_launches},
        {"by_kernel", std::move(kernels)}}},
      {"syncs",
       {{"count", p.syncs_count},
        {"seconds", p.syncs_seconds},
        {"by_api", std::move(by_api)},
        {"by_stack", std::move(by_stack)}}},
      {"memory", MemoryJson(p.memory)},
      {"framework_memory", nullptr},
      {"framework_gap_bytes", nullptr},
      {"framework_gap_by_device", nullptr},
      {"copies", std::move(copies)},
  };
  if (p.has_framework_memory) {
    out["framework_memory"] = MemoryJson(p.framework_memory);
    out["framework_gap_bytes"] = FrameworkGapBytes(p);
    Json gaps = Json::array();
    for (const DeviceGap& g : FrameworkGapByDevice(p)) {
      gaps.push_back({{"device", g.device}, {"bytes", g.bytes}});
    }
    out["framework_gap_by_device"] = std::move(gaps);
  }
  return out;
}

}  // namespace

std::string RenderSnoopJson(const SessionSummary& summary) {
  Json processes = Json::array();
  for (const ProcessSummary& p : summary.processes) {
    processes.push_back(ProcessJson(p));
  }
  Json doc = {
      {"schema", kSnoopJsonSchema},
      {"duration_seconds", summary.duration_seconds},
      {"sampled", summary.sampled},
      {"sample_ratio", summary.sample_ratio},
      {"events_seen", summary.events_seen},
      {"events_dropped", summary.events_dropped},
      {"python_frames", summary.python_frames},
      {"warnings", summary.warnings},
      {"processes", std::move(processes)},
  };
  // Replace, not throw, on invalid UTF-8 (a kernel or frame name is bytes from the target).
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

Status WriteSnoopJson(const SessionSummary& summary, const std::string& path) {
  const std::string text = RenderSnoopJson(summary);
  if (path == "-") {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) {
      return InternalError("write --json to stdout: short write");
    }
    return OkStatus();
  }
  return WriteFileAtomic(path, text);
}

}  // namespace vigil::snoop
