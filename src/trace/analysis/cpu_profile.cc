// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/cpu_profile.h"

#include <algorithm>

#include <simdjson.h>

#include "base/file_util.h"

namespace vigil::trace {
namespace {

constexpr size_t kMaxProfileBytes = size_t{1} << 30;
constexpr size_t kTop = 10;

std::vector<CpuFunction> Top(std::vector<CpuFunction> all, bool by_self) {
  std::sort(all.begin(), all.end(), [&](const CpuFunction& a, const CpuFunction& b) {
    const uint64_t x = by_self ? a.self : a.total, y = by_self ? b.self : b.total;
    return x != y ? x > y : a.label < b.label;
  });
  std::erase_if(all, [&](const CpuFunction& f) { return (by_self ? f.self : f.total) == 0; });
  if (all.size() > kTop) all.resize(kTop);
  return all;
}

}  // namespace

StatusOr<std::shared_ptr<const CpuProfileInput>> LoadCpuProfile(const std::string& path) {
  auto text = ReadSmallFile(path, kMaxProfileBytes);
  if (!text.ok()) return text.status();
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(*text).get(root) != simdjson::SUCCESS) {
    return InvalidArgumentError(path + ": not valid JSON");
  }
  auto p = std::make_shared<CpuProfileInput>();
  p->path = path;
  simdjson::dom::array frames, stacks;
  if (root["frames"].get_array().get(frames) != simdjson::SUCCESS ||
      root["stacks"].get_array().get(stacks) != simdjson::SUCCESS) {
    return InvalidArgumentError(path +
                                ": not a CPU profile (vigil profile --json): no frames and "
                                "stacks");
  }
  std::string_view event;
  if (root["event"].get_string().get(event) == simdjson::SUCCESS) p->event = std::string(event);
  int64_t v = 0;
  if (root["frequency_hz"].get_int64().get(v) == simdjson::SUCCESS) p->frequency_hz = int(v);
  if (root["start_unix_ns"].get_int64().get(v) == simdjson::SUCCESS) p->start_unix_ns = v;
  if (root["duration_ns"].get_int64().get(v) == simdjson::SUCCESS) p->duration_ns = v;
  uint64_t u = 0;
  if (root["python_samples"].get_uint64().get(u) == simdjson::SUCCESS) p->python_samples = u;
  if (root["gil_samples"].get_uint64().get(u) == simdjson::SUCCESS) p->gil_samples = u;
  simdjson::dom::array pids;
  if (root["pids"].get_array().get(pids) == simdjson::SUCCESS) {
    for (simdjson::dom::element pid : pids) {
      if (pid.get_int64().get(v) == simdjson::SUCCESS) p->pids.push_back(v);
    }
  }
  for (simdjson::dom::element f : frames) {
    std::string_view label, kind;
    if (f["label"].get_string().get(label) != simdjson::SUCCESS) {
      return InvalidArgumentError(path + ": a frame without a label");
    }
    p->labels.emplace_back(label);
    p->is_process.push_back(f["kind"].get_string().get(kind) == simdjson::SUCCESS &&
                            kind == "process");
  }
  for (simdjson::dom::element s : stacks) {
    CpuProfileInput::Stack stack;
    simdjson::dom::array ids;
    if (s["frames"].get_array().get(ids) != simdjson::SUCCESS ||
        s["count"].get_uint64().get(stack.count) != simdjson::SUCCESS) {
      return InvalidArgumentError(path + ": a stack without frames or count");
    }
    for (simdjson::dom::element id : ids) {
      uint64_t i = 0;
      if (id.get_uint64().get(i) != simdjson::SUCCESS || i >= p->labels.size()) {
        return InvalidArgumentError(path + ": a stack names a frame that does not exist");
      }
      stack.frames.push_back(static_cast<uint32_t>(i));
    }
    p->total_samples += stack.count;
    p->stacks.push_back(std::move(stack));
  }
  return std::shared_ptr<const CpuProfileInput>(std::move(p));
}

CpuProfileSummary SummarizeCpuProfile(const CpuProfileInput& p, const RankTrace& t) {
  CpuProfileSummary out;
  out.computed = true;
  out.path = p.path;
  out.event = p.event;
  out.frequency_hz = p.frequency_hz;
  out.samples = p.total_samples;
  out.python_samples = p.python_samples;
  out.gil_samples = p.gil_samples;
  out.profile_seconds = static_cast<double>(p.duration_ns) / 1e9;
  out.trace_seconds = static_cast<double>(t.links.last_end - t.links.first_ts) / 1e9;
  // The trace on Unix time: Kineto's clock is Unix time minus baseTimeNanoseconds (0 when the
  // trace has none: then its timestamps are Unix time already).
  if (p.start_unix_ns > 0 && t.links.last_end > t.links.first_ts) {
    const int64_t from = t.meta.base_time_ns + t.links.first_ts;
    const int64_t to = t.meta.base_time_ns + t.links.last_end;
    const int64_t a = std::max(from, p.start_unix_ns);
    const int64_t b = std::min(to, p.start_unix_ns + p.duration_ns);
    out.overlap_seconds = b > a ? static_cast<double>(b - a) / 1e9 : 0.0;
  }
  std::vector<CpuFunction> functions(p.labels.size());
  std::vector<uint64_t> seen(p.labels.size(), UINT64_MAX);  // last stack that counted the frame
  for (size_t i = 0; i < p.labels.size(); ++i) functions[i].label = p.labels[i];
  for (size_t s = 0; s < p.stacks.size(); ++s) {
    const CpuProfileInput::Stack& stack = p.stacks[s];
    if (stack.frames.empty()) continue;
    functions[stack.frames.back()].self += stack.count;
    for (uint32_t f : stack.frames) {
      if (seen[f] == s) continue;  // recursion: once per stack
      seen[f] = s;
      functions[f].total += stack.count;
    }
  }
  std::vector<CpuFunction> callable;
  for (size_t i = 0; i < functions.size(); ++i) {
    if (!p.is_process[i]) callable.push_back(functions[i]);
  }
  out.top_self = Top(callable, true);
  out.top_total = Top(std::move(callable), false);
  return out;
}

}  // namespace vigil::trace
