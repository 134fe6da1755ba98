// SPDX-License-Identifier: Apache-2.0
// The inventory half of ledger_query.h: one job, hosts, GPUs idle now.
#include <string>
#include <vector>

#include "base/time_util.h"
#include "fleet/analysis_store.h"
#include "fleet/ledger_query.h"

namespace vigil {

using nlohmann::json;

StatusOr<json> QueryJob(Db& db, const std::string& job_id, double price) {
  VIGIL_ASSIGN_OR_RETURN(
      Stmt st, db.Prepare("SELECT job_key, user, team, model, framework, rule, first_seen_ns,"
                          " last_seen_ns FROM jobs WHERE job_id=?1 ORDER BY first_seen_ns"));
  st.Bind(1, job_id);
  json out{{"job_id", job_id}, {"identities", json::array()}};
  std::vector<int64_t> keys;
  int64_t first = INT64_MAX, last = 0;
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    keys.push_back(st.Int(0));
    first = std::min(first, st.Int(6));
    last = std::max(last, st.Int(7));
    out["identities"].push_back(json{{"user", st.Text(1)},
                                     {"team", st.Text(2)},
                                     {"model", st.Text(3)},
                                     {"framework", st.Text(4)},
                                     {"rule", st.Text(5)}});
  }
  if (keys.empty()) {
    return NotFoundError("job " + job_id + ": not in the ledger");
  }
  std::string in;
  for (int64_t k : keys) {
    if (!in.empty()) in += ',';
    in += std::to_string(k);
  }
  VIGIL_ASSIGN_OR_RETURN(Stmt hours,
                         db.Prepare("SELECT hour_s, sum(alloc_s), sum(busy_s), sum(held_idle_s),"
                                    " sum(energy_j) FROM job_hour WHERE job_key IN (" +
                                    in + ") GROUP BY hour_s ORDER BY hour_s"));
  double alloc = 0, busy = 0, held = 0, energy = 0;
  json series = json::array();
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, hours.Step());
    if (!row) break;
    alloc += hours.Real(1);
    busy += hours.Real(2);
    held += hours.Real(3);
    energy += hours.Real(4);
    series.push_back(json{{"hour", FormatTimestamp(hours.Int(0) * 1000000000)},
                          {"gpu_hours", hours.Real(1) / 3600},
                          {"busy_gpu_hours", hours.Real(2) / 3600},
                          {"held_idle_gpu_hours", hours.Real(3) / 3600},
                          {"energy_joules", hours.Real(4)}});
  }
  // FLOP/s and SM activity of the GPUs in the minutes this job held them.
  VIGIL_ASSIGN_OR_RETURN(
      Stmt eff, db.Prepare("SELECT sum(g.flops_sum), sum(g.flops_n), sum(g.sm_sum), sum(g.sm_n)"
                           " FROM ledger_minute m JOIN ledger_minute g ON g.minute_s=m.minute_s"
                           " AND g.gpu_id=m.gpu_id AND g.job_key=0 WHERE m.minute_s>=?1 AND"
                           " m.minute_s<=?2 AND m.alloc_s>0 AND m.job_key IN (" +
                           in + ")"));
  eff.Bind(1, first / 1000000000 - 120).Bind(2, last / 1000000000 + 120);
  VIGIL_ASSIGN_OR_RETURN(bool has_eff, eff.Step());
  const bool flops_known = has_eff && eff.Int(1) > 0;
  VIGIL_ASSIGN_OR_RETURN(
      Stmt gpus, db.Prepare("SELECT DISTINCT s.name, g.uuid, g.gpu_model FROM job_gpus jg JOIN"
                            " gpus g ON g.gpu_id=jg.gpu_id JOIN hosts s ON s.host_id=g.host_id"
                            " WHERE jg.job_key IN (" +
                            in + ") ORDER BY 1, 2"));
  json gpu_list = json::array();
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, gpus.Step());
    if (!row) break;
    gpu_list.push_back(
        json{{"host", gpus.Text(0)}, {"gpu_uuid", gpus.Text(1)}, {"gpu_model", gpus.Text(2)}});
  }
  out["first_seen"] = FormatTimestamp(first);
  out["last_seen"] = FormatTimestamp(last);
  out["duration_s"] = static_cast<double>(last - first) / 1e9;
  out["gpus"] = gpu_list;
  out["gpu_hours"] = alloc / 3600;
  out["busy_gpu_hours"] = busy / 3600;
  out["held_idle_gpu_hours"] = held / 3600;
  // Busy share (busy / allocated seconds) and the SM activity the GPUs measured, which differ
  // where a GPU reports utilisation but no SM activity (busy then weighs utilisation).
  out["busy_ratio"] = alloc > 0 ? busy / alloc : 0.0;
  out["mean_sm_active_ratio"] =
      has_eff && eff.Int(3) > 0 ? json(eff.Real(2) / static_cast<double>(eff.Int(3))) : json();
  out["mean_flops_estimated"] =
      flops_known ? json(eff.Real(0) / static_cast<double>(eff.Int(1))) : json(nullptr);
  // MFU, model FLOPs and step time from libvigil_client reports, over the job's whole life.
  VIGIL_ASSIGN_OR_RETURN(json client, QueryJobEfficiency(db, job_id, 0, INT64_MAX));
  for (const auto& [k, v] : client.items()) out[k] = v;
  out["energy_joules"] = energy;
  out["cost"] = alloc / 3600 * price;
  out["hours"] = series;
  VIGIL_RETURN_IF_ERROR(AddJobAnalyses(db, job_id, &out));  // fleet/analysis_store.h
  return out;
}

