// SPDX-License-Identifier: Apache-2.0
#include "cli/trace_wait.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "base/strings.h"
#include "base/time_util.h"
#include "cli/reply.h"

namespace vigil {
namespace {

constexpr int64_t kPollNs = 500 * kNanosPerMilli;  // Poll interval, not a fix for a race.
constexpr int64_t kProgressEveryNs = 10 * kNanosPerSecond;

bool IsFinal(const std::string& state) {
  return state == "written" || state == "failed" || state == "expired";
}

bool Pending(const HostTraceResult& r, bool retry_busy) {
  if (!r.error.empty() || r.dynolog) {
    return false;
  }
  const bool open =
      std::any_of(r.sessions.begin(), r.sessions.end(), [](const auto& s) { return !s.second; });
  return open || (retry_busy && !r.busy.empty());
}

// Whether the trace holding `b` has let it go: its state in the holding session is final, or the
// daemon forgot that session; where the caller may not see the session, whether the caller's own
// registered process (vigilTraceList) is still held by it. nullopt: cannot tell now.
std::optional<bool> Released(const CliContext& c, const BusyProcess& b,
                             std::map<std::string, StatusOr<nlohmann::json>>* seen) {
  auto it = seen->find(b.held_by);
  if (it == seen->end()) {
    it = seen->emplace(b.held_by,
                       c.Call(nlohmann::json{{"fn", "vigilTraceStatus"}, {"trace_id", b.held_by}}))
             .first;
  }
  const StatusOr<nlohmann::json>& holder = it->second;
  if (holder.ok()) {
    for (const nlohmann::json& p : JsonArray(*holder, "processes")) {
      if (p.value("pid", int64_t{0}) == b.pid) {
        return IsFinal(JsonString(p, "state"));
      }
    }
    return true;  // The holder does not hold it (any more).
  }
  const std::string& message = holder.status().message();
  if (message.find("no trace session") != std::string::npos) {
    return true;
  }
  if (message.find("permission denied") == std::string::npos) {
    return std::nullopt;  // Unreachable or busy daemon: ask again next time.
  }
  auto list = c.Call(nlohmann::json{{"fn", "vigilTraceList"}});
  if (!list.ok()) {
    return std::nullopt;
  }
  for (const nlohmann::json& p : JsonArray(*list, "processes")) {
    if (p.value("pid", int64_t{0}) == b.pid) {
      return JsonString(p, "trace_id") != b.held_by;
    }
  }
  return true;  // No longer registered: the retake will say it matched nothing.
}

// Asks for a trace of just `pids` (freed busy processes), as soon as possible: the common start
// time of the first request has passed by now.
void Retake(const CliContext& c, const TraceCliOptions& o, const std::vector<int64_t>& pids,
            HostTraceResult* r, std::vector<std::string>* progress) {
  TraceCliOptions again = o;
  if (again.profile_start_time < UnixNanos() / kNanosPerMilli + 1000) {
    again.profile_start_time = 0;
  }
  auto reply = c.Call(VigilTraceStartRequest(again, pids));
  if (!reply.ok()) {
    progress->push_back(fmt::format("{}: retrying pids {} failed (will try again): {}", r->host,
                                    fmt::join(pids, ","), reply.status().message()));
    return;
  }
  std::vector<BusyProcess> before = std::move(r->busy);
  r->busy.clear();
  for (BusyProcess& b : before) {
    if (std::find(pids.begin(), pids.end(), b.pid) == pids.end()) {
      r->busy.push_back(std::move(b));
    }
  }
  ReadVigilSession(*reply, r);
  const std::string id = JsonString(*reply, "trace_id");
  for (const nlohmann::json& p : JsonArray(*reply, "processes")) {
    progress->push_back(
        fmt::format("{}: pid {} is free; traced as {}", r->host, p.value("pid", int64_t{0}), id));
  }
  for (BusyProcess& b : ReadBusyList(*reply)) {  // Taken by yet another trace meanwhile.
    progress->push_back(fmt::format("{}: waiting again: {}", r->host,
                                    DescribeBusy(b, UnixNanos() / kNanosPerMilli)));
    r->busy.push_back(std::move(b));
  }
  r->triggered += static_cast<int64_t>(JsonArray(*reply, "processes").size());
  if (JsonArray(*reply, "processes").empty() && ReadBusyList(*reply).empty()) {
    progress->push_back(
        fmt::format("{}: pids {} no longer match (exited?)", r->host, fmt::join(pids, ",")));
  }
}

void PollHost(const CliContext& ctx, const TraceCliOptions& o, HostTraceResult* r,
              std::vector<std::string>* progress) {
  const CliContext c = TraceHostContext(ctx, r->host, ctx.TimeoutNs());
  const auto sessions = r->sessions;
  for (const auto& [id, done] : sessions) {
    if (done) {
      continue;
    }
    auto s = c.Call(nlohmann::json{{"fn", "vigilTraceStatus"}, {"trace_id", id}});
    if (s.ok()) {
      ReadVigilSession(*s, r);
    }
  }
  if (!o.retry_busy || r->busy.empty()) {
    return;
  }
  std::map<std::string, StatusOr<nlohmann::json>> seen;
  std::vector<int64_t> freed;
  for (const BusyProcess& b : r->busy) {
    if (Released(c, b, &seen).value_or(false)) {
      freed.push_back(b.pid);
    }
  }
  if (!freed.empty()) {
    Retake(c, o, freed, r, progress);
  }
}

void Print(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) {
    std::fprintf(stderr, "vigil trace: %s\n", line.c_str());
  }
}

}  // namespace

