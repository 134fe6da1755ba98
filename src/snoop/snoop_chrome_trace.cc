// SPDX-License-Identifier: Apache-2.0
#include "snoop/snoop_chrome_trace.h"

#include <cinttypes>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"

namespace vigil::snoop {
namespace {

// A JSON string literal; invalid UTF-8 from the target's names is replaced, never fatal.
std::string Quote(std::string_view text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Nanoseconds as microseconds with three decimals, exactly (no double on the way).
std::string Micros(int64_t ns) {
  const bool negative = ns < 0;
  const uint64_t abs = negative ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  return fmt::format("{}{}.{:03}", negative ? "-" : "", abs / 1000, abs % 1000);
}

void AppendEvent(const RawEvent& e, std::string* out) {
  fmt::format_to(std::back_inserter(*out),
                 R"({{"ph":"X","cat":"{}","name":{},"pid":{},"tid":{},"ts":{},"dur":{},"args":{{)",
                 ApiGroupCategory(e.group), Quote(e.api), e.pid, e.tid, Micros(e.start_unix_ns),
                 Micros(e.duration_ns < 0 ? 0 : e.duration_ns));
  fmt::format_to(std::back_inserter(*out), R"("layer":"{}")", ApiLayer(e.api));
  if (!e.kernel.empty()) {
    fmt::format_to(std::back_inserter(*out), R"(,"kernel":{})", Quote(e.kernel));
  }
  if (e.bytes != 0 || e.group == ApiGroup::kCopy || e.group == ApiGroup::kAlloc) {
    fmt::format_to(std::back_inserter(*out), R"(,"bytes":{})", e.bytes);
  }
  if (!e.copy_kind.empty()) {
    fmt::format_to(std::back_inserter(*out), R"(,"kind":{})", Quote(e.copy_kind));
  }
  if (e.address != 0) {
    fmt::format_to(std::back_inserter(*out), R"(,"address":"0x{:x}")", e.address);
  }
  out->append("}}");
}

}  // namespace

std::string_view ApiGroupCategory(ApiGroup group) {
  switch (group) {
    case ApiGroup::kLaunch:
      return "cuda_launch";
    case ApiGroup::kGraphLaunch:
      return "cuda_graph_launch";
    case ApiGroup::kSync:
      return "cuda_sync";
    case ApiGroup::kAlloc:
      return "cuda_alloc";
    case ApiGroup::kFree:
      return "cuda_free";
    case ApiGroup::kCopy:
      return "cuda_memcpy";
    case ApiGroup::kOther:
      return "cuda_api";
  }
  return "cuda_api";
}

std::string_view ApiLayer(std::string_view api) {
  if (api.starts_with("cuda")) {
    return "runtime";
  }
  if (api.starts_with("cu")) {
    return "driver";
  }
  return "framework";
}

std::string RenderSnoopChromeTrace(std::span<const RawEvent> events,
                                   const SessionSummary& summary) {
  std::map<int, std::string> commands;
  for (const ProcessSummary& p : summary.processes) {
    commands[p.pid] = p.command;
  }
  std::set<int> pids;
  std::set<std::pair<int, int>> threads;
  for (const RawEvent& e : events) {
    pids.insert(e.pid);
    threads.insert({e.pid, e.tid});
  }
  std::string out = R"({"displayTimeUnit":"ns","traceEvents":[)";
  out.reserve(out.size() + events.size() * 160 + pids.size() * 100);
  bool first = true;
  auto separate = [&] {
    if (!first) {
      out += ",\n";
    } else {
      out += "\n";
    }
    first = false;
  };
  for (int pid : pids) {
    auto it = commands.find(pid);
    const std::string name = it != commands.end() && !it->second.empty()
                                 ? fmt::format("CUDA calls: {} ({})", it->second, pid)
                                 : fmt::format("CUDA calls: pid {}", pid);
    separate();
    fmt::format_to(std::back_inserter(out),
                   R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})",
                   pid, Quote(name));
  }
  for (const auto& [pid, tid] : threads) {
    separate();
    fmt::format_to(
        std::back_inserter(out),
        R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"thread {}"}}}})", pid,
        tid, tid);
  }
  for (const RawEvent& e : events) {
    separate();
    AppendEvent(e, &out);
  }
  out += "\n]}\n";
  return out;
}

Status WriteSnoopChromeTrace(std::span<const RawEvent> events, const SessionSummary& summary,
                             const std::string& path) {
  return WriteFileAtomic(path, RenderSnoopChromeTrace(events, summary));
}

}  // namespace vigil::snoop
