// SPDX-License-Identifier: Apache-2.0
#include "daemon/daemon.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "attribution/job_resolver.h"
#include "base/file_util.h"
#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "base/version.h"
#include "base/wait_for.h"
#include "collectors/all_collectors.h"
#include "collectors/cgroup/cgroup_collector.h"
#include "collectors/collector_context.h"
#include "collectors/daemon_self_collector.h"
#include "collectors/ipc_fabric_collector.h"
#include "collectors/perf_pmu_collector.h"
#include "collectors/process/process_collector.h"
#include "collectors/watch_list.h"
#include "daemon/api.h"
#include "daemon/continuous_profiler.h"
#include "daemon/gpu_methods.h"
#include "daemon/host_info.h"
#include "daemon/http_server.h"
#include "daemon/profile_methods.h"
#include "daemon/scheduler.h"
#include "daemon/seccomp_filter.h"
#include "daemon/signals.h"
#include "daemon/tracing_stack.h"
#include "gpu/gpu_backend.h"
#include "metrics/prometheus_text.h"
#include "metrics/series_store.h"
#include "rpc/dispatcher.h"
#include "rpc/net_util.h"
#include "rpc/rpc_server.h"
#include "sinks/all_sinks.h"

namespace vigil::daemon {
namespace {

// A process seen holding a GPU within this long still belongs to its job (as the API lists it).
constexpr int64_t kWatchedProcessTtlNs = 300 * kNanosPerSecond;

std::vector<std::string_view> KnownCollectorNames() {
  std::vector<std::string_view> names;
  for (const CollectorInfo* info : AllCollectors()) {
    names.push_back(info->name);
  }
  return names;
}

void ApplyLogging(const DaemonConfig& config) {
  LogLevel level = LogLevel::kInfo;
  ParseLogLevel(config.log_level, &level);
  InitLogging(level, config.log_format == "json");
}

// Everything the daemon owns, in construction order (destroyed in reverse).
class Daemon {
 public:
  explicit Daemon(DaemonConfig config) : config_(std::move(config)) {}

  int Main();

 private:
  Status Prepare();
  CollectorContext MakeCollectorContext();
  void AddCollectors();
  Status StartServing();
  void Reload();
  void Shutdown();