CliContext TraceHostContext(const CliContext& ctx, const std::string& host, int64_t deadline_ns) {
  CliContext c = ctx;
  if (host != ctx.Target()) {
    c.host = host;
    c.unix_socket.clear();
  }
  c.timeout = fmt::format("{}ns", std::max<int64_t>(deadline_ns, kNanosPerMilli));
  return c;
}

void ForEachTraceHost(size_t count, int parallel, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  const size_t n = std::min<size_t>(count, static_cast<size_t>(std::max(parallel, 1)));
  for (size_t w = 0; w < n; ++w) {
    workers.emplace_back([&] {
      for (size_t i = next++; i < count; i = next++) {
        fn(i);
      }
    });
  }
  for (std::thread& t : workers) {
    t.join();
  }
}

void WaitForTraces(const CliContext& ctx, const TraceCliOptions& o,
                   std::vector<HostTraceResult>* results) {
  const int64_t limit = ParseDuration(o.wait_timeout).value_or(600 * kNanosPerSecond);
  const int64_t start = MonotonicNanos();
  const int64_t deadline = start + limit;
  const std::string give_up = FormatTimestamp(UnixNanos() + limit);
  if (o.retry_busy) {
    const int64_t now_ms = UnixNanos() / kNanosPerMilli;
    for (const HostTraceResult& r : *results) {
      for (const BusyProcess& b : r.busy) {
        std::fprintf(stderr, "vigil trace: %s: waiting: %s; giving up at %s\n", r.host.c_str(),
                     DescribeBusy(b, now_ms).c_str(), give_up.c_str());
      }
    }
  }
  int64_t next_progress = start + kProgressEveryNs;
  std::vector<std::vector<std::string>> progress(results->size());
  while (true) {
    const bool pending = std::any_of(results->begin(), results->end(),
                                     [&](const auto& r) { return Pending(r, o.retry_busy); });
    if (!pending || MonotonicNanos() >= deadline) {
      break;
    }
    ForEachTraceHost(results->size(), o.parallel, [&](size_t i) {
      if (Pending((*results)[i], o.retry_busy)) {
        PollHost(ctx, o, &(*results)[i], &progress[i]);
      }
    });
    for (std::vector<std::string>& lines : progress) {
      Print(lines);
      lines.clear();
    }
    const int64_t now = MonotonicNanos();
    if (o.retry_busy && now >= next_progress) {
      size_t busy = 0;
      for (const HostTraceResult& r : *results) {
        busy += r.busy.size();
      }
      if (busy > 0) {
        std::fprintf(stderr, "vigil trace: still waiting for %zu busy process(es); %s left\n", busy,
                     FormatDuration(std::max<int64_t>(0, deadline - now)).c_str());
      }
      next_progress = now + kProgressEveryNs;
    }
    std::this_thread::sleep_for(
        std::chrono::nanoseconds(std::clamp<int64_t>(deadline - now, 0, kPollNs)));
  }
  if (o.retry_busy) {
    for (const HostTraceResult& r : *results) {
      for (const BusyProcess& b : r.busy) {
        std::fprintf(stderr, "vigil trace: %s: gave up after %s: pid %lld still busy with %s\n",
                     r.host.c_str(), o.wait_timeout.c_str(), static_cast<long long>(b.pid),
                     b.held_by.c_str());
      }
    }
  }
}

}  // namespace vigil
