// SPDX-License-Identifier: Apache-2.0
// Fleet-wide profiling as a service (docs/fleet.md "Profiling as a service"). A request names a
// job; the service finds the job's hosts in the ledger (jobs -> job_gpus -> gpus -> hosts, seen
// recently, each with the control RPC address its daemon reports), asks every host's vigild for
// a trace with vigilTraceStart and an upload request (docs/protocols.md "Trace sessions"),
// receives the files the daemons upload (POST /api/v1/traces, profiling_routes.h) under
// <trace_dir>/<request_id>/<host>-<pid>[-rank<K>].json.gz, and once every expected file is in or
// the collection deadline passed, runs the analyser (`vigil analyze`, trace/analyze_main.h) over
// them on its one analysis thread and stores the report through the store callback
// (fleet/analysis_store.h StoreAnalysis, source "profiling"). Hosts that fail are recorded; the
// others proceed. Requests, their per-host states and files persist in the ledger's table
// profiling_requests, so a restart shows the history.
// Owner: fleet. Thread-safe: HTTP handlers call Create/AcceptUpload/List from httplib's pool;
// one thread of its own starts traces and watches deadlines, another analyses.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "fleet/analysis_store.h"
#include "fleet/ledger_store.h"
#include "fleet/profiling_request.h"

namespace vigil {

enum class ProfilingMode { kOff, kManual, kAuto };
StatusOr<ProfilingMode> ParseProfilingMode(std::string_view text);

using StoreAnalysisFn = std::function<StatusOr<int64_t>(const AnalysisUpload&)>;

// What a daemon says of a trace it took without a request (docs/protocols.md "Trace upload").
struct DaemonTrace {
  std::string host, trace_id, job_id;
  int64_t expected_files = 0;  // Processes it traced.
  std::string origin;          // "auto:<policy>"
  std::string reason;
};

struct ProfilingOptions {
  ProfilingMode mode = ProfilingMode::kManual;
  std::string trace_dir;  // Where uploads go ("" = var/traces beside the ledger file).
  // Lines "HOST TOKEN" / "* TOKEN": the control token each daemon expects ("" = send none).
  std::string daemon_token_file;
  int64_t rpc_deadline_ns = int64_t{10} * 1000000000;       // Each vigilTraceStart call.
  int64_t collect_deadline_ns = int64_t{600} * 1000000000;  // Start -> analyse what came.
  int64_t host_recent_ns = int64_t{900} * 1000000000;       // Hosts seen this recently.
  int64_t default_duration_ms = 2000;
  int64_t start_delay_ms = 3000;     // One PROFILE_START_TIME for all hosts, this far ahead.
  size_t max_file_bytes = 64 << 20;  // One upload, compressed.
  size_t max_files = 4096;           // Per request.
  size_t max_queued_analyses = 16;
  int analysis_threads = 2;
  std::string vigil_binary;  // Runs the analyses ("" = the vigil beside vigil-fleet).
  int64_t analysis_timeout_ns = 600LL * 1000000000;
  int64_t check_every_ns = 500000000;  // How often deadlines are looked at.
  StoreAnalysisFn store_analysis;      // Required for results to be kept.
  std::function<int64_t()> clock;      // Unix ns; defaults to UnixNanos.
};

struct ProfilingRequestSpec {
  std::string job_id;
  int64_t duration_ms = 0;  // 0 = default (unless iterations > 0).
  int64_t iterations = 0;
  std::string reason;
  std::string trigger = "manual";  // "manual" or "auto".
};

class ProfilingService {
 public:
  // Reads the token file, creates the trace directory, loads the history (requests a restart
  // interrupted are marked failed) and starts the threads.
  static StatusOr<std::unique_ptr<ProfilingService>> Create(ProfilingOptions options,
                                                            LedgerStore* store);
  ~ProfilingService();
  ProfilingService(const ProfilingService&) = delete;
  ProfilingService& operator=(const ProfilingService&) = delete;

  // Records the request and starts the traces in the background. FailedPrecondition when
  // profiling is off, NotFound when the job has no recent host in the ledger.
  StatusOr<ProfilingRequest> Create(const ProfilingRequestSpec& spec);
  // One uploaded file (gzip bytes). NotFound for an unknown request; FailedPrecondition when it
  // no longer collects or `host` is not one of its hosts; ResourceExhausted over the caps.
  // A trace a daemon took on its own (an automatic policy) and uploads: the request that will
  // collect its `expected_files` files and analyse them, created on the first file and found
  // again by (host, trace_id) on the next ones. Returns its id; InvalidArgument for bad fields.
  StatusOr<std::string> AdoptDaemonTrace(const DaemonTrace& trace);
  StatusOr<ProfilingFile> AcceptUpload(const std::string& request_id, const std::string& host,
                                       int32_t pid, int32_t rank, const std::string& trace_id,
                                       std::string_view gzip_body);
  StatusOr<ProfilingRequest> Get(const std::string& request_id) const;
  // Newest first, at most `limit`; `job_id` "" = all.
  std::vector<ProfilingRequest> List(const std::string& job_id, size_t limit) const;
  // Automatic requests created at or after `since_ns` (the trigger's budget), and whether a job
  // was ever profiled.
  int64_t CountAuto(int64_t since_ns) const;
  bool EverProfiled(const std::string& job_id) const;
  ProfilingMode mode() const { return options_.mode; }
  LedgerStore* store() const { return store_; }
  const ProfilingOptions& options() const { return options_; }
  // Waits until no request is in a non-terminal state (tests), at most timeout_ns.
  bool WaitIdle(int64_t timeout_ns);
  void Stop();

 private:
  ProfilingService(ProfilingOptions options, LedgerStore* store);
  Status Load();
  Status Persist(const ProfilingRequest& r);
  void PersistLocked(const ProfilingRequest& r);
  void StartTraces(const std::string& request_id);
  void Watch(std::stop_token stop);
  void AnalyseLoop(std::stop_token stop);
  void Analyse(const std::string& request_id);
  void MaybeFinishCollectingLocked(ProfilingRequest* r, int64_t now);
  std::string TokenFor(const std::string& host) const;
  int64_t Now() const { return options_.clock(); }

  ProfilingOptions options_;
  LedgerStore* const store_;
  std::multimap<std::string, std::string> tokens_;

  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::map<std::string, ProfilingRequest> requests_;
  std::deque<std::string> to_start_;
  std::deque<std::string> to_analyse_;
  uint64_t serial_ = 0;
  std::jthread watcher_;
  std::jthread analyser_;  // Last two: started once every member exists.
};

}  // namespace vigil
