// SPDX-License-Identifier: Apache-2.0
#include "fleet/cpu_profile_store.h"

#include <algorithm>
#include <map>
#include <utility>

#include "base/gzip.h"
#include "base/time_util.h"
#include "profile/folded_input.h"
#include "profile/rolling_profiles.h"

namespace vigil {
namespace {

using nlohmann::json;

constexpr const char* kColumns =
    "profile_id, job_id, host, start_ns, end_ns, received_ns, frequency_hz, samples, stacks,"
    " folded_bytes";

bool ValidText(std::string_view s, size_t max) {
  return !s.empty() && s.size() <= max && std::none_of(s.begin(), s.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20;
  });
}

// One row of kColumns as JSON.
json RowJson(const Stmt& st) {
  return json{{"id", st.Int(0)},
              {"job_id", st.Text(1)},
              {"host", st.Text(2)},
              {"start", FormatTimestamp(st.Int(3))},
              {"end", FormatTimestamp(st.Int(4))},
              {"start_ns", st.Int(3)},
              {"end_ns", st.Int(4)},
              {"received", FormatTimestamp(st.Int(5))},
              {"frequency_hz", st.Int(6)},
              {"samples", st.Int(7)},
              {"stacks", st.Int(8)},
              {"folded_bytes", st.Int(9)}};
}

// The stored window as a Profile, with its sampling window and frequency in the info.
StatusOr<Profile> Decode(const std::string& gz, int64_t start_ns, int64_t end_ns, int64_t hz) {
  VIGIL_ASSIGN_OR_RETURN(std::string folded, Gunzip(gz, kMaxCpuProfileFoldedBytes));
  VIGIL_ASSIGN_OR_RETURN(Profile p, ParseFolded(folded, /*root_is_process=*/true));
  p.info().frequency_hz = static_cast<int>(hz);
  p.info().start_unix_ns = start_ns;
  p.info().duration_ns = end_ns - start_ns;
  return p;
}

// MergeProfileInto's time span for a merge that adds stacks itself (under a host root).
void WidenInfo(const ProfileInfo& in, bool first, ProfileInfo* out) {
  if (first) {
    *out = in;
    return;
  }
  const int64_t end =
      std::max(out->start_unix_ns + out->duration_ns, in.start_unix_ns + in.duration_ns);
  out->start_unix_ns = std::min(out->start_unix_ns, in.start_unix_ns);
  out->duration_ns = end - out->start_unix_ns;
}

// SELECT changes(): rows the last statement on `db` wrote.
StatusOr<int64_t> Changes(Db& db) {
  VIGIL_ASSIGN_OR_RETURN(Stmt st, db.Prepare("SELECT changes()"));
  VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.Int(0) : 0;
}

}  // namespace

StatusOr<CpuProfileStored> StoreCpuProfile(LedgerStore& store, const CpuProfileUpload& upload,
                                           size_t keep_per_job_host) {
  if (!ValidText(upload.job_id, 256)) {
    return InvalidArgumentError("job_id: want 1-256 printable characters");
  }
  if (!ValidText(upload.host, 256)) {
    return InvalidArgumentError("host: want 1-256 printable characters");
  }
  if (upload.start_ns <= 0 || upload.end_ns <= upload.start_ns) {
    return InvalidArgumentError("start_ns and end_ns: want unix nanoseconds, start < end");
  }
  if (upload.frequency_hz < 1 || upload.frequency_hz > 10000) {
    return InvalidArgumentError("frequency_hz: want 1-10000");
  }
  if (upload.folded.size() > kMaxCpuProfileFoldedBytes) {
    return ResourceExhaustedError("folded stacks larger than " +
                                  std::to_string(kMaxCpuProfileFoldedBytes) + " bytes");
  }
  VIGIL_ASSIGN_OR_RETURN(Profile profile, ParseFolded(upload.folded, /*root_is_process=*/true));
  if (profile.total_samples() == 0) {
    return InvalidArgumentError("folded stacks: no samples");
  }
  CpuProfileStored out;
  out.samples = profile.total_samples();
  out.stacks = profile.stacks().size();
  // Kept as sent: the parse above proved it reads back, and sorted folded text gzips well.
  const std::string gz = Gzip(upload.folded);
  const auto keep = static_cast<int64_t>(std::max<size_t>(keep_per_job_host, 1));
  return store.Write<CpuProfileStored>([&](Db& db) -> StatusOr<CpuProfileStored> {
    VIGIL_ASSIGN_OR_RETURN(
        Stmt ins,
        db.Prepare("INSERT INTO cpu_profiles (job_id, host, start_ns, end_ns, received_ns,"
                   " frequency_hz, samples, stacks, folded_bytes, folded_gz)"
                   " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
                   " ON CONFLICT (job_id, host, start_ns) DO NOTHING"));
    ins.Bind(1, upload.job_id).Bind(2, upload.host).Bind(3, upload.start_ns);
    ins.Bind(4, upload.end_ns).Bind(5, upload.received_ns);
    ins.Bind(6, static_cast<int64_t>(upload.frequency_hz));
    ins.Bind(7, static_cast<int64_t>(out.samples)).Bind(8, static_cast<int64_t>(out.stacks));
    ins.Bind(9, static_cast<int64_t>(upload.folded.size())).Bind(10, std::string_view(gz));
    VIGIL_RETURN_IF_ERROR(ins.Run());
    VIGIL_ASSIGN_OR_RETURN(const int64_t inserted, Changes(db));
    VIGIL_ASSIGN_OR_RETURN(Stmt id, db.Prepare("SELECT profile_id, samples = ?4 FROM cpu_profiles"
                                               " WHERE job_id=?1 AND host=?2 AND start_ns=?3"));
    id.Bind(1, upload.job_id).Bind(2, upload.host).Bind(3, upload.start_ns);
    id.Bind(4, static_cast<int64_t>(out.samples));
    VIGIL_ASSIGN_OR_RETURN(bool row, id.Step());
    if (!row) return InternalError("cpu profile: the row just written is not there");
    out.id = id.Int(0);
    out.duplicate = inserted == 0;
    if (out.duplicate && id.Int(1) == 0) {
      return AlreadyExistsError(
          "a different profile of this job, host and window start is "
          "stored already (id " +
          std::to_string(out.id) + ")");
    }
    VIGIL_ASSIGN_OR_RETURN(
        Stmt drop,
        db.Prepare("DELETE FROM cpu_profiles WHERE job_id=?1 AND host=?2 AND start_ns < ("
                   "SELECT start_ns FROM cpu_profiles WHERE job_id=?1 AND host=?2"
                   " ORDER BY start_ns DESC LIMIT 1 OFFSET ?3)"));
    drop.Bind(1, upload.job_id).Bind(2, upload.host).Bind(3, keep - 1);
    VIGIL_RETURN_IF_ERROR(drop.Run());
    VIGIL_ASSIGN_OR_RETURN(out.dropped, Changes(db));
    return out;
  });
}

