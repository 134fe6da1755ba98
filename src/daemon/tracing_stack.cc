// SPDX-License-Identifier: Apache-2.0
#include "daemon/tracing_stack.h"

#include <stdlib.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>

#include "base/file_util.h"
#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "daemon/host_info.h"
#include "ipc/trace_rpc.h"

namespace vigil::daemon {
namespace {

constexpr int64_t kTickNs = kNanosPerSecond;
constexpr int64_t kUtilisationEveryNs = 10 * kNanosPerSecond;

AutoTraceOptions ToAutoTraceOptions(const AutoTraceConfig& c) {
  AutoTraceOptions o;
  o.periodic = c.periodic;
  o.periodic_every_ns = c.periodic_every_ns;
  o.low_utilisation = c.low_utilization;
  o.low_utilisation_below = c.low_utilization_below;
  o.low_utilisation_for_ns = c.low_utilization_for_ns;
  o.max_traces_per_hour = static_cast<int>(c.max_traces_per_hour);
  o.duration_ms = c.duration_ms;
  return o;
}

}  // namespace

TracingStack::TracingStack(const DaemonConfig& config, std::shared_ptr<JobResolver> resolver,
                           std::shared_ptr<WatchList> watch_list, const SeriesStore* store)
    : config_(config), watch_list_(std::move(watch_list)), store_(store) {
  ProcessRegistryOptions ro;
  ro.proc_root = config.proc_root;
  if (resolver) {
    ro.settle_claim = [resolver](int32_t pid, const JobInfo& claim) {
      return resolver->SettleClaim(pid, claim);
    };
  }
  registry_ = std::make_unique<ProcessRegistry>(ro, &MonotonicNanos);
  TraceServiceOptions to;
  to.trace_root = config.trace_root;
  to.proc_root = config.proc_root;
  traces_ = std::make_unique<TraceService>(to, registry_.get());
  job_metrics_ = std::make_unique<JobMetrics>(&MonotonicNanos);
  fabric_ = std::make_unique<FabricServer>(registry_.get(), job_metrics_.get());
  if (config.auto_trace.periodic || config.auto_trace.low_utilization) {
    auto rng = std::make_shared<std::mt19937_64>(std::random_device{}());
    auto_tracer_ =
        std::make_unique<AutoTracer>(ToAutoTraceOptions(config.auto_trace), traces_.get(),
                                     &MonotonicNanos, [rng] { return (*rng)(); });
  }
  if (!config.fleet_url.empty() && !config.once) {
    TraceUploaderOptions uo;
    uo.url = config.fleet_url;
    uo.host = config.host_name.empty() ? HostName() : config.host_name;
    uo.ca_file = config.fleet_ca_file;
    if (!config.fleet_token_file.empty()) {
      StatusOr<std::string> token = ReadSmallFile(config.fleet_token_file, 4096);
      uo.token = token.ok() ? std::string(Trim(*token)) : std::string();
    }
    StatusOr<std::unique_ptr<TraceUploader>> uploader = TraceUploader::Create(uo);
    if (uploader.ok()) {
      uploader_ = std::move(*uploader);
    } else {
      VIGIL_LOG_WARN("trace upload is off: {}", uploader.status().message());
    }
  }
}

TracingStack::~TracingStack() { Stop(); }

void TracingStack::RegisterMethods(RpcDispatcher* dispatcher) {
  RegisterTraceMethods(dispatcher, traces_.get());
}

Status TracingStack::Start() {
  FabricServerOptions fo;
  fo.ipc_name = config_.ipc_name;
  if (const char* dir = getenv("KINETO_IPC_SOCKET_DIR"); dir != nullptr && dir[0] != '\0') {
    fo.socket_dir = dir;
  }
  ticker_ = std::jthread([this](std::stop_token stop) { Loop(stop); });
  return fabric_->Start(fo).WithContext("ipc fabric '" + config_.ipc_name + "'");
}

Status TracingStack::OpenTraceRoot() { return traces_->OpenRoot(); }

void TracingStack::Stop() {
  if (ticker_.joinable()) {
    ticker_.request_stop();
    ticker_.join();
  }
  fabric_->Stop();
  if (uploader_) {
    uploader_->Stop();
  }
}

nlohmann::json TracingStack::RegisteredProcessesJson() const {
  nlohmann::json list = nlohmann::json::array();
  const int64_t now = registry_->Now();
  for (const RegisteredProcess& p : registry_->Snapshot()) {
    list.push_back(
        {{"pid", p.host_pid},
         {"ns_pid", p.pid},
         {"uid", p.uid},
         {"job_id", p.job_id},
         {"source", p.source},
         {"trace_id", p.trace_id},
         {"last_poll_s", static_cast<double>(std::max<int64_t>(now - p.last_seen_ns, 0)) / 1e9}});
  }
  return list;
}

std::vector<int> TracingStack::RegisteredPidsOfJob(const std::string& job_id) const {
  std::vector<int> pids;
  for (const RegisteredProcess& p : registry_->Match(job_id, {})) pids.push_back(p.host_pid);
  return pids;
}

nlohmann::json TracingStack::UploadStatusJson() const {
  return uploader_ ? uploader_->StatusJson() : nlohmann::json(nullptr);
}

// Every process of an upload-requested session whose file is written goes to the uploader once,
// and so does every process of a session an automatic policy took (auto_trace.upload).
void TracingStack::QueueUploads() {
  std::set<std::pair<std::string, int32_t>> live;
  for (const TraceSession& s : traces_->List()) {
    const bool own = s.origin.starts_with("auto:") && config_.auto_trace.upload;
    if (s.upload_request_id.empty() && !own) {
      continue;
    }
    for (const TraceProcess& p : s.processes) {
      std::pair<std::string, int32_t> key{s.trace_id, p.host_pid};
      live.insert(key);
      if (p.state != TraceState::kWritten || queued_uploads_.count(key) != 0) {
        continue;
      }
      queued_uploads_.insert(key);
      TraceUpload u;
      u.request_id = s.upload_request_id;
      u.trace_id = s.trace_id;
      u.job_id = p.job_id.empty() ? s.job_id : p.job_id;
      u.path = p.watch_path.empty() ? p.path : p.watch_path;
      u.file = p.file;
      u.pid = p.pid;
      if (u.request_id.empty()) {
        u.origin = s.origin;
        u.reason = s.reason;
        // The processes that have written or may still write a file.
        u.expected_files = std::count_if(s.processes.begin(), s.processes.end(), [](const auto& q) {
          return q.state != TraceState::kFailed && q.state != TraceState::kExpired;
        });
      }
      uploader_->Enqueue(std::move(u));
    }
  }
  // Forget sessions the trace service no longer keeps.
  std::erase_if(queued_uploads_, [&](const auto& key) { return live.count(key) == 0; });
}

Status TracingStack::CollectMetrics(MetricWriter& out) {
  Status fabric = fabric_->Collect(out);
  Status jobs = job_metrics_->Collect(out);
  return fabric.ok() ? jobs : fabric;
}

void TracingStack::Loop(std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  int64_t last_feed = 0;
  while (!stop.stop_requested()) {
    traces_->Tick();
    if (uploader_) {
      QueueUploads();
    }
    const int64_t now = MonotonicNanos();
    if (watch_list_) {
      const int64_t unix_now = UnixNanos();
      for (const RegisteredProcess& p : registry_->Snapshot()) {
        watch_list_->Watch(p.host_pid, "ipc", unix_now);
      }
    }
    if (auto_tracer_) {
      if (now - last_feed >= kUtilisationEveryNs) {
        FeedUtilisation();
        last_feed = now;
      }
      for (const TraceSession& s : auto_tracer_->Tick()) {
        VIGIL_LOG_INFO("automatic trace started: trace_id={} job_id={} reason={}", s.trace_id,
                       s.job_id, s.reason);
      }
    }
    std::unique_lock lock(mu);
    cv.wait_for(lock, stop, std::chrono::nanoseconds(kTickNs), [] { return false; });
  }
}

// Per job, the mean SM activity (else utilisation) of the GPUs it holds now.
void TracingStack::FeedUtilisation() {
  if (store_ == nullptr) {
    return;
  }
  const int64_t max_age = 3 * std::max<int64_t>(config_.interval_ns, kNanosPerSecond);
  std::map<std::string, double> gpu_ratio;
  for (const char* name : {"vigil_gpu_utilization_ratio", "vigil_gpu_sm_active_ratio"}) {
    SeriesSelector sel;
    sel.name = name;
    for (const SeriesData& s : store_->Latest(sel, max_age)) {
      if (!s.points.empty()) {  // SM activity, read second, wins where both exist.
        gpu_ratio[std::string(LabelValue(s.labels, "gpu_uuid"))] = s.points.back().value;
      }
    }
  }
  SeriesSelector held;
  held.name = "vigil_gpu_allocated_seconds_total";
  std::map<std::string, std::pair<double, int>> per_job;
  for (const SeriesData& s : store_->Latest(held, max_age)) {
    const std::string job(LabelValue(s.labels, "job_id"));
    auto it = gpu_ratio.find(std::string(LabelValue(s.labels, "gpu_uuid")));
    if (job.empty() || it == gpu_ratio.end()) {
      continue;
    }
    per_job[job].first += it->second;
    per_job[job].second += 1;
  }
  for (const auto& [job, sum] : per_job) {
    auto_tracer_->ObserveUtilisation(job, sum.first / sum.second);
  }
}

}  // namespace vigil::daemon
