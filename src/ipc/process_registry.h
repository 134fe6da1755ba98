// SPDX-License-Identifier: Apache-2.0
// The processes that talk to the daemon over the IPC fabric (PyTorch/Kineto and libvigil_client
// applications), indexed by job id and by their ancestor pid sets, with the trace configuration
// waiting for each one's next poll. A claim is checked against the kernel's SCM_CREDENTIALS:
// the claimed leaf pid must be the sender's own pid (in its pid namespace, read from NSpid in
// <proc>/<pid>/status), and claimed ancestors are kept only when they really are ancestors, so
// no process can register as another and steal its traces. The job, team, model and framework a
// process claims are settled by the daemon's job resolver (the scheduler's identity wins; a claim
// that contradicts it is dropped), so no process can charge its time or its step reports to
// another job, or match another job's traces. Processes silent for 60 s expire.
// Time comes from an injected clock (tests never sleep). Owner: ipc. Thread-safe; observer
// callbacks run after the registry's lock is released.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "attribution/job_info.h"
#include "base/status.h"
#include "ipc/endpoint.h"
#include "ipc/wire_format.h"

namespace vigil {

using IpcClock = std::function<int64_t()>;  // Nanoseconds; monotonic in the daemon.

struct RegisteredProcess {
  int32_t pid = 0;       // As the process sees itself (what Kineto reports and names files by).
  int32_t host_pid = 0;  // In the daemon's pid namespace (from SCM_CREDENTIALS).
  int uid = -1;
  std::string job_id;              // Resolved job id ("" when none is known).
  int64_t kineto_job_id = 0;       // The integer Kineto sent (SLURM_JOB_ID or 0).
  std::vector<int32_t> pids;       // Verified leaf-first chain, in the process's namespace.
  std::vector<int32_t> host_pids;  // The same chain in the daemon's namespace.
  std::set<int32_t> gpus;          // From Kineto "ctxt" registrations.
  std::string source;              // "kineto" or "vigil_client".
  std::string team, model, framework;
  double peak_flops = 0;  // Per-process peak FLOP/s the client declared (0: unknown).
  int64_t registered_ns = 0;
  int64_t last_seen_ns = 0;
  IpcAddress reply_to;
  std::string pending_config;  // Activity config waiting for the next poll.
  std::string trace_id;        // The session holding this process; "" when idle.
  JobInfo claim;               // What it claimed at registration (job_id "" for none).
  int64_t settled_ns = 0;      // When job_id and the labels were last settled from the claim.

  // True when `job` names this process's job: its settled id, or "0" when Kineto sent no job id
  // (Dynolog's default). Any other integer Kineto sent never matches by itself: it is the
  // process's claim, not its job.
  bool MatchesJob(const std::string& job) const;
  bool InNamespace() const { return pid != host_pid; }
};

// What the trace side wants to hear about.
class RegistryObserver {
 public:
  virtual ~RegistryObserver() = default;
  virtual void OnDelivered(int32_t host_pid, const std::string& trace_id, int64_t now_ns) = 0;
  virtual void OnExpired(int32_t host_pid, const std::string& trace_id, int64_t now_ns) = 0;
};

struct ProcessRegistryOptions {
  std::string proc_root = "/proc";
  int64_t expiry_ns = int64_t{60} * 1000 * 1000 * 1000;
  // A process that exited is still registered until it expires (Kineto stops polling; Dynolog
  // keeps matching it for those 60 s). With this set, Match skips a process whose
  // <proc_root>/<host pid> is gone, so it neither counts as matched nor takes a process_limit
  // slot from a live one. Tests that register made-up pids turn it off.
  bool match_only_live = true;
  size_t max_processes = 65536;
  bool verify_credentials = true;
  // A verified claim is reused for this long when the same sender repeats it, so a poll does
  // not walk /proc every time (a pid reused within this window could inherit the old chain).
  int64_t claim_cache_ns = int64_t{30} * 1000 * 1000 * 1000;
  // Settles what a registering process claims (job id: Kineto's integer or libvigil_client's
  // string, "" when none; team, model, framework) into what the daemon stores for it: the daemon
  // wires JobResolver::SettleClaim here (SLURM cgroup, Kubernetes pod, mapping file, ...).
  // Unset: the claim is stored as sent (tests, benchmarks).
  std::function<JobInfo(int32_t host_pid, const JobInfo& claim)> settle_claim;
  // A registered process's claim is settled again when it talks after this long, so a claim
  // the resolver withdraws later (the scheduler's job of that id appeared) is withdrawn here too.
  int64_t resettle_ns = int64_t{30} * 1000 * 1000 * 1000;
};

struct ClientRegistration {  // libvigil_client's "vigil.reg".
  int32_t pid = 0;
  std::vector<int32_t> pids;
  std::string job_id, team, model, framework;
  double peak_flops = 0;
  int32_t gpu = -1;
};

struct IpcCounters {
  std::atomic<uint64_t> datagrams{0};
  std::atomic<uint64_t> malformed{0};
  std::atomic<uint64_t> oversized{0};
  std::atomic<uint64_t> unknown_type{0};
  std::atomic<uint64_t> refused_claims{0};
  std::atomic<uint64_t> dropped_ancestors{0};
  std::atomic<uint64_t> replies_sent{0};
  std::atomic<uint64_t> replies_dropped{0};      // Peer gone or another send error.
  std::atomic<uint64_t> replies_unread{0};       // The peer's backlog was full: it does not read.
  std::atomic<uint64_t> replies_over_budget{0};  // No reply socket free for the destination.
  std::atomic<uint64_t> registry_full{0};
  std::atomic<uint64_t> refused_steps{0};  // Step reports out of bounds (job_metrics.h).
  std::atomic<uint64_t> expired{0};
};

class ProcessRegistry {
 public:
  ProcessRegistry(ProcessRegistryOptions options, IpcClock clock);

