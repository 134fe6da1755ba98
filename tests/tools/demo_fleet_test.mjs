// SPDX-License-Identifier: Apache-2.0
// `make demo`'s data generator (tools/demo-fleet.mjs) against a real vigil-fleet on a temporary
// ledger: what the demo shows must hold together. For every job with a trace, the ledger's busy
// share over the hours the trace stands for matches the GPU busy share vigil-fleet computed from
// the uploaded analysis (1 - its idle share), within the simulated wobble; and job 1001's
// "after the fix" analysis and its ledger hours after the fix are busier than before.
// Environment: VIGIL_FLEET_BIN. Exit 77 without it.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_TRACES, demoJobs, pushDemo } from '../../tools/demo-fleet.mjs';

const fleetBin = process.env.VIGIL_FLEET_BIN;
if (!fleetBin || !existsSync(fleetBin)) {
  console.log(`SKIPPED: vigil-fleet binary not found: ${fleetBin}`);
  process.exit(77);
}
const H = 3600;
const tolerance = 0.1; // The simulated +-0.08 wobble, clamped at 0.
let passed = 0;
let failed = 0;
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  ok ? passed++ : failed++;
};

const work = mkdtempSync(join(tmpdir(), 'vigil-demo-'));
const allowRoot = process.getuid() === 0 ? ['--allow-root'] : [];
const proc = spawn(fleetBin, ['serve', '--listen', '127.0.0.1:0', '--db', join(work, 'fleet.db'),
  '--log-level', 'warn', ...allowRoot], { stdio: ['ignore', 'pipe', 'inherit'] });
try {
  const port = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('vigil-fleet did not print its port in 30 s')), 30000);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    proc.on('exit', (code) => reject(new Error(`vigil-fleet exited with ${code} before listening`)));
  });
  const base = `http://127.0.0.1:${port}`;
  // Whole hours, so the ledger's hour buckets line up with the generator's phases.
  const nowS = Math.floor(Date.now() / 1000 / H) * H;
  const t0 = nowS - 4 * H;
  const pushed = await pushDemo(base, nowS);
  check(pushed.analyses === DEMO_TRACES.length, `uploaded ${pushed.analyses} analyses`);

  const jobs = demoJobs();
  const replies = {};
  for (const id of new Set(DEMO_TRACES.map((t) => t.job))) {
    const res = await fetch(`${base}/api/v1/jobs/${id}?since=${t0 - H}`);
    replies[id] = await res.json();
    check(res.ok, `GET /api/v1/jobs/${id}: ${res.status}`);
  }
  // Each trace against the ledger hours it stands for (its phase, up to the next or the job's end).
  const busyOf = {};
  for (const t of DEMO_TRACES) {
    const job = jobs.find((j) => j.id === t.job);
    const next = DEMO_TRACES.filter((o) => o.job === t.job && o.from > t.from).map((o) => o.from);
    const from = t0 + t.from * H;
    const until = t0 + Math.min(job.end, ...next) * H;
    const reply = replies[t.job];
    const analysis = reply.analyses.find((a) => a.reason === t.reason);
    const traceBusy = 1 - analysis.shares.idle;
    const hours = reply.hours.filter((h) => {
      const s = Date.parse(h.hour) / 1000;
      return s >= from && s + H <= until && h.gpu_hours > 0;
    });
    const gpuHours = hours.reduce((a, h) => a + h.gpu_hours, 0);
    const ledgerBusy = hours.reduce((a, h) => a + h.busy_gpu_hours, 0) / gpuHours;
    busyOf[`${t.job}|${t.reason}`] = { traceBusy, ledgerBusy };
    check(hours.length > 0 && Math.abs(ledgerBusy - traceBusy) <= tolerance,
      `job ${t.job} "${t.reason || t.file}": ledger busy ${(100 * ledgerBusy).toFixed(1)} % over ` +
      `${hours.length} h, trace busy ${(100 * traceBusy).toFixed(1)} %`);
  }
  const before = busyOf['1001|nightly profile'];
  const after = busyOf['1001|after the fix'];
  check(after.traceBusy > before.traceBusy + tolerance,
    `job 1001: the trace after the fix is busier (${(100 * after.traceBusy).toFixed(1)} % vs ${(100 * before.traceBusy).toFixed(1)} %)`);
  check(after.ledgerBusy > before.ledgerBusy + tolerance,
    `job 1001: the ledger after the fix is busier (${(100 * after.ledgerBusy).toFixed(1)} % vs ${(100 * before.ledgerBusy).toFixed(1)} %)`);
  // Held-but-idle never exceeds what busy leaves of the allocation.
  for (const [id, r] of Object.entries(replies)) {
    check(r.busy_gpu_hours + r.held_idle_gpu_hours <= r.gpu_hours * 1.001,
      `job ${id}: busy + held-idle (${(r.busy_gpu_hours + r.held_idle_gpu_hours).toFixed(2)}) <= allocated (${r.gpu_hours.toFixed(2)}) GPU-hours`);
  }
} catch (e) {
  check(false, e.stack || e.message);
} finally {
  proc.kill('SIGTERM');
  await new Promise((r) => proc.exitCode !== null ? r() : proc.on('exit', r));
  rmSync(work, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
