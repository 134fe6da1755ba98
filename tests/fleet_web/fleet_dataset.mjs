// SPDX-License-Identifier: Apache-2.0
// A small believable fleet for the dashboard test: 5 hosts x 4 GPUs, 3 teams, 6 jobs over the
// last 4 hours (the fifth host runs none: 0 % busy, not "no report"), reported every minute the
// way vigild's push sink sends it (docs/protocols.md "Fleet push"): per GPU vigil_gpu_up, SM
// activity, utilisation, memory, power, temperature and device energy; per job on a GPU the
// four integrated counters; job 1001's libvigil_client gauges (MFU, device-seconds per input
// byte). Batches of 15 minutes per host.

export const HOSTS = ['gpu-node-01', 'gpu-node-02', 'gpu-node-03', 'gpu-node-04', 'gpu-node-05'];
// What job 1001's application reports through libvigil_client.
export const JOB_1001_CLIENT = { mfu: 0.42, deviceSecondsPerInputByte: 2.5e-9 };
export const MEMORY_TOTAL = 80e9;
// The gauges of a GPU at SM activity sm (running: a job holds it).
export function gpuGauges(sm, running) {
  return {
    utilization: Math.min(1, sm + 0.05),
    power: running ? 120 + 500 * sm : 70,
    temperature: 35 + 40 * sm,
    memory: running ? 60e9 : 1e9,
  };
}
export const TEAMS = ['search', 'ads', 'research'];
const H = 3600;

// start/end in hours from the first tick; busy/held: shares of allocated time.
export const JOBS = [
  { id: '1001', team: 'search', model: 'llama-70b', user: 'alice', framework: 'pytorch', host: 0, gpus: [0, 1, 2, 3], start: 0, end: 4, busy: 0.85, held: 0.05 },
  { id: '1002', team: 'ads', model: 'dlrm', user: 'bob', framework: 'pytorch', host: 1, gpus: [0, 1, 2, 3], start: 0.5, end: 3.5, busy: 0.55, held: 0.35 },
  { id: '1003', team: 'search', model: 'bert-large', user: 'carol', framework: 'jax', host: 2, gpus: [0, 1], start: 1, end: 4, busy: 0.7, held: 0.1 },
  { id: '1004', team: 'research', model: 'diffusion-xl', user: 'dave', framework: 'pytorch', host: 2, gpus: [2, 3], start: 0, end: 2, busy: 0.2, held: 0.7 },
  { id: '1005', team: 'ads', model: 'dlrm', user: 'erin', framework: 'pytorch', host: 3, gpus: [0, 1, 2, 3], start: 2, end: 4, busy: 0.9, held: 0.02 },
  { id: '1006', team: 'research', model: 'llama-7b', user: 'alice', framework: 'jax', host: 3, gpus: [0, 1], start: 0, end: 1.5, busy: 0.4, held: 0.45 },
];