  DaemonConfig config_;
  std::unique_ptr<SignalWatcher> signals_;
  SeriesStore store_;
  std::shared_ptr<WatchList> watch_list_ = std::make_shared<WatchList>();
  std::shared_ptr<JobResolver> resolver_;
  std::unique_ptr<TracingStack> tracing_;         // Outlives the scheduler and the RPC server.
  std::unique_ptr<ContinuousProfiler> profiler_;  // Null unless --profile.continuous.
  std::vector<std::unique_ptr<Sink>> sinks_;
  std::unique_ptr<Scheduler> scheduler_;
  DaemonView view_;
  RpcDispatcher dispatcher_;
  std::unique_ptr<RpcServer> rpc_;
  std::unique_ptr<HttpServer> http_;

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_requested_ = false;
};

// Each collector's own options struct, from the daemon's config; the daemon's own state reaches
// the daemon_self and ipc_fabric collectors through the callbacks in theirs.
CollectorContext Daemon::MakeCollectorContext() {
  CollectorContext context;
  context.paths.proc_root = config_.proc_root;
  context.paths.sys_root = config_.sys_root;
  context.watch_list = watch_list_;
  context.resolver = resolver_;
  context.SetOptions(ProcessCollectorOptions{.patterns = config_.process_patterns});
  context.SetOptions(CgroupCollectorOptions{.patterns = config_.cgroup_patterns});
  GpuBackendOptions gpu;
  gpu.backend = config_.gpu_backend;
  gpu.nvml_library = config_.nvml_library;
  gpu.dcgm_address = config_.dcgm_address;
  gpu.dcgm_embedded = config_.dcgm_embedded;
  context.SetOptions(std::move(gpu));
  PerfPmuCollector::Options pmu;
  pmu.events = config_.pmu_events;
  pmu.cgroups = config_.pmu_cgroups;
  context.SetOptions(std::move(pmu));
  if (config_.once) {
    return context;  // daemon_self and ipc_fabric are absent: the output is the host alone.
  }
  DaemonSelfCollectorOptions self;
  self.store_stats = [this] { return store_.stats(); };
  self.sink_drops = [this] {
    std::vector<SinkDrops> drops;
    for (const auto& sink : sinks_) {
      drops.push_back({std::string(sink->name()), sink->health().dropped});
    }
    return drops;
  };
  self.start_unix_ns = view_.start_unix_ns;
  self.rpc_address = [this] { return AdvertisedRpcAddress(view_.endpoints.rpc, view_.hostname); };
  context.SetOptions(std::move(self));
  if (tracing_) {
    context.SetOptions(IpcFabricCollectorOptions{
        .collect = [this](MetricWriter& out) { return tracing_->CollectMetrics(out); }});
  }
  return context;
}

void Daemon::AddCollectors() {
  const CollectorContext context = MakeCollectorContext();
  for (const CollectorInfo* info : AllCollectors()) {
    scheduler_->Add(
        std::string(info->name),
        [info, context]() -> std::unique_ptr<Collector> {
          return info->create ? info->create(context) : nullptr;
        },
        CollectorInterval(config_, info->name),
        CollectorEnabled(config_, info->name, info->enabled_by_default));
  }
}

Status Daemon::Prepare() {
  view_.start_unix_ns = UnixNanos();
  view_.pid = static_cast<int>(getpid());
  view_.hostname = config_.host_name.empty() ? HostName() : config_.host_name;
  view_.user = UserName(geteuid());
  view_.proc_root = config_.proc_root;
  view_.store = &store_;
  view_.watch_list = watch_list_;

  JobResolverOptions resolver_options;
  resolver_options.proc_root = config_.proc_root;
  resolver_options.env_allow_list = config_.env_allow_list;
  resolver_options.mapping_file = config_.mapping_file;
  resolver_options.kubelet_configured = !config_.kubelet_socket.empty();
  if (config_.seccomp) {  // The allow-list forbids starting programs; vigild would stop.
    resolver_options.slurm.scontrol = "";
    resolver_options.slurm.off_reason =
        "scontrol cannot run under vigild's system-call allow-list (--seccomp=false allows it)";
  }
  if (resolver_options.kubelet_configured) {
    resolver_options.kubelet.socket_path =
        config_.kubelet_socket == "off" ? "" : config_.kubelet_socket;
  }
  resolver_ = std::make_shared<JobResolver>(resolver_options);
  if (!config_.mapping_file.empty()) {
    VIGIL_RETURN_IF_ERROR(resolver_->LoadMapping().WithContext("mapping_file"));
  }
  view_.resolver = resolver_;

  if (!config_.once) {
    const SinkContext context{
        .host_name = view_.hostname,
        .state_dir = config_.state_dir.empty() ? DefaultStateDir() : config_.state_dir};
    for (const SinkInfo* info : AllSinks()) {
      StatusOr<std::unique_ptr<Sink>> sink = info->create(config_, context);
      if (!sink.ok()) {
        return sink.status().WithContext(info->name);
      }
      if (*sink) {
        sinks_.push_back(std::move(*sink));
      }
    }
  }
  for (const auto& sink : sinks_) {
    view_.sinks.push_back(sink.get());
  }

  scheduler_ = std::make_unique<Scheduler>(&SystemClock(), [this](BatchPtr batch) {
    store_.Append(*batch);
    for (const auto& sink : sinks_) {
      sink->Consume(batch);
    }
  });
  view_.scheduler = scheduler_.get();
  if (!config_.once) {
    tracing_ = std::make_unique<TracingStack>(config_, resolver_, watch_list_, &store_);
    view_.trace_uploads = [this] { return tracing_->UploadStatusJson(); };
    view_.registered_processes = [this] { return tracing_->RegisteredProcessesJson(); };
    if (config_.profile.continuous) {
      ContinuousProfilerOptions profiler_options;
      profiler_options.frequency_hz = static_cast<int>(config_.profile.frequency_hz);
      profiler_options.window_ns = config_.profile.window_ns;
      profiler_options.keep = static_cast<size_t>(config_.profile.keep);
      profiler_options.cpu_budget = config_.profile.cpu_budget;
      profiler_options.proc_root = config_.proc_root;
      profiler_ = std::make_unique<ContinuousProfiler>(profiler_options, watch_list_, resolver_);
      profiler_->SetUploader(MakeProfileUploader(config_.fleet_url, view_.hostname,
                                                 config_.fleet_token_file, config_.fleet_ca_file));
      view_.profiler = profiler_.get();
      scheduler_->Add(
          "continuous_profile", [this] { return profiler_->MakeCollector(); }, config_.interval_ns,
          true);
    }
  }
  AddCollectors();
  return OkStatus();
}

Status Daemon::StartServing() {
  std::string token;
  if (!config_.token_file.empty()) {
    VIGIL_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(config_.token_file, 4096));
    token = std::string(Trim(text));
    if (token.empty()) {
      return InvalidArgumentError("token file " + config_.token_file + " is empty");
    }
  }
  if (!config_.rpc_listen.empty()) {
    VIGIL_ASSIGN_OR_RETURN(bool loopback, IsLoopbackListenAddress(config_.rpc_listen));
    if (!loopback && token.empty()) {
      return FailedPreconditionError(
          "refusing to listen for control RPC on " + config_.rpc_listen +
          " without --token-file: anyone who can reach it could start traces on this host");
    }
    if (!loopback) {
      VIGIL_LOG_WARN("REMOTE CONTROL ENABLED: control RPC listens on {} (token required)",
                     config_.rpc_listen);
    }
  }
  VIGIL_ASSIGN_OR_RETURN(bool http_loopback, IsLoopbackListenAddress(config_.http_listen));
  if (!http_loopback) {
    VIGIL_LOG_WARN(
        "http listens beyond loopback on {}: /metrics and /api/v1 are read-only and "
        "unauthenticated",
        config_.http_listen);
  }

