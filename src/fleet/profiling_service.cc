// SPDX-License-Identifier: Apache-2.0
#include "fleet/profiling_service.h"

#include <stdio.h>

#include <algorithm>
#include <random>
#include <utility>

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "fleet/analysis_runner.h"
#include "fleet/fleet_server.h"
#include "rpc/rpc_client.h"

namespace vigil {
namespace {

using nlohmann::json;

constexpr size_t kMaxHostsPerRequest = 1024;
constexpr size_t kStartParallel = 32;

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

StatusOr<ProfilingMode> ParseProfilingMode(std::string_view text) {
  if (text == "off") return ProfilingMode::kOff;
  if (text == "manual") return ProfilingMode::kManual;
  if (text == "auto") return ProfilingMode::kAuto;
  return InvalidArgumentError("--profiling: want off, manual or auto, got " + std::string(text));
}

ProfilingService::ProfilingService(ProfilingOptions options, LedgerStore* store)
    : options_(std::move(options)), store_(store) {
  if (!options_.clock) options_.clock = &UnixNanos;
}

StatusOr<std::unique_ptr<ProfilingService>> ProfilingService::Create(ProfilingOptions options,
                                                                     LedgerStore* store) {
  if (options.trace_dir.empty()) {
    options.trace_dir = JoinPath(DirOf(store->options().path), "traces");
  }
  std::unique_ptr<ProfilingService> service(new ProfilingService(std::move(options), store));
  if (!service->options_.daemon_token_file.empty()) {
    VIGIL_ASSIGN_OR_RETURN(service->tokens_, ReadTokenFile(service->options_.daemon_token_file));
  }
  VIGIL_RETURN_IF_ERROR(MakeDirs(service->options_.trace_dir, 0750).WithContext("profiling"));
  VIGIL_RETURN_IF_ERROR(service->Load());
  ProfilingService* s = service.get();
  s->watcher_ = std::jthread([s](std::stop_token stop) { s->Watch(stop); });
  s->analyser_ = std::jthread([s](std::stop_token stop) { s->AnalyseLoop(stop); });
  return service;
}

ProfilingService::~ProfilingService() { Stop(); }

void ProfilingService::Stop() {
  for (std::jthread* t : {&watcher_, &analyser_}) {
    if (t->joinable()) {
      t->request_stop();
      cv_.notify_all();
      t->join();
    }
  }
}

std::string ProfilingService::TokenFor(const std::string& host) const {
  std::string any;
  for (const auto& [h, t] : tokens_) {
    if (h == host) return t;
    if (h == "*") any = t;
  }
  return any;
}

Status ProfilingService::Load() {
  const int64_t now = Now();
  VIGIL_ASSIGN_OR_RETURN(std::vector<ProfilingRequest> rows,
                         store_->Read<std::vector<ProfilingRequest>>(
                             [](Db& db) { return LoadProfilingRequests(db); }));
  std::lock_guard lock(mu_);
  for (ProfilingRequest& r : rows) {
    // A restart resumes what it can: collecting goes on until the deadline (the daemons retry
    // their uploads meanwhile), and an analysis the restart cut short runs again. A request
    // still starting traces cannot know which hosts started one, so it ends.
    if (r.state == "analysing") {
      to_analyse_.push_back(r.request_id);
    } else if (r.state == "starting") {
      r.error = "vigil-fleet restarted while starting the traces";
      r.state = "failed";
      r.updated_ns = now;
      PersistLocked(r);
    }
    requests_[r.request_id] = std::move(r);
  }
  return OkStatus();
}

Status ProfilingService::Persist(const ProfilingRequest& r) {
  return store_
      ->Write<int64_t>([&](Db& db) -> StatusOr<int64_t> {
        VIGIL_RETURN_IF_ERROR(SaveProfilingRequest(db, r));
        return int64_t{0};
      })
      .status();
}

void ProfilingService::PersistLocked(const ProfilingRequest& r) {
  if (Status s = Persist(r); !s.ok()) {
    VIGIL_LOG_EVERY_N_SEC(WARN, 10, "profiling: cannot save request: request_id={} err={}",
                          r.request_id, s.ToString());
  }
}

StatusOr<ProfilingRequest> ProfilingService::Create(const ProfilingRequestSpec& spec) {
  if (options_.mode == ProfilingMode::kOff) {
    return FailedPreconditionError("profiling is off (vigil-fleet serve --profiling=off)");
  }
  if (spec.job_id.empty() || spec.job_id.size() > 256) {
    return InvalidArgumentError("job_id: want a non-empty string of at most 256 bytes");
  }
  if (spec.duration_ms < 0 || spec.duration_ms > 3600000 || spec.iterations < 0 ||
      spec.iterations > 100000) {
    return InvalidArgumentError("duration_ms must be 1..3600000 and iterations 1..100000");
  }
  const int64_t now = Now();
  const int64_t recent = now - options_.host_recent_ns;
  VIGIL_ASSIGN_OR_RETURN(
      std::vector<ProfilingHost> hosts,
      store_->Read<std::vector<ProfilingHost>>([&](Db& db) -> StatusOr<std::vector<ProfilingHost>> {
        VIGIL_ASSIGN_OR_RETURN(
            Stmt st,
            db.Prepare("SELECT DISTINCT s.name, s.rpc_address FROM jobs j JOIN job_gpus jg ON"
                       " jg.job_key=j.job_key JOIN gpus g ON g.gpu_id=jg.gpu_id JOIN hosts s ON"
                       " s.host_id=g.host_id WHERE j.job_id=?1 AND j.last_seen_ns>=?2 AND"
                       " g.last_seen_ns>=?2 AND s.last_seen_ns>=?2 ORDER BY s.name"));
        st.Bind(1, spec.job_id).Bind(2, recent);
        std::vector<ProfilingHost> out;
        while (out.size() < kMaxHostsPerRequest) {
          VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
          if (!row) break;
          ProfilingHost h;
          h.host = st.Text(0);
          h.rpc_address = st.Text(1);
          out.push_back(std::move(h));
        }
        return out;
      }));
  if (hosts.empty()) {
    return NotFoundError("job " + SanitizeForLog(spec.job_id, 64) +
                         ": no host held its GPUs in the last " +
                         FormatDuration(options_.host_recent_ns));
  }
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  ProfilingRequest r;
  r.job_id = spec.job_id;
  r.reason = spec.reason.empty() ? "manual" : SanitizeForLog(spec.reason, 200);
  r.trigger = spec.trigger;
  r.iterations = spec.iterations;
  r.duration_ms = spec.iterations > 0    ? 0
                  : spec.duration_ms > 0 ? spec.duration_ms
                                         : options_.default_duration_ms;
  r.created_ns = r.updated_ns = now;
  r.deadline_ns = now + options_.collect_deadline_ns + options_.start_delay_ms * 1000000 +
                  r.duration_ms * 1000000;
  r.hosts = std::move(hosts);
  {
    std::lock_guard lock(mu_);
    r.request_id = fmt::format("prof-{}-{}-{:04x}", now / 1000000000, ++serial_,
                               static_cast<uint32_t>(rng() & 0xffff));
    r.trace_dir = JoinPath(options_.trace_dir, r.request_id);
    requests_[r.request_id] = r;
    PersistLocked(r);
    to_start_.push_back(r.request_id);
  }
  cv_.notify_all();
  VIGIL_LOG_INFO("profiling requested: request_id={} job_id={} trigger={} reason={} hosts={}",
                 r.request_id, SanitizeForLog(r.job_id), r.trigger, r.reason, r.hosts.size());
  return r;
}

// Calls vigilTraceStart on every host (in parallel, each call bounded by its deadline).
void ProfilingService::StartTraces(const std::string& request_id) {
  ProfilingRequest r;
  {
    std::lock_guard lock(mu_);
    auto it = requests_.find(request_id);
    if (it == requests_.end()) return;
    r = it->second;
  }
  const int64_t start_ms = Now() / 1000000 + options_.start_delay_ms;
  json call{{"fn", "vigilTraceStart"},
            {"job_id", r.job_id},
            {"reason", "vigil-fleet profiling " + r.request_id + ": " + r.reason},
            {"upload", {{"request_id", r.request_id}}}};
  if (r.iterations > 0) {
    call["iterations"] = r.iterations;
  } else {
    call["duration_ms"] = r.duration_ms;
    call["profile_start_time"] = start_ms;
  }
  auto start_one = [&](ProfilingHost& h) {
    if (h.rpc_address.empty()) {
      h.state = "failed";
      h.error = "its daemon reports no control RPC address (vigild too old or RPC off)";
      return;
    }
    json req = call;
    if (const std::string token = TokenFor(h.host); !token.empty()) req["token"] = token;
    StatusOr<RpcClient> client = RpcClient::Connect(h.rpc_address, options_.rpc_deadline_ns);
    StatusOr<json> reply =
        client.ok() ? client->Call(req, options_.rpc_deadline_ns) : StatusOr<json>(client.status());
    if (!reply.ok()) {
      h.state = "failed";
      h.error = reply.status().ToString();
    } else if (!reply->is_object() || reply->contains("error")) {
      h.state = "failed";
      h.error = reply->is_object() ? reply->value("error", "") : "reply is not an object";
    } else {
      h.trace_id = reply->value("trace_id", "");
      h.expected_files = reply->value("triggered", int64_t{0});
      h.state = h.expected_files > 0 ? "tracing" : "no_processes";
      if (h.expected_files == 0) {
        const json& why = (*reply)["why_nothing_matched"];
        h.error = why.is_object() ? why.value("reason", "") : "no process of the job matched";
      }
    }
  };
  for (size_t at = 0; at < r.hosts.size(); at += kStartParallel) {
    std::vector<std::thread> threads;
    for (size_t i = at; i < std::min(r.hosts.size(), at + kStartParallel); ++i) {
      threads.emplace_back([&, i] { start_one(r.hosts[i]); });
    }
    for (std::thread& t : threads) t.join();
  }
  const int64_t now = Now();
  std::lock_guard lock(mu_);
  auto it = requests_.find(request_id);
  if (it == requests_.end()) return;
  ProfilingRequest& live = it->second;
  live.hosts = r.hosts;
  live.updated_ns = now;
  if (live.state == "starting") {
    live.state = "collecting";
    if (live.ExpectedFiles() == 0) {
      live.state = "failed";
      live.error = "no host started a trace of a process of the job";
    }
  }
  for (const ProfilingHost& h : live.hosts) {
    VIGIL_LOG_INFO("profiling host: request_id={} host={} state={} trace_id={} expected={} err={}",
                   request_id, h.host, h.state, h.trace_id, h.expected_files, h.error);
  }
  MaybeFinishCollectingLocked(&live, now);
  PersistLocked(live);
  cv_.notify_all();
}

void ProfilingService::MaybeFinishCollectingLocked(ProfilingRequest* r, int64_t now) {
  if (r->state != "collecting") return;
  const int64_t expected = r->ExpectedFiles();
  const bool all_in = static_cast<int64_t>(r->files.size()) >= expected;
  if (!all_in && now < r->deadline_ns) return;
  if (r->files.empty()) {
    r->state = "failed";
    r->error = "no trace file arrived by the deadline";
  } else if (to_analyse_.size() >= options_.max_queued_analyses) {
    r->state = "failed";
    r->error = "analysis queue full";
  } else {
    if (!all_in) {
      r->error = fmt::format("{} of {} files arrived by the deadline; analysing those",
                             r->files.size(), expected);
    }
    r->state = "analysing";
    to_analyse_.push_back(r->request_id);
    cv_.notify_all();
  }
  r->updated_ns = now;
}

void ProfilingService::Watch(std::stop_token stop) {
  while (!stop.stop_requested()) {
    std::string start;
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, stop, std::chrono::nanoseconds(options_.check_every_ns),
                   [this] { return !to_start_.empty(); });
      if (stop.stop_requested()) return;
      if (!to_start_.empty()) {
        start = to_start_.front();
        to_start_.pop_front();
      }
      const int64_t now = Now();
      for (auto& [id, r] : requests_) {
        if (r.state == "collecting" && now >= r.deadline_ns) {
          MaybeFinishCollectingLocked(&r, now);
          PersistLocked(r);
          cv_.notify_all();
        }
      }
    }
    if (!start.empty()) StartTraces(start);
  }
}

