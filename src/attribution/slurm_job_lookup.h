// SPDX-License-Identifier: Apache-2.0
// Slurm job ids for cgroups Slurm names by an opaque id. From 26.05, slurmstepd names a job's
// cgroup v2 directory by the job's SLUID (".../slurmstepd.scope/sEKNKTV3WPV500/step_0/...")
// unless cgroup.conf says CgroupJobIdPaths=yes, and the SLUID does not contain the job id. This
// asks `scontrol listpids` (on PATH, with a deadline, at most once per refresh interval) which
// job a pid is in, and remembers SLUID -> job id once one process of the job told it (through
// scontrol, or the resolver's SLURM_JOB_ID from the environment allow-list). Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace vigil {

struct SlurmJobLookupOptions {
  std::string scontrol = "scontrol";                    // Looked up on PATH; "" turns scontrol off.
  std::string off_reason = "scontrol lookups are off";  // Status text when scontrol is "".
  int64_t call_deadline_ns = 3'000'000'000;             // One scontrol run.
  int64_t refresh_ns = 30'000'000'000;                  // listpids answer reused this long.
  int64_t min_refresh_ns = 5'000'000'000;               // Never two runs closer than this.
  size_t max_output_bytes = 4 << 20;
  std::function<int64_t()> monotonic_ns;  // Default: MonotonicNanos.
};

struct SlurmJobLookupHealth {
  bool used = false;  // Some SLUID-named cgroup was seen.
  bool scontrol_ok = false;
  std::string message;    // Why scontrol is not answering; "" when it is (or was never needed).
  size_t known_jobs = 0;  // SLUID -> job id pairs learnt.
};

// Parses `scontrol listpids` output: a header line naming the columns (PID, JOBID, STEPID, ...;
// a SLUID column is used where present) then one line per process. pid -> job id; malformed
// lines are skipped. `sluids` (may be null) receives SLUID -> job id pairs when the output has
// a SLUID column.
std::map<int, std::string> ParseScontrolListpids(std::string_view text,
                                                 std::map<std::string, std::string>* sluids);

class SlurmJobLookup {
 public:
  explicit SlurmJobLookup(SlurmJobLookupOptions options);

  // The job id of the job whose cgroup is named `sluid`, `pid` being one of its processes (0:
  // none known, then only what was learnt before counts).
  std::optional<std::string> JobId(const std::string& sluid, int pid);
  // Records what another source (the environment allow-list) says; the first word for a SLUID
  // stands, and a job id already bound to another SLUID is refused (returns false).
  bool Learn(const std::string& sluid, const std::string& job_id);
  SlurmJobLookupHealth health() const;

 private:
  int64_t Now() const;
  void Refresh(bool force);  // Caller holds run_mu_.
  bool LearnLocked(const std::string& sluid, const std::string& job_id);

  const SlurmJobLookupOptions options_;
  std::mutex run_mu_;      // One scontrol at a time.
  mutable std::mutex mu_;  // Guards below; never held across a run.
  std::map<int, std::string> pid_jobs_;
  std::map<std::string, std::string> sluid_jobs_;
  std::map<std::string, std::string> job_sluids_;
  bool ran_ = false;
  int64_t last_run_ns_ = 0;
  SlurmJobLookupHealth health_;
};

}  // namespace vigil