  const std::string unix_path =
      config_.unix_socket.empty() ? DefaultUnixSocketPath() : config_.unix_socket;
  if (unix_path != "-") {
    const size_t slash = unix_path.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      const std::string dir = unix_path.substr(0, slash);
      const bool private_dir = dir.rfind("/tmp/", 0) == 0;
      Status made = MakeDirs(dir, private_dir ? 0700 : 0755);
      if (!made.ok()) {
        VIGIL_LOG_WARN("cannot create unix socket directory: dir={} err={}", dir, made.message());
      }
      // A fallback directory under /tmp that someone else made could hand them our socket.
      struct stat st {};
      if (private_dir && made.ok() && stat(dir.c_str(), &st) == 0 &&
          (st.st_uid != geteuid() || (st.st_mode & 0022) != 0)) {
        return FailedPreconditionError("unix socket directory " + dir +
                                       " is not private to this user; remove it or pass "
                                       "--unix-socket PATH");
      }
    }
  }

  RegisterDaemonMethods(&view_, &dispatcher_);
  RegisterGpuMethods(&dispatcher_);
  // A job's processes: those holding GPUs (the watch list) that resolve to it, and those
  // registered with it over the IPC fabric.
  RegisterProfileMethods(&dispatcher_, [this](const std::string& job_id) {
    std::set<int> pids;
    for (const WatchList::Entry& e : watch_list_->Snapshot(UnixNanos(), kWatchedProcessTtlNs)) {
      auto info = resolver_->Resolve(e.pid);
      if (info.ok() && info->job_id == job_id) pids.insert(e.pid);
    }
    if (tracing_) {
      for (int pid : tracing_->RegisteredPidsOfJob(job_id)) pids.insert(pid);
    }
    return std::vector<int>(pids.begin(), pids.end());
  });
  tracing_->RegisterMethods(&dispatcher_);
  if (Status root = tracing_->OpenTraceRoot(); !root.ok()) {
    VIGIL_LOG_ERROR("traces are refused until the trace root is fixed: {}", root.message());
    view_.static_reduced_features.push_back("traces: " + root.message() +
                                            " (every trace request is refused)");
  }
  if (Status ipc = tracing_->Start(); !ipc.ok()) {
    VIGIL_LOG_WARN("tracing of PyTorch jobs is off: {}", ipc.message());
    view_.static_reduced_features.push_back("ipc: " + ipc.message() +
                                            " (on-demand Kineto traces unavailable)");
  }
  RpcServerOptions rpc_options;
  rpc_options.tcp_listen = config_.rpc_listen;
  rpc_options.unix_path = unix_path == "-" ? std::string() : unix_path;
  rpc_options.token = token;
  rpc_options.proc_root = config_.proc_root;  // Socket tables: the uid of loopback TCP callers.
  rpc_ = std::make_unique<RpcServer>(rpc_options, &dispatcher_);
  VIGIL_RETURN_IF_ERROR(rpc_->Start().WithContext("rpc"));
  if (!config_.rpc_listen.empty()) {
    VIGIL_ASSIGN_OR_RETURN(HostPort rpc_hp, ParseHostPort(config_.rpc_listen));
    view_.endpoints.rpc = FormatHostPort(rpc_hp.host, rpc_->tcp_port());
  }
  view_.endpoints.unix_socket = rpc_options.unix_path;

  VIGIL_ASSIGN_OR_RETURN(HostPort http_hp, ParseHostPort(config_.http_listen));
  HttpServerOptions http_options;
  http_options.host = http_hp.host;
  http_options.port = http_hp.port;
  http_ = std::make_unique<HttpServer>(http_options, MakeHttpApi(&view_));
  VIGIL_RETURN_IF_ERROR(http_->Start());
  view_.endpoints.http = FormatHostPort(http_hp.host, http_->port());
  return OkStatus();
}