void ProfilingService::AnalyseLoop(std::stop_token stop) {
  while (!stop.stop_requested()) {
    std::string id;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, stop, [this] { return !to_analyse_.empty(); });
      if (stop.stop_requested()) return;
      id = to_analyse_.front();
      to_analyse_.pop_front();
    }
    Analyse(id);
  }
}

void ProfilingService::Analyse(const std::string& request_id) {
  ProfilingRequest r;
  {
    std::lock_guard lock(mu_);
    r = requests_[request_id];
  }
  // In a child process: a trace that crashes or hangs the analyser fails this request only.
  AnalysisRun run;
  run.vigil_binary = options_.vigil_binary;
  run.input = r.trace_dir;
  run.json_path = JoinPath(options_.trace_dir, r.request_id + ".report.json");
  run.threads = options_.analysis_threads;
  run.timeout_ns = options_.analysis_timeout_ns;
  const Status ran = RunAnalysisChild(run);
  std::string error = ran.ok() ? "" : ran.ToString();
  int64_t analysis_id = 0;
  if (ran.ok()) {
    StatusOr<std::string> report = ReadSmallFile(run.json_path, 256 << 20);
    if (!report.ok()) {
      error = report.status().ToString();
    } else if (!options_.store_analysis) {
      error = "no analysis store configured";
    } else {
      std::string hosts;
      for (const ProfilingHost& h : r.hosts) {
        if (h.expected_files == 0 || hosts.size() > 200) continue;
        hosts += (hosts.empty() ? "" : ",") + h.host;
      }
      AnalysisUpload upload{r.job_id,    hosts, kAnalysisSourceProfiling, r.reason,
                            r.trace_dir, Now(), std::move(*report)};
      StatusOr<int64_t> id = options_.store_analysis(upload);
      if (id.ok()) {
        analysis_id = *id;
        error.clear();
      } else {
        error = "storing the analysis failed: " + id.status().ToString();
      }
    }
  }
  std::lock_guard lock(mu_);
  ProfilingRequest& live = requests_[request_id];
  live.updated_ns = Now();
  if (analysis_id > 0) {
    live.state = "analysed";
    live.analysis_id = analysis_id;
  } else {
    live.state = "failed";
    live.error = SanitizeForLog(error, 500);
  }
  VIGIL_LOG_INFO("profiling done: request_id={} state={} analysis_id={} err={}", request_id,
                 live.state, analysis_id, live.error);
  PersistLocked(live);
  cv_.notify_all();
}

