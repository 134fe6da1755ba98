// SPDX-License-Identifier: Apache-2.0
#include "daemon/api.h"

#include <sys/stat.h>

#include <algorithm>

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "base/version.h"
#include "daemon/api_time.h"
#include "daemon/series_json.h"
#include "metrics/prometheus_text.h"

namespace vigil::daemon {
namespace {

constexpr int64_t kProcessTtlNs = 300 * kNanosPerSecond;
constexpr int64_t kDefaultRangeNs = 300 * kNanosPerSecond;

nlohmann::json ErrorJson(const Status& s) { return nlohmann::json{{"error", s.message()}}; }

nlohmann::json OrError(const StatusOr<nlohmann::json>& reply) {
  return reply.ok() ? *reply : ErrorJson(reply.status());
}

// An optional integer field in [0, INT64_MAX]: floats (1e300), strings and negatives are refused.
StatusOr<int64_t> JsonTime(const nlohmann::json& request, const char* key, int64_t fallback) {
  auto it = request.find(key);
  if (it == request.end() || it->is_null()) {
    return fallback;
  }
  if (!it->is_number_integer() ||
      (it->is_number_unsigned() && it->get<uint64_t>() > uint64_t{INT64_MAX}) ||
      it->get<int64_t>() < 0) {
    return InvalidArgumentError(
        fmt::format("{} must be an integer number of nanoseconds in [0, 2^63), got {}", key,
                    SanitizeForLog(it->dump(), 40)));
  }
  return it->get<int64_t>();
}

StatusOr<std::string> JsonSelector(const nlohmann::json& request) {
  auto it = request.find("selector");
  if (it == request.end() || it->is_null()) {
    return std::string();
  }
  if (!it->is_string()) {
    return InvalidArgumentError("selector must be a string");
  }
  return it->get<std::string>();
}

StatusOr<nlohmann::json> RangeQuery(const DaemonView& view, const nlohmann::json& request) {
  VIGIL_ASSIGN_OR_RETURN(std::string selector, JsonSelector(request));
  VIGIL_ASSIGN_OR_RETURN(int64_t end, JsonTime(request, "end_ns", UnixNanos()));
  VIGIL_ASSIGN_OR_RETURN(
      int64_t start, JsonTime(request, "start_ns", std::max<int64_t>(end - kDefaultRangeNs, 0)));
  VIGIL_ASSIGN_OR_RETURN(int64_t step, JsonTime(request, "step_ns", 0));
  if (start > end) {
    return InvalidArgumentError("start_ns is after end_ns");
  }
  VIGIL_RETURN_IF_ERROR(CheckRangeWork(start, end, step));
  return QueryRange(*view.store, selector, start, end, step);
}

// The uid owning <proc>/<pid>; -1 when the process is gone.
int ProcessUid(const std::string& proc_root, int pid) {
  struct stat st {};
  if (stat(JoinPath(proc_root, std::to_string(pid)).c_str(), &st) != 0) {
    return -1;
  }
  return static_cast<int>(st.st_uid);
}

// vigilStatus for `caller`: uploads of other users' processes (ids, paths) only when privileged.
nlohmann::json StatusFor(const DaemonView& view, const CallerInfo& caller) {
  nlohmann::json status = StatusJson(view);
  if (!CallerIsPrivileged(caller) && status.contains("registered_processes")) {
    nlohmann::json own = nlohmann::json::array();  // Other users' processes only when privileged.
    for (const auto& p : status["registered_processes"]) {
      if (CallerMayTouchUid(caller, p.value("uid", -1))) own.push_back(p);
    }
    status["registered_processes"] = std::move(own);
  }
  auto uploads = status.find("trace_uploads");
  if (CallerIsPrivileged(caller) || uploads == status.end() || !uploads->contains("recent")) {
    return status;
  }
  nlohmann::json own = nlohmann::json::array();
  for (const auto& u : (*uploads)["recent"]) {
    if (CallerMayTouchUid(caller, ProcessUid(view.proc_root, u.value("pid", 0)))) {
      own.push_back(u);
    }
  }
  (*uploads)["recent"] = std::move(own);
  return status;
}

}  // namespace

std::vector<std::string> ReducedFeatures(const DaemonView& view) {
  std::vector<std::string> out = view.static_reduced_features;
  if (view.resolver) {
    // Job attribution degraded to cgroup paths (kubelet socket missing, scontrol absent).
    for (std::string& line : view.resolver->Degradations()) out.push_back(std::move(line));
  }
  if (view.scheduler != nullptr) {
    for (const CollectorHealth& h : view.scheduler->Health()) {
      // Absent for want of permission, or absent in part: a collector that still wrote samples
      // (perf_pmu without a hardware PMU counts software events) runs with reduced features.
      if (h.state == CollectorState::kAbsent &&
          (h.code == StatusCode::kPermissionDenied || h.samples > 0)) {
        out.push_back("collector " + h.name + ": " + h.message);
      }
    }
  }
  // A sink whose spool or buffer fell back to memory (unwritable state dir, disk full) still
  // delivers, but loses what it holds on a restart: said here too, not only in its sink row.
  for (const Sink* sink : view.sinks) {
    const SinkHealth h = sink->health();
    if (!h.reduced.empty()) {
      out.push_back("sink " + std::string(sink->name()) + ": " + h.reduced);
    }
  }
  return out;
}

nlohmann::json StatusJson(const DaemonView& view) {
  nlohmann::json collectors = nlohmann::json::array();
  if (view.scheduler != nullptr) {
    for (const CollectorHealth& h : view.scheduler->Health()) {
      // The wire knows ok|absent|failed|disabled: before its first run a collector is "ok" with
      // last_run_unix_ns 0 and a message saying so.
      const bool pending = h.state == CollectorState::kPending;
      collectors.push_back({{"name", h.name},
                            {"state", pending ? "ok" : CollectorStateName(h.state)},
                            {"message", pending ? "waiting for the first run" : h.message},
                            {"interval_s", static_cast<double>(h.interval_ns) / 1e9},
                            {"last_run_unix_ns", h.last_run_unix_ns},
                            {"duration_s", h.duration_s},
                            {"samples", h.samples}});
    }
  }
  nlohmann::json sinks = nlohmann::json::array();
  for (const Sink* sink : view.sinks) {
    const SinkHealth h = sink->health();
    sinks.push_back({{"name", sink->name()},
                     {"state", SinkStateName(h.state)},
                     {"message", h.message},
                     {"dropped", h.dropped},
                     {"at_risk_bytes", h.at_risk_bytes},
                     {"sent_samples", h.sent_samples},
                     {"dropped_samples", h.dropped_samples},
                     {"buffered", h.buffered}});
  }
  SeriesStoreStats stats;
  if (view.store != nullptr) {
    stats = view.store->stats();
  }
  nlohmann::json uploads = view.trace_uploads ? view.trace_uploads() : nlohmann::json(nullptr);
  nlohmann::json out{
      {"version", kVersion},
      {"hostname", view.hostname},
      {"pid", view.pid},
      {"uptime_s", static_cast<double>(UnixNanos() - view.start_unix_ns) / 1e9},
      {"user", view.user},
      {"reduced_features", ReducedFeatures(view)},
      {"collectors", std::move(collectors)},
      {"sinks", std::move(sinks)},
      {"store",
       {{"series", stats.series},
        {"raw_points", stats.raw_points},
        {"downsampled_points", stats.downsampled_points},
        {"bytes", stats.bytes},
        {"dropped_series", stats.dropped_series}}},
      {"endpoints",
       {{"rpc", view.endpoints.rpc},
        {"unix", view.endpoints.unix_socket},
        {"http", view.endpoints.http}}},
  };
  if (!uploads.is_null()) {
    out["trace_uploads"] = std::move(uploads);
  }
  if (view.registered_processes) {
    out["registered_processes"] = view.registered_processes();
  }
  out["continuous_profile"] =
      view.profiler ? view.profiler->StatusJson() : nlohmann::json{{"enabled", false}};
  return out;
}

nlohmann::json ProcessesJson(const DaemonView& view, const CallerInfo* caller) {
  nlohmann::json list = nlohmann::json::array();
  if (view.watch_list) {
    for (const WatchList::Entry& e : view.watch_list->Snapshot(UnixNanos(), kProcessTtlNs)) {
      if (caller != nullptr && !CallerMayTouchUid(*caller, ProcessUid(view.proc_root, e.pid))) {
        continue;  // Other users' processes only for privileged callers.
      }
      const std::string pid_dir = JoinPath(view.proc_root, std::to_string(e.pid));
      auto comm = ReadSmallFile(JoinPath(pid_dir, "comm"), 4096);
      JobInfo info;
      if (view.resolver) {
        auto resolved = view.resolver->Resolve(e.pid);
        if (resolved.ok()) {
          info = *resolved;
        }
      }
      list.push_back({{"pid", e.pid},
                      {"comm", comm.ok() ? std::string(Trim(*comm)) : std::string()},
                      {"reason", e.reason},
                      {"job_id", info.job_id},
                      {"user", info.user},
                      {"team", info.team},
                      {"model", info.model},
                      {"framework", info.framework},
                      {"rule", info.rule},
                      {"cgroup", info.cgroup}});
    }
  }
  return nlohmann::json{{"processes", std::move(list)}};
}

Status CheckHealth(const DaemonView& view) {
  if (view.stopping.load()) {
    return UnavailableError("stopping");
  }
  if (view.scheduler == nullptr) {
    return UnavailableError("starting: no scheduler");
  }
  const int64_t last = view.scheduler->last_pass_unix_ns();
  if (last == 0) {
    return UnavailableError("starting: first collection not done");
  }
  const int64_t tick = std::min<int64_t>(
      std::max<int64_t>(view.scheduler->min_interval_ns(), kNanosPerSecond), 60 * kNanosPerSecond);
  const int64_t age = UnixNanos() - last;
  if (age > 3 * tick + 10 * kNanosPerSecond) {
    return UnavailableError("collection stalled: last pass " + FormatDuration(age) + " ago");
  }
  return OkStatus();
}

int64_t LatestMaxAge(const DaemonView& view) {
  const int64_t longest = view.scheduler ? view.scheduler->max_interval_ns() : 0;
  return 2 * std::max<int64_t>(longest, kNanosPerSecond) + 5 * kNanosPerSecond;
}

std::string MetricsText(const DaemonView& view) {
  return RenderStoreAsPrometheusText(*view.store, LatestMaxAge(view));
}

void RegisterDaemonMethods(const DaemonView* view, RpcDispatcher* dispatcher) {
  // Dynolog's own answers, byte for byte, so `dyno status` / `dyno version` work against vigild.
  dispatcher->Register("getStatus", [](const nlohmann::json&, const CallerInfo&) {
    return nlohmann::json{{"status", 1}};
  });
  dispatcher->Register("getVersion", [](const nlohmann::json&, const CallerInfo&) {
    return nlohmann::json{{"version", kVersion}};
  });
  dispatcher->Register("vigilStatus", [view](const nlohmann::json&, const CallerInfo& caller) {
    return StatusFor(*view, caller);
  });
  // Queries and /proc walks grow with the data: the RPC server runs them off its event loop.
  dispatcher->Register(
      "vigilLatest",
      [view](const nlohmann::json& request, const CallerInfo&) {
        StatusOr<std::string> selector = JsonSelector(request);
        if (!selector.ok()) {
          return ErrorJson(selector.status());
        }
        return OrError(QueryLatest(*view->store, *selector, LatestMaxAge(*view)));
      },
      RpcAccess::kRead, RpcCost::kHeavy);
  dispatcher->Register(
      "vigilRange",
      [view](const nlohmann::json& request, const CallerInfo&) {
        return OrError(RangeQuery(*view, request));
      },
      RpcAccess::kRead, RpcCost::kHeavy);
  dispatcher->Register(
      "vigilProcesses",
      [view](const nlohmann::json&, const CallerInfo& caller) {
        return ProcessesJson(*view, &caller);
      },
      RpcAccess::kRead, RpcCost::kHeavy);
}

HttpApi MakeHttpApi(const DaemonView* view) {
  HttpApi api;
  api.host_name = view->hostname;
  api.metrics_text = [view] { return MetricsText(*view); };
  api.latest = [view](const std::string& selector) {
    return QueryLatest(*view->store, selector, LatestMaxAge(*view));
  };
  api.range = [view](const std::string& selector, int64_t start, int64_t end, int64_t step) {
    return QueryRange(*view->store, selector, start, end, step);
  };
  api.status = [view] { return StatusJson(*view); };
  api.health = [view] { return CheckHealth(*view); };
  if (view->profiler != nullptr) {
    const ContinuousProfiler* profiler = view->profiler;
    api.profiles = [profiler] { return profiler->ListJson(); };
    api.profile = [profiler](const std::string& job,
                             const std::string& format) -> StatusOr<HttpContent> {
      VIGIL_ASSIGN_OR_RETURN(RenderedProfile rendered,
                             RenderRollingProfile(profiler->profiles(), job, format));
      return HttpContent{.content_type = std::move(rendered.content_type),
                         .body = std::move(rendered.body),
                         .filename = std::move(rendered.filename)};
    };
  }
  return api;
}

}  // namespace vigil::daemon
