// SPDX-License-Identifier: Apache-2.0
// The CPU profile store of vigil-fleet: the rolling profiles vigild's continuous mode uploads
// (one sampling window of one job on one host each, folded stacks rooted at the process name),
// kept in the ledger's table `cpu_profiles` with the folded text gzipped, and read back per job:
// the list of windows, one window, or every window of the job in a time range merged across its
// hosts (the counts of identical stacks add up; with by_host each host's stacks sit under a root
// frame named after the host). Bounded: at most `keep_per_job_host` windows per (job, host), the
// oldest dropped on insert, and --retention by age (LedgerStore::ApplyRetention). A window sent
// twice (a retry after a lost reply) is stored once. Owner: fleet. Thread-safe as LedgerStore
// is: StoreCpuProfile writes through LedgerStore::Write, the queries take a reader's Db.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "fleet/ledger_store.h"
#include "fleet/sqlite_db.h"
#include "profile/profile.h"

namespace vigil {

// As sent (gzip) and after inflating: larger uploads are refused with 413.
inline constexpr size_t kMaxCpuProfileUploadBytes = 4 << 20;
inline constexpr size_t kMaxCpuProfileFoldedBytes = 32 << 20;
// Windows one merge reads at most (the newest); the reply says how many it left out.
inline constexpr int64_t kMaxMergedCpuProfiles = 2000;

struct CpuProfileUpload {
  std::string job_id, host;
  int64_t start_ns = 0, end_ns = 0;  // The sampling window, unix ns.
  int64_t received_ns = 0;
  int frequency_hz = 0;
  std::string folded;  // Uncompressed folded stacks.
};

struct CpuProfileStored {
  int64_t id = 0;
  bool duplicate = false;  // The same (job, host, start) was stored before; nothing changed.
  uint64_t samples = 0;
  size_t stacks = 0;
  int64_t dropped = 0;  // Older windows of this job and host dropped over keep_per_job_host.
};

// Validates the upload (job id and host as in ingest, 0 < start < end, a frequency of 1..10000
// Hz, folded stacks that parse within folded_input.h's limits and hold at least one sample)
// and stores it. InvalidArgument says what is wrong.
StatusOr<CpuProfileStored> StoreCpuProfile(LedgerStore& store, const CpuProfileUpload& upload,
                                           size_t keep_per_job_host);

struct CpuProfileQuery {
  std::string job_id;
  std::string host;                            // "" = every host of the job.
  int64_t since_ns = 0, until_ns = INT64_MAX;  // Windows that overlap [since, until).
  int64_t limit = 100;                         // For the list.
};

// {"job_id", "profiles": [{"id", "job_id", "host", "start", "end", "start_ns", "end_ns",
//  "received", "frequency_hz", "samples", "stacks", "folded_bytes"}]}, newest first.
StatusOr<nlohmann::json> QueryCpuProfiles(Db& db, const CpuProfileQuery& q);

struct CpuProfileRead {
  nlohmann::json meta;  // As one row of QueryCpuProfiles; for a merge: job_id, since/until,
                        // profiles, profiles_left_out, samples, hosts [{host, profiles, samples}].
  Profile profile;
};

// One stored window. NotFound for an unknown id.
StatusOr<CpuProfileRead> LoadCpuProfile(Db& db, int64_t id);
// The job's windows in the range merged across hosts (or only `host`'s); "profiles": 0 and an
// empty profile when there are none.
StatusOr<CpuProfileRead> MergeCpuProfiles(Db& db, const CpuProfileQuery& q, bool by_host);

}  // namespace vigil