StatusOr<ProfilingRequest> ProfilingService::Get(const std::string& request_id) const {
  std::lock_guard lock(mu_);
  auto it = requests_.find(request_id);
  if (it == requests_.end()) {
    return NotFoundError("no profiling request " + SanitizeForLog(request_id, 64));
  }
  return it->second;
}

std::vector<ProfilingRequest> ProfilingService::List(const std::string& job_id,
                                                     size_t limit) const {
  std::lock_guard lock(mu_);
  std::vector<const ProfilingRequest*> all;
  for (const auto& [id, r] : requests_) {
    if (job_id.empty() || r.job_id == job_id) all.push_back(&r);
  }
  std::sort(all.begin(), all.end(), [](const ProfilingRequest* a, const ProfilingRequest* b) {
    return a->created_ns != b->created_ns ? a->created_ns > b->created_ns
                                          : a->request_id > b->request_id;
  });
  std::vector<ProfilingRequest> out;
  for (size_t i = 0; i < all.size() && i < limit; ++i) out.push_back(*all[i]);
  return out;
}

int64_t ProfilingService::CountAuto(int64_t since_ns) const {
  std::lock_guard lock(mu_);
  return std::count_if(requests_.begin(), requests_.end(), [&](const auto& kv) {
    return kv.second.trigger == "auto" && kv.second.created_ns >= since_ns;
  });
}

bool ProfilingService::EverProfiled(const std::string& job_id) const {
  std::lock_guard lock(mu_);
  return std::any_of(requests_.begin(), requests_.end(),
                     [&](const auto& kv) { return kv.second.job_id == job_id; });
}

bool ProfilingService::WaitIdle(int64_t timeout_ns) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, std::chrono::nanoseconds(timeout_ns), [this] {
    return std::all_of(requests_.begin(), requests_.end(),
                       [](const auto& kv) { return kv.second.Terminal(); });
  });
}

}  // namespace vigil