// Returns the batches (objects ready to POST) for ticks from now - hours to now.
export function makeBatches(nowS, hours = 4, tickS = 60, batchTicks = 15) {
  const t0 = nowS - hours * H;
  const ticks = Math.floor((hours * H) / tickS);
  const batches = [];
  HOSTS.forEach((host, hi) => {
    const gpuEnergy = [0, 0, 0, 0];
    const counters = new Map(); // job|gpu -> {alloc, busy, held, energy}
    let samples = [];
    let seq = t0 * 1000;
    const flush = (k) => {
      batches.push({ host, batch_id: `${host}-${t0}-${k}`, seq: seq++, samples });
      samples = [];
    };
    for (let k = 0; k <= ticks; k++) {
      const t = t0 + k * tickS;
      const tns = BigInt(t) * 1000000000n;
      if (k % batchTicks === 0) {
        samples.push({ name: 'vigil_daemon_info', labels: { version: '0.1.0' }, value: 1, time_ns: tns });
      }
      for (let g = 0; g < 4; g++) {
        const uuid = `GPU-${host}-${g}`;
        const gpuLabels = { gpu_uuid: uuid, gpu_model: 'NVIDIA H100 80GB HBM3' };
        const running = JOBS.filter((j) => j.host === hi && j.gpus.includes(g) && (t - t0) / H > j.start && (t - t0) / H <= j.end);
        // Slow wobble so the charts are not flat.
        const wobble = 0.08 * Math.sin((k + 7 * hi + 3 * g) / 9);
        let sm = 0.01;
        for (const j of running) sm = Math.min(1, Math.max(0, j.busy + wobble));
        const watts = running.length ? 120 + 500 * sm : 70;
        if (k > 0) gpuEnergy[g] += watts * tickS;
        if (k % batchTicks === 0) {
          samples.push({ name: 'vigil_gpu_info', labels: { ...gpuLabels, driver_version: '550.54.15' }, value: 1, time_ns: tns });
        }
        samples.push({ name: 'vigil_gpu_up', kind: 'gauge', labels: gpuLabels, value: 1, time_ns: tns });
        samples.push({ name: 'vigil_gpu_sm_active_ratio', kind: 'gauge', labels: gpuLabels, value: sm, time_ns: tns });
        samples.push({ name: 'vigil_gpu_energy_joules_total', kind: 'counter', labels: gpuLabels, value: gpuEnergy[g], time_ns: tns });
        const gauges = gpuGauges(sm, running.length > 0);
        samples.push({ name: 'vigil_gpu_utilization_ratio', kind: 'gauge', labels: gpuLabels, value: gauges.utilization, time_ns: tns });
        samples.push({ name: 'vigil_gpu_power_watts', kind: 'gauge', labels: gpuLabels, value: gauges.power, time_ns: tns });
        samples.push({ name: 'vigil_gpu_temperature_celsius', kind: 'gauge', labels: gpuLabels, value: gauges.temperature, time_ns: tns });
        samples.push({ name: 'vigil_gpu_memory_used_bytes', kind: 'gauge', labels: gpuLabels, value: gauges.memory, time_ns: tns });
        samples.push({ name: 'vigil_gpu_memory_total_bytes', kind: 'gauge', labels: gpuLabels, value: MEMORY_TOTAL, time_ns: tns });
        for (const j of running) {
          const key = `${j.id}|${g}`;
          const c = counters.get(key) || { alloc: 0, busy: 0, held: 0, energy: 0 };
          // Totals since the daemon started; a job first seen covers the last tick already.
          if (k > 0) {
            c.alloc += tickS;
            c.busy += tickS * Math.min(1, Math.max(0, j.busy + wobble));
            c.held += tickS * j.held;
            c.energy += watts * tickS;
          }
          counters.set(key, c);
          const labels = { gpu_uuid: uuid, job_id: j.id, team: j.team, model: j.model, user: j.user, framework: j.framework, rule: 'slurm' };
          samples.push({ name: 'vigil_gpu_allocated_seconds_total', kind: 'counter', labels, value: c.alloc, time_ns: tns });
          samples.push({ name: 'vigil_gpu_busy_seconds_total', kind: 'counter', labels, value: c.busy, time_ns: tns });
          samples.push({ name: 'vigil_gpu_held_idle_seconds_total', kind: 'counter', labels, value: c.held, time_ns: tns });
          samples.push({ name: 'vigil_job_gpu_energy_joules_total', kind: 'counter', labels, value: c.energy, time_ns: tns });
        }
      }
      const j1001 = JOBS[0];
      if (hi === j1001.host && (t - t0) / H > j1001.start && (t - t0) / H <= j1001.end) {
        const labels = { job_id: j1001.id, team: j1001.team, model: j1001.model, framework: j1001.framework };
        samples.push({ name: 'vigil_job_mfu_ratio', kind: 'gauge', labels, value: JOB_1001_CLIENT.mfu, time_ns: tns });
        samples.push({ name: 'vigil_job_device_seconds_per_input_byte', kind: 'gauge', labels, value: JOB_1001_CLIENT.deviceSecondsPerInputByte, time_ns: tns });
      }
      if ((k + 1) % batchTicks === 0 || k === ticks) flush(k);
    }
  });
  return batches;
}

// JSON with BigInt time stamps written as integers.
export function toJson(batch) {
  return JSON.stringify(batch, (k, v) => (typeof v === 'bigint' ? `__BIG${v}__` : v)).replace(/"__BIG(\d+)__"/g, '$1');
}

// vigil analyze reports of real sample traces (tests/data/analyses, written by
// `vigil analyze tests/data/traces/<name>.json.gz --json`), uploaded as analyses of the jobs above
// through POST /api/v1/analyses (docs/protocols.md "Analysis upload").
export const ANALYSES = [
  { job: '1001', file: 'nccl_sampled_rank-0.json', host: 'gpu-node-01', reason: 'nightly profile' },
  { job: '1001', file: 'h100_bert_small.json', host: 'gpu-node-01', reason: 'after the fix' },
  { job: '1002', file: 'a100_alexnet_sync.json', host: 'gpu-node-02', reason: 'held idle alert' },
  { job: '1003', file: 'h100_bert_small.json', host: 'gpu-node-03', reason: '' },
  { job: '1004', file: 'amd_mi250_minitoy.json', host: 'gpu-node-03', reason: 'new model' },
];

// Uploads ANALYSES to vigil-fleet at `base`; returns the ids. Throws on any refusal.
export async function uploadAnalyses(base, headers = {}) {
  const { readFile } = await import('node:fs/promises');
  const dir = new URL('../data/analyses/', import.meta.url);
  const ids = [];
  for (const a of ANALYSES) {
    const body = await readFile(new URL(a.file, dir), 'utf8');
    const q = new URLSearchParams({ job_id: a.job, host: a.host, reason: a.reason });
    const res = await fetch(`${base}/api/v1/analyses?${q}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });
    const reply = await res.json();
    if (!res.ok) throw new Error(`analysis upload of ${a.file} for job ${a.job}: ${res.status} ${JSON.stringify(reply)}`);
    ids.push(reply.id);
  }
  return ids;
}
