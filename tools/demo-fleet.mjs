// SPDX-License-Identifier: Apache-2.0
// Fills a running vigil-fleet with a small believable fleet (4 hosts x 4 GPUs, 3 teams, 6 jobs
// over the last 4 hours) for `make demo`, through the same ingest API vigild's push sink uses, and
// uploads vigil analyze reports of sample traces as the jobs' analyses. The story holds together:
// a job that has a trace is as busy in the ledger as its trace says its GPU was (1 - idle share of
// the analysis), and job 1001's "after the fix" trace is busier than its "nightly profile", as is
// the ledger from the hour of the fix on. tests/tools/demo_fleet_test.mjs checks this.
// Usage: node tools/demo-fleet.mjs http://127.0.0.1:9480
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { JOBS, makeBatches, toJson, uploadAnalyses } from '../tests/fleet_web/fleet_dataset.mjs';

const analysesDir = new URL('../tests/data/analyses/', import.meta.url);

// The GPU's busy share in an analysis: 1 - idle share of its first rank's temporal breakdown.
export function traceBusy(file) {
  const report = JSON.parse(readFileSync(new URL(file, analysesDir), 'utf8'));
  const breakdown = report.ranks[0].temporal_breakdown;
  return Math.round((1 - breakdown.idle_pct / 100) * 1000) / 1000;
}

// Which job gets which trace, and from which hour (as JOBS' start/end) the trace describes it.
export const DEMO_TRACES = [
  { job: '1001', file: 'h100_bert_small.json', host: 'gpu-node-01', reason: 'nightly profile', from: 0 },
  { job: '1001', file: 'nccl_sampled_rank-0.json', host: 'gpu-node-01', reason: 'after the fix', from: 2 },
  { job: '1002', file: 'a100_alexnet_sync.json', host: 'gpu-node-02', reason: 'held idle alert', from: 0.5 },
  { job: '1003', file: 'h100_bert_small.json', host: 'gpu-node-03', reason: '', from: 1 },
  { job: '1004', file: 'amd_mi250_minitoy.json', host: 'gpu-node-03', reason: 'new model', from: 0 },
];

// JOBS, with the busy share of every traced job (per phase) taken from its traces.
export function demoJobs() {
  return JOBS.map((j) => {
    const traces = DEMO_TRACES.filter((t) => t.job === j.id).sort((a, b) => a.from - b.from);
    if (traces.length === 0) return j;
    const phases = traces.map((t) => ({ from: t.from, busy: traceBusy(t.file) }));
    // Held-but-idle can only take what busy leaves of the allocation.
    return { ...j, busy: phases[0].busy, phases, held: Math.min(j.held, 1 - Math.max(...phases.map((p) => p.busy))) };
  });
}

// Pushes the demo fleet to `base`; returns {batches, samples, analyses}.
export async function pushDemo(base, nowS = Math.floor(Date.now() / 1000)) {
  const batches = makeBatches(nowS, 4, 60, 15, demoJobs());
  let samples = 0;
  for (const batch of batches) {
    const res = await fetch(`${base}/api/v1/ingest`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: toJson(batch),
    });
    if (!res.ok) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
    samples += batch.samples.length;
  }
  // In the order of the story: the nightly profile before the fix.
  const ids = await uploadAnalyses(base, {}, DEMO_TRACES);
  return { batches: batches.length, samples, analyses: ids.length };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const base = process.argv[2] || 'http://127.0.0.1:9480';
  try {
    const r = await pushDemo(base);
    console.log(`demo-fleet: pushed ${r.batches} batches (${r.samples} samples) of a simulated fleet` +
      ` and ${r.analyses} trace analyses`);
  } catch (e) {
    console.error(`demo-fleet: ${e.message}`);
    process.exit(1);
  }
}
