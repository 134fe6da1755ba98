// SPDX-License-Identifier: Apache-2.0
// Reshaping of API answers for the charts.

// Every bucket start from the first to the last one that has data (gaps included).
export function bucketAxis(rows, step) {
  if (!rows.length || !step) return [];
  let lo = Infinity;
  let hi = -Infinity;
  for (const r of rows) {
    lo = Math.min(lo, r.bucket_start_s);
    hi = Math.max(hi, r.bucket_start_s);
  }
  const xs = [];
  for (let t = lo; t <= hi; t += step) xs.push(t);
  return xs;
}

// rows of a bucketed attribution -> Map key -> values per xs (field of each row).
export function byKey(rows, xs, field) {
  const index = new Map(xs.map((x, i) => [x, i]));
  const out = new Map();
  for (const r of rows) {
    if (!out.has(r.key)) out.set(r.key, new Array(xs.length).fill(0));
    out.get(r.key)[index.get(r.bucket_start_s)] += r[field];
  }
  return out;
}

// Sums of each field per bucket over all keys (host attribution: the fleet's totals).
export function perBucket(rows, xs, fields) {
  const index = new Map(xs.map((x, i) => [x, i]));
  const out = Object.fromEntries(fields.map((f) => [f, new Array(xs.length).fill(0)]));
  for (const r of rows) {
    const i = index.get(r.bucket_start_s);
    for (const f of fields) out[f][i] += r[f];
  }
  return out;
}

// Jobs grouped by one of their fields: [{key, jobs, gpu_hours, busy, held, energy, cost}].
export function groupJobs(jobs, field) {
  const groups = new Map();
  for (const j of jobs) {
    const key = field === 'job' ? j.job_id : j[field];
    let g = groups.get(key);
    if (!g) {
      g = { key, jobs: 0, gpu_hours: 0, busy_gpu_hours: 0, held_idle_gpu_hours: 0, energy_joules: 0, cost: 0 };
      groups.set(key, g);
    }
    g.jobs += 1;
    g.gpu_hours += j.gpu_hours;
    g.busy_gpu_hours += j.busy_gpu_hours;
    g.held_idle_gpu_hours += j.held_idle_gpu_hours;
    g.energy_joules += j.energy_joules;
    g.cost += j.cost;
  }
  return [...groups.values()].sort((a, b) => b.gpu_hours - a.gpu_hours);
}
