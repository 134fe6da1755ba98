// SPDX-License-Identifier: Apache-2.0
// What `vigil trace` knows of each host: the options it was given, the sessions the host's
// daemon started (a host can hold several: the first request and, with --retry-busy, one per
// retake of a process that was busy), each process's state and file, the processes another trace
// holds and until when, and why nothing matched. Read from vigild's replies (docs/protocols.md,
// "Trace sessions"); rendered as the table or the JSON the command prints, and turned into its
// exit code. Owner: cli. Not thread-safe: one HostTraceResult per worker.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace vigil {

struct TraceCliOptions {
  std::string job_id;
  std::string pids = "0";
  int64_t duration_ms = 500;
  int64_t iterations = -1;
  std::string log_file;
  int64_t profile_start_time = 0;
  int64_t profile_start_iteration_roundup = 1;
  int process_limit = 3;
  bool record_shapes = false, profile_memory = false, with_stacks = false, with_flops = false,
       with_modules = false;
  std::string hosts, hostfile, slurm_job;
  int parallel = 64;
  int64_t start_delay_ms = 0;
  bool wait = false;
  bool retry_busy = false;  // With --wait: wait for busy processes, then trace them.
  std::string wait_timeout = "10m";
  std::string reason;
  bool fail_on_no_process = false;
  bool json = false;
  std::string cpu_profile_path;  // --with-cpu-profile
};

struct ProcessOutcome {
  int64_t pid = 0;
  std::string state;  // vigild's state, or "triggered"/"busy" for Dynolog.
  std::string path;
  int64_t size_bytes = -1;
  std::string reason;
  std::string trace_id;  // The session it belongs to ("" for Dynolog).
};

// A matched process another trace holds (vigild's `busy` entry and its `holder`).
struct BusyProcess {
  int64_t pid = 0;
  std::string held_by;
  std::string origin;
  std::string requested_by;          // "" when the daemon does not say.
  std::string reason;                // Why the holder was taken, when shown.
  int64_t expected_end_unix_ms = 0;  // 0 when unknown (iteration-based).
  int64_t gives_up_at_unix_ms = 0;   // The daemon frees the process by then at the latest.
};

struct HostTraceResult {
  std::string host;
  bool reached = false;
  bool dynolog = false;  // Answered through setKinetOnDemandRequest only.
  std::string error;
  std::string trace_id;                                // The first session.
  std::vector<std::pair<std::string, bool>> sessions;  // (trace id, done), first one first.
  std::string log_file;
  std::string log_note;
  int64_t matched = 0;
  int64_t triggered = 0;
  int64_t busy_count = 0;  // Dynolog's activityProfilersBusy (it names no pids).
  bool done = false;
  std::vector<ProcessOutcome> processes;
  std::vector<BusyProcess> busy;        // Held by another trace, not (yet) retaken.
  std::string why_nothing;              // vigild's explanation when nothing matched.
  std::vector<std::string> registered;  // "pid (job)" of what the daemon knows.
};

// The vigilTraceStart request for `pids` (profile_start_time as given in `o`).
nlohmann::json VigilTraceStartRequest(const TraceCliOptions& o, const std::vector<int64_t>& pids);

// Merges a session reply (vigilTraceStart or vigilTraceStatus) into `r`: that session's
// processes replace what `r` had of it.
void ReadVigilSession(const nlohmann::json& session, HostTraceResult* r);
// The reply's `busy` entries that another trace holds (not those over the process limit).
std::vector<BusyProcess> ReadBusyList(const nlohmann::json& session);
// Reads a vigilTraceStart reply: its session, busy processes, counts, why nothing matched.
void ReadVigilStart(const nlohmann::json& reply, HostTraceResult* r);

// "pid 322 busy with trace tr-... (vigilTraceStart, asked by ...), should end at T (in 12s)".
std::string DescribeBusy(const BusyProcess& b, int64_t now_unix_ms);
// What the request matched against, for the message when it matched nothing: job, pids, hosts.
std::string MatchedAgainst(const TraceCliOptions& o, size_t hosts);

nlohmann::json TraceResultsToJson(const std::vector<HostTraceResult>& results);
std::string RenderTraceResults(const std::vector<HostTraceResult>& results, bool waited);
// 3 when no host was reached; 1 on an error, on an unwritten trace after --wait, on a process
// still busy after --wait --retry-busy, when --wait matched nothing anywhere, or with
// --fail-on-no-process when some host matched nothing; else 0.
int TraceExitCode(const std::vector<HostTraceResult>& results, const TraceCliOptions& o);
// Total matched over every host that answered.
int64_t TotalMatched(const std::vector<HostTraceResult>& results);

}  // namespace vigil
