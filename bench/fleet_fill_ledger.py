#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Adds DAYS days of history to a vigil-fleet ledger (SQLite) whose inventory the load generator
already created (hosts and their GPUs, by pushing a few reports): per host one whole-host job a
day, in the hourly rollups the attribution queries and the dashboard read (job_hour, host_hour),
plus the jobs and job_gpus rows. Minute rows are not filled (the dashboard's 30-day views read
the rollups). Direct inserts: a month of 1,000 GPUs takes seconds, not the weeks of pushes it
stands for. Run it while vigil-fleet is stopped.

Usage: fleet_fill_ledger.py LEDGER.db [DAYS]
"""
import sqlite3
import sys
import time


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    days = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    db = sqlite3.connect(sys.argv[1])
    hosts = db.execute("SELECT host_id, name FROM hosts ORDER BY host_id").fetchall()
    if not hosts:
        print("fleet_fill_ledger: the ledger has no hosts; push some reports first", file=sys.stderr)
        return 1
    gpus = {}
    for host_id, gpu_id, model in db.execute("SELECT host_id, gpu_id, gpu_model FROM gpus"):
        gpus.setdefault(host_id, []).append((gpu_id, model or "H100"))
    now_h = int(time.time()) // 3600 * 3600
    # History ends where the pushed reports begin (the current hour).
    start = now_h - days * 86400
    sec = 1000000000
    job_rows, job_gpu_rows, job_hour_rows, host_hour_rows = [], [], [], []
    next_key = (db.execute("SELECT coalesce(max(job_key), 0) FROM jobs").fetchone()[0]) + 1
    for i, (host_id, name) in enumerate(hosts):
        host_gpus = gpus.get(host_id, [])
        n = len(host_gpus)
        if n == 0:
            continue
        model = host_gpus[0][1]
        for d in range(days):
            day = start + d * 86400
            key = next_key
            next_key += 1
            seed = i * 31 + d
            busy_share = 0.25 + (seed % 70) / 100.0
            job_rows.append((key, f"hist-{name}-{d}", f"user-{seed % 97}", f"team-{seed % 13}",
                             f"model-{seed % 29}", "pytorch", "slurm", day * sec,
                             (day + 86400 - 3600) * sec))
            job_gpu_rows.extend((key, gpu_id) for gpu_id, _ in host_gpus)
            for hr in range(24):
                h = day + hr * 3600
                if h >= now_h:
                    break
                alloc = n * (3600.0 if hr < 23 else 1800.0)  # The last hour is half idle.
                busy = alloc * busy_share
                held = alloc * 0.1 if busy_share < 0.4 else 0.0
                energy = n * 3600.0 * (70 + 500 * busy_share)
                job_hour_rows.append((h, key, alloc, busy, held, energy))
                host_hour_rows.append((h, host_id, model, n * 3600.0, alloc, busy, held, energy,
                                       n * 60 * busy_share, n * 60))
    with db:
        db.executemany("INSERT INTO jobs (job_key, job_id, user, team, model, framework, rule,"
                       " first_seen_ns, last_seen_ns) VALUES (?,?,?,?,?,?,?,?,?)", job_rows)
        db.executemany("INSERT OR IGNORE INTO job_gpus (job_key, gpu_id) VALUES (?,?)",
                       job_gpu_rows)
        db.executemany("INSERT INTO job_hour (hour_s, job_key, alloc_s, busy_s, held_idle_s,"
                       " energy_j) VALUES (?,?,?,?,?,?) ON CONFLICT DO NOTHING", job_hour_rows)
        db.executemany("INSERT INTO host_hour (hour_s, host_id, gpu_model, wall_s, alloc_s,"
                       " busy_s, held_idle_s, energy_j, sm_sum, sm_n) VALUES"
                       " (?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING", host_hour_rows)
    db.execute("ANALYZE")
    db.close()
    gpu_count = sum(len(v) for v in gpus.values())
    print(f"filled {days} days for {len(hosts)} hosts / {gpu_count} GPUs: {len(job_rows)} jobs,"
          f" {len(job_hour_rows)} job-hours, {len(host_hour_rows)} host-hours")
    return 0


if __name__ == "__main__":
    sys.exit(main())
