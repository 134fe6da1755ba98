// SPDX-License-Identifier: Apache-2.0
// Fills a running vigil-fleet with a small believable fleet (4 hosts x 4 GPUs, 3 teams, 6 jobs
// over the last 4 hours) for `make demo`, through the same ingest API vigild's push sink uses, and
// uploads a few vigil analyze reports of sample traces as the jobs' analyses.
// Usage: node tools/demo-fleet.mjs http://127.0.0.1:9480
import { makeBatches, toJson, uploadAnalyses } from '../tests/fleet_web/fleet_dataset.mjs';

const base = process.argv[2] || 'http://127.0.0.1:9480';
const batches = makeBatches(Math.floor(Date.now() / 1000));
let samples = 0;
for (const batch of batches) {
  const res = await fetch(`${base}/api/v1/ingest`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: toJson(batch),
  });
  if (!res.ok) {
    console.error(`demo-fleet: ingest answered ${res.status}: ${await res.text()}`);
    process.exit(1);
  }
  samples += batch.samples.length;
}
console.log(`demo-fleet: pushed ${batches.length} batches (${samples} samples) of a simulated fleet`);
// A few vigil analyze reports of sample traces, so the Workflows and job pages have analyses.
const ids = await uploadAnalyses(base).catch((e) => {
  console.error(`demo-fleet: ${e.message}`);
  process.exit(1);
});
console.log(`demo-fleet: uploaded ${ids.length} trace analyses`);