  // The verified chain for a claim: leaf-first pids in the sender's namespace and the host pids.
  struct Claim {
    std::vector<int32_t> pids;
    std::vector<int32_t> host_pids;
  };
  // PermissionDenied when the sender cannot own the claimed leaf pid.
  StatusOr<Claim> VerifyClaim(const PeerCredentials& cred, const std::vector<int32_t>& pids);

  // Kineto "ctxt": returns how many processes of the job are registered on that GPU.
  StatusOr<int32_t> RegisterContext(const PeerCredentials& cred, const KinetoContext& context,
                                    const IpcAddress& from);
  // Kineto "req": registers or refreshes the process and returns the configuration to deliver
  // ("" when none), honouring the EVENTS/ACTIVITIES bits of the request.
  StatusOr<std::string> Poll(const PeerCredentials& cred, const KinetoRequest& request,
                             const IpcAddress& from);
  // libvigil_client registration, poll and liveness.
  StatusOr<RegisteredProcess> RegisterClient(const PeerCredentials& cred,
                                             const ClientRegistration& reg, const IpcAddress& from);
  StatusOr<std::string> PollClient(const PeerCredentials& cred, const IpcAddress& from);
  // The registered process sending from cred (NotFound when it has not registered).
  StatusOr<RegisteredProcess> Touch(const PeerCredentials& cred);

  // Trace side. Processes of `job` (any job when empty) whose chain contains one of `pids`
  // (every process when pids is empty or {0}, as Dynolog does).
  // Registered processes of `job` (any when empty) among `pids` (any when empty or {0}); with
  // match_only_live, only those still running.
  std::vector<RegisteredProcess> Match(const std::string& job, const std::set<int32_t>& pids) const;
  std::vector<RegisteredProcess> Snapshot() const;
  std::optional<RegisteredProcess> Find(int32_t host_pid) const;
  // Queues `config` for the process unless another trace holds it; false when busy or gone.
  bool Offer(int32_t host_pid, const std::string& config, const std::string& trace_id);
  // Drops the hold of `trace_id` (and its undelivered config) on the process.
  void Release(int32_t host_pid, const std::string& trace_id);
  // Registers a process learned without a datagram (benchmarks, tests); last_seen is now.
  void Adopt(RegisteredProcess process);
  // Removes processes silent for longer than the expiry; returns how many.
  size_t Expire();
  size_t size() const;

  void SetObserver(RegistryObserver* observer) { observer_ = observer; }
  IpcCounters& counters() { return counters_; }
  const IpcCounters& counters() const { return counters_; }
  int64_t Now() const { return clock_(); }

 private:
  RegisteredProcess* FindLocked(int32_t host_pid);
  // Creates or refreshes the entry for a verified claim; nullptr when the registry is full.
  RegisteredProcess* Upsert(const Claim& claim, const PeerCredentials& cred, int64_t job_id,
                            const std::string& job_str, const std::string& source,
                            const IpcAddress& from, bool* created);
  // What the daemon stores for a process claiming `claim` (settle_claim, or the claim as sent).
  JobInfo Settle(int32_t host_pid, const JobInfo& claim) const;
  // Settles a registered process's claim again once resettle_ns have passed since the last time.
  void MaybeResettle(int32_t host_pid);

  StatusOr<Claim> VerifyUncached(const PeerCredentials& cred, const std::vector<int32_t>& pids);

  struct CachedClaim {
    std::vector<int32_t> claimed;
    Claim claim;
    int64_t verified_ns = 0;
  };

  ProcessRegistryOptions options_;
  IpcClock clock_;
  std::mutex cache_mu_;
  std::map<int32_t, CachedClaim> claim_cache_;  // By sender host pid.
  mutable std::mutex mu_;
  std::map<int32_t, RegisteredProcess> by_host_pid_;
  RegistryObserver* observer_ = nullptr;
  IpcCounters counters_;
};

// Parses the "NSpid:" and "PPid:" lines of a /proc/<pid>/status text (exposed for tests).
struct ProcStatusIds {
  std::vector<int32_t> ns_pids;  // Outermost first; the last is the pid in its own namespace.
  int32_t ppid = 0;
};
StatusOr<ProcStatusIds> ParseProcStatusIds(std::string_view status_text);

}  // namespace vigil