StatusOr<json> QueryHosts(Db& db, int64_t now_ns) {
  VIGIL_ASSIGN_OR_RETURN(
      Stmt st, db.Prepare("SELECT host_id, name, first_seen_ns, last_seen_ns, last_sample_ns,"
                          " gpus, driver, daemon_version, health, last_seq, batches, samples,"
                          " rpc_address FROM hosts ORDER BY name"));
  VIGIL_ASSIGN_OR_RETURN(
      Stmt gpus, db.Prepare("SELECT uuid, gpu_model, last_seen_ns FROM gpus WHERE host_id=?1"
                            " ORDER BY uuid"));
  json hosts = json::array();
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    json gpu_list = json::array();
    gpus.Bind(1, st.Int(0));
    while (true) {
      VIGIL_ASSIGN_OR_RETURN(bool g, gpus.Step());
      if (!g) break;
      gpu_list.push_back(json{{"gpu_uuid", gpus.Text(0)},
                              {"gpu_model", gpus.Text(1)},
                              {"last_seen", FormatTimestamp(gpus.Int(2))}});
    }
    gpus.Reset();
    hosts.push_back(json{{"host", st.Text(1)},
                         {"first_seen", FormatTimestamp(st.Int(2))},
                         {"last_seen", FormatTimestamp(st.Int(3))},
                         {"last_seen_ago_s", static_cast<double>(now_ns - st.Int(3)) / 1e9},
                         {"last_sample", FormatTimestamp(st.Int(4))},
                         {"gpu_count", st.Int(5)},
                         {"driver", st.Text(6)},
                         {"daemon_version", st.Text(7)},
                         {"health", st.Text(8)},
                         {"last_seq", st.Int(9)},
                         {"batches", st.Int(10)},
                         {"samples", st.Int(11)},
                         {"rpc_address", st.Text(12)},
                         {"gpus", gpu_list}});
  }
  return json{{"hosts", hosts}};
}

StatusOr<json> QueryIdleNow(Db& db, int64_t now_ns, int64_t window_ns) {
  const int64_t from_s = (now_ns - window_ns) / 1000000000 / 60 * 60;
  VIGIL_ASSIGN_OR_RETURN(
      Stmt st,
      db.Prepare("SELECT s.name, g.uuid, g.gpu_model, g.last_seen_ns,"
                 " sum(m.wall_s), sum(m.alloc_s), sum(m.busy_s), sum(m.held_idle_s),"
                 " group_concat(DISTINCT CASE WHEN m.job_key<>0 THEN j.job_id END)"
                 " FROM ledger_minute m JOIN gpus g ON g.gpu_id=m.gpu_id"
                 " JOIN hosts s ON s.host_id=g.host_id LEFT JOIN jobs j ON j.job_key=m.job_key"
                 " WHERE m.minute_s>=?1 GROUP BY m.gpu_id ORDER BY 1, 2"));
  st.Bind(1, from_s);
  json idle = json::array(), held = json::array();
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    const double wall = st.Real(4), alloc = st.Real(5), busy = st.Real(6);
    if (wall <= 0) continue;
    json gpu{{"host", st.Text(0)},
             {"gpu_uuid", st.Text(1)},
             {"gpu_model", st.Text(2)},
             {"last_seen", FormatTimestamp(st.Int(3))},
             {"window_s", static_cast<double>(window_ns) / 1e9},
             {"reported_s", wall},
             {"allocated_s", alloc},
             {"busy_s", busy}};
    if (alloc <= 0.01 * wall) {
      idle.push_back(std::move(gpu));
    } else if (busy <= 0.01 * alloc) {
      gpu["jobs"] = st.Text(8);
      held.push_back(std::move(gpu));
    }
  }
  return json{{"idle", idle}, {"held_idle", held}};
}

}  // namespace vigil
