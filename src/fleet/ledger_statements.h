// SPDX-License-Identifier: Apache-2.0
// The ledger store's prepared write statements, by name. Upserts add to what is there, because
// every contribution of a batch is additive. Owner: fleet. Constants only.
#pragma once

namespace vigil::ledger_sql {

inline constexpr const char* kStatements[][2] = {
    {"minute",
     "INSERT INTO ledger_minute VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12) "
     "ON CONFLICT DO UPDATE SET wall_s=wall_s+excluded.wall_s, alloc_s=alloc_s+excluded.alloc_s,"
     " busy_s=busy_s+excluded.busy_s, held_idle_s=held_idle_s+excluded.held_idle_s,"
     " energy_j=energy_j+excluded.energy_j, sm_sum=sm_sum+excluded.sm_sum,"
     " sm_n=sm_n+excluded.sm_n, flops_sum=flops_sum+excluded.flops_sum,"
     " flops_n=flops_n+excluded.flops_n"},
    {"job_hour",
     "INSERT INTO job_hour VALUES (?1,?2,?3,?4,?5,?6) ON CONFLICT DO UPDATE SET"
     " alloc_s=alloc_s+excluded.alloc_s, busy_s=busy_s+excluded.busy_s,"
     " held_idle_s=held_idle_s+excluded.held_idle_s, energy_j=energy_j+excluded.energy_j"},
    {"host_hour",
     "INSERT INTO host_hour VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10) ON CONFLICT DO UPDATE SET"
     " wall_s=wall_s+excluded.wall_s, alloc_s=alloc_s+excluded.alloc_s,"
     " busy_s=busy_s+excluded.busy_s, held_idle_s=held_idle_s+excluded.held_idle_s,"
     " energy_j=energy_j+excluded.energy_j, sm_sum=sm_sum+excluded.sm_sum,"
     " sm_n=sm_n+excluded.sm_n"},
    {"series",
     "INSERT INTO series (key, first_ns, first_v, last_ns, last_v, interval_ns)"
     " VALUES (?1,?2,?3,?4,?5,?6) ON CONFLICT (key) DO UPDATE SET first_ns=excluded.first_ns,"
     " first_v=excluded.first_v, last_ns=excluded.last_ns, last_v=excluded.last_v,"
     " interval_ns=excluded.interval_ns"},
    {"batch_seen", "SELECT 1 FROM batches WHERE host=?1 AND batch_id=?2"},
    {"batch_add", "INSERT INTO batches VALUES (?1,?2,?3,?4,?5)"},
    {"host_get", "SELECT host_id FROM hosts WHERE name=?1"},
    {"host_add",
     "INSERT INTO hosts (name, first_seen_ns, last_seen_ns, last_sample_ns) VALUES (?1,?2,?2,0)"},
    {"gpu_upsert",
     "INSERT INTO gpus (host_id, uuid, gpu_model, last_seen_ns) VALUES (?1,?2,?3,?4)"
     " ON CONFLICT (host_id, uuid) DO UPDATE SET gpu_model=CASE WHEN excluded.gpu_model<>''"
     " THEN excluded.gpu_model ELSE gpu_model END RETURNING gpu_id, gpu_model"},
    {"gpu_seen", "UPDATE gpus SET last_seen_ns=max(last_seen_ns, ?2) WHERE gpu_id=?1"},
    {"job_upsert",
     "INSERT INTO jobs (job_id, user, team, model, framework, rule, first_seen_ns, last_seen_ns)"
     " VALUES (?1,?2,?3,?4,?5,?6,?7,?7) ON CONFLICT DO UPDATE SET job_id=job_id"
     " RETURNING job_key"},
    {"job_seen",
     "UPDATE jobs SET first_seen_ns=min(first_seen_ns, ?2), last_seen_ns=max(last_seen_ns, ?3)"
     " WHERE job_key=?1"},
    {"job_gpu", "INSERT OR IGNORE INTO job_gpus VALUES (?1,?2)"},
    {"host_rpc", "UPDATE hosts SET rpc_address=?2 WHERE host_id=?1 AND rpc_address<>?2"},
    {"host_update",
     "UPDATE hosts SET last_seen_ns=max(last_seen_ns, ?2), last_sample_ns=max(last_sample_ns, ?3),"
     " gpus=CASE WHEN ?4>0 THEN ?4 ELSE gpus END,"
     " driver=CASE WHEN ?5<>'' THEN ?5 ELSE driver END,"
     " daemon_version=CASE WHEN ?6<>'' THEN ?6 ELSE daemon_version END,"
     " health=CASE WHEN ?7<>'' THEN ?7 ELSE health END,"
     " last_seq=max(last_seq, ?8), batches=batches+1, samples=samples+?9 WHERE host_id=?1"},
};

}  // namespace vigil::ledger_sql