StatusOr<json> QueryCpuProfiles(Db& db, const CpuProfileQuery& q) {
  std::string sql = std::string("SELECT ") + kColumns +
                    " FROM cpu_profiles WHERE job_id=?1 AND start_ns < ?2 AND end_ns > ?3";
  if (!q.host.empty()) sql += " AND host=?5";
  sql += " ORDER BY start_ns DESC, host LIMIT ?4";
  VIGIL_ASSIGN_OR_RETURN(Stmt st, db.Prepare(sql));
  st.Bind(1, q.job_id).Bind(2, q.until_ns).Bind(3, q.since_ns).Bind(4, q.limit);
  if (!q.host.empty()) st.Bind(5, q.host);
  json list = json::array();
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    list.push_back(RowJson(st));
  }
  return json{{"job_id", q.job_id}, {"profiles", std::move(list)}};
}

StatusOr<CpuProfileRead> LoadCpuProfile(Db& db, int64_t id) {
  VIGIL_ASSIGN_OR_RETURN(Stmt st, db.Prepare(std::string("SELECT ") + kColumns +
                                             ", folded_gz FROM cpu_profiles WHERE profile_id=?1"));
  st.Bind(1, id);
  VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return NotFoundError("no CPU profile " + std::to_string(id));
  CpuProfileRead out;
  out.meta = RowJson(st);
  VIGIL_ASSIGN_OR_RETURN(out.profile, Decode(st.Text(10), st.Int(3), st.Int(4), st.Int(6)));
  return out;
}

StatusOr<CpuProfileRead> MergeCpuProfiles(Db& db, const CpuProfileQuery& q, bool by_host) {
  std::string where = " FROM cpu_profiles WHERE job_id=?1 AND start_ns < ?2 AND end_ns > ?3";
  if (!q.host.empty()) where += " AND host=?5";
  VIGIL_ASSIGN_OR_RETURN(Stmt count, db.Prepare("SELECT count(*)" + where));
  count.Bind(1, q.job_id).Bind(2, q.until_ns).Bind(3, q.since_ns);
  if (!q.host.empty()) count.Bind(5, q.host);
  VIGIL_ASSIGN_OR_RETURN(bool has, count.Step());
  const int64_t matching = has ? count.Int(0) : 0;
  CpuProfileRead out;
  if (matching == 0) {  // Not an error: most jobs have none, and the job page asks for each.
    out.meta = json{{"job_id", q.job_id}, {"start", nullptr},       {"end", nullptr},
                    {"profiles", 0},      {"profiles_left_out", 0}, {"samples", 0},
                    {"by_host", by_host}, {"hosts", json::array()}};
    return out;
  }
  VIGIL_ASSIGN_OR_RETURN(
      Stmt st, db.Prepare("SELECT host, start_ns, end_ns, frequency_hz, samples, folded_gz" +
                          where + " ORDER BY start_ns DESC LIMIT ?4"));
  st.Bind(1, q.job_id).Bind(2, q.until_ns).Bind(3, q.since_ns).Bind(4, kMaxMergedCpuProfiles);
  if (!q.host.empty()) st.Bind(5, q.host);
  std::map<std::string, std::pair<int64_t, uint64_t>> hosts;  // host -> profiles, samples.
  int64_t read = 0;
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    const std::string host = st.Text(0);
    VIGIL_ASSIGN_OR_RETURN(Profile p, Decode(st.Text(5), st.Int(1), st.Int(2), st.Int(3)));
    auto& h = hosts[host];
    ++h.first;
    h.second += p.total_samples();
    if (by_host) {
      MergeProfileUnder(host, p, &out.profile);
      WidenInfo(p.info(), read == 0, &out.profile.info());
    } else {
      MergeProfileInto(p, &out.profile);
    }
    ++read;
  }
  json host_list = json::array();
  for (const auto& [host, h] : hosts) {
    host_list.push_back(json{{"host", host}, {"profiles", h.first}, {"samples", h.second}});
  }
  const ProfileInfo& info = out.profile.info();
  out.meta = json{{"job_id", q.job_id},
                  {"start", FormatTimestamp(info.start_unix_ns)},
                  {"end", FormatTimestamp(info.start_unix_ns + info.duration_ns)},
                  {"profiles", read},
                  {"profiles_left_out", matching - read},
                  {"samples", out.profile.total_samples()},
                  {"by_host", by_host},
                  {"hosts", std::move(host_list)}};
  return out;
}

}  // namespace vigil