void Daemon::Reload() {
  if (config_.config_file.empty()) {
    VIGIL_LOG_INFO("SIGHUP: no --config file; reloading the mapping file only");
  }
  const std::vector<std::string_view> known = KnownCollectorNames();
  auto next = LoadConfig(config_.config_file, config_.overrides, known);
  if (!next.ok()) {
    VIGIL_LOG_ERROR("reload failed, keeping the running config: err={}", next.status().message());
    return;
  }
  for (const std::string& change : DescribeChanges(config_, *next)) {
    VIGIL_LOG_INFO("reload: {}", change);
  }
  if (next->mapping_file != config_.mapping_file) {
    VIGIL_LOG_WARN("reload: a new mapping_file path takes a restart; reloading {}",
                   config_.mapping_file);
    next->mapping_file = config_.mapping_file;
  }
  for (const CollectorInfo* info : AllCollectors()) {
    Status s = scheduler_->Configure(info->name, CollectorInterval(*next, info->name),
                                     CollectorEnabled(*next, info->name, info->enabled_by_default));
    s.IgnoreError();  // Every AllCollectors() entry was added at start.
  }
  if (!config_.mapping_file.empty()) {
    Status s = resolver_->LoadMapping();
    if (s.ok()) {
      VIGIL_LOG_INFO("reload: mapping file reloaded: path={}", config_.mapping_file);
    } else {
      VIGIL_LOG_ERROR("reload: mapping file kept: err={}", s.message());
    }
  }
  ApplyLogging(*next);
  config_ = std::move(*next);
}

void Daemon::Shutdown() {
  view_.stopping = true;
  if (http_) {
    http_->Stop();
  }
  if (rpc_) {
    rpc_->Stop();  // Removes the unix socket file.
  }
  if (tracing_) {
    tracing_->Stop();
  }
  if (profiler_) {
    profiler_->Stop();  // Ends the window being sampled.
  }
  if (scheduler_) {
    scheduler_->Stop();
  }
  for (const auto& sink : sinks_) {
    sink->Stop();  // Flushes what was queued.
  }
  if (signals_) {
    signals_->Stop();
  }
}

int Daemon::Main() {
  ApplyLogging(config_);
  if (!config_.once) {
    signals_ = std::make_unique<SignalWatcher>();  // Before any thread starts.
  }
  if (Status s = Prepare(); !s.ok()) {
    VIGIL_LOG_ERROR("vigild cannot start: {}", s.message());
    return 1;
  }
  if (config_.once) {
    scheduler_->RunAllOnce();
    const std::string text = RenderPrometheusText(store_.Latest(SeriesSelector{}));
    fwrite(text.data(), 1, text.size(), stdout);
    fflush(stdout);
    return 0;
  }
  view_.static_reduced_features = StaticReducedFeatures(config_, KnownCollectorNames());
  Status s = signals_->Start(
      [this](int signo) {
        VIGIL_LOG_INFO("signal {}: stopping", signo);
        std::lock_guard lock(stop_mu_);
        stop_requested_ = true;
        stop_cv_.notify_all();
      },
      [this] {
        std::lock_guard lock(stop_mu_);
        if (!stop_requested_) {
          Reload();
        }
      });
  if (s.ok()) {
    s = StartServing();
  }
  if (!s.ok()) {
    VIGIL_LOG_ERROR("vigild cannot start: {}", s.message());
    Shutdown();
    return 1;
  }
  scheduler_->Start();
  if (config_.seccomp) {
    // After the first pass: the GPU backend (vendor code, dlopened) is loaded by then.
    WaitFor([this] { return scheduler_->last_pass_unix_ns() != 0; }, 60,
            std::chrono::milliseconds(10));
    const bool allow_bpf = CollectorEnabled(config_, "bpf_cuda", false);
    if (Status filter = InstallSeccompFilter(allow_bpf); !filter.ok()) {
      VIGIL_LOG_ERROR("vigild cannot start: {}", filter.message());
      Shutdown();
      return 1;
    }
  }
  if (profiler_) {
    profiler_->Start();  // Under the seccomp filter, as every other thread.
  }
  VIGIL_LOG_INFO("vigild {} ready: http=http://{}/metrics rpc={} unix={} pid={} user={}", kVersion,
                 view_.endpoints.http, view_.endpoints.rpc, view_.endpoints.unix_socket, view_.pid,
                 view_.user);
  for (const std::string& feature : view_.static_reduced_features) {
    VIGIL_LOG_INFO("reduced feature: {}", feature);
  }
  {
    std::unique_lock lock(stop_mu_);
    stop_cv_.wait(lock, [this] { return stop_requested_; });
  }
  Shutdown();
  VIGIL_LOG_INFO("vigild stopped");
  return 0;
}

}  // namespace

int Run(const DaemonConfig& config) {
  Daemon daemon(config);
  return daemon.Main();
}

}  // namespace vigil::daemon
