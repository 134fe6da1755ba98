// SPDX-License-Identifier: Apache-2.0
// End-to-end test of the job page's CPU profile in headless Chromium: starts the built
// vigil-fleet, pushes one job on two hosts through POST /api/v1/ingest, uploads one continuous
// profile window per host through POST /api/v1/cpu-profiles (as vigild does), then checks that
// the job page's top functions table shows the counts merged across the hosts (computed by hand
// below), that a job without profiles says so, and that the flame graph page draws the merged
// stacks in its frame and its search marks the right share. Exit 0: pass, 1: fail, 77: skipped.
//
// Environment: VIGIL_FLEET_BIN, VIGIL_WEB_NODE_MODULES, VIGIL_CHROMIUM (as dashboard_test.mjs).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const SKIP = 77;
const chromiumPath = process.env.VIGIL_CHROMIUM || '/usr/bin/chromium';
const fleetBin = process.env.VIGIL_FLEET_BIN;
const nodeModules = process.env.VIGIL_WEB_NODE_MODULES;
if (!existsSync(chromiumPath)) {
  console.log(`SKIPPED: no Chromium at ${chromiumPath} (install the Debian package chromium)`);
  process.exit(SKIP);
}
if (!nodeModules || !existsSync(join(nodeModules, 'playwright-core'))) {
  console.log(`SKIPPED: playwright-core is not installed under ${nodeModules}`);
  process.exit(SKIP);
}
if (!fleetBin || !existsSync(fleetBin)) {
  console.error(`FAIL: vigil-fleet binary not found: ${fleetBin}`);
  process.exit(1);
}
const { chromium } = createRequire(resolve(nodeModules, 'x.js'))('playwright-core');

const work = mkdtempSync(join(tmpdir(), 'vigil-web-cpuprof-'));
const failures = [];
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
};

const JOB = 'cpu-job-7';
const QUIET_JOB = 'quiet-job-8';
const HOSTS = ['web-node-a', 'web-node-b'];
// One window per host. Merged: matmul 30 + 5 = 35, allreduce 15, load 10; 60 samples in all.
const WINDOWS = {
  'web-node-a': 'train;main;step;matmul 30\ntrain;main;step;load 10\n',
  'web-node-b': 'train;main;step;matmul 5\ntrain;main;allreduce 15\n',
};
const EXPECTED_TOP = [
  // function, self, self %, total, total %
  ['matmul', '35', '58.3%', '35', '58.3%'],
  ['allreduce', '15', '25.0%', '15', '25.0%'],
  ['load', '10', '16.7%', '10', '16.7%'],
  ['main', '0', '0.0%', '60', '100.0%'],
  ['step', '0', '0.0%', '45', '75.0%'],
];

// Two reports, a minute apart, of one GPU per host held by `job` (as vigild's GPU collector
// pushes them); time_ns is written as an integer the JSON way, past 2^53.
function batch(host, job, nowS, seq) {
  const samples = [];
  for (const [i, t] of [nowS - 120, nowS - 60].entries()) {
    const gpu = { gpu_uuid: `GPU-${host}`, gpu_model: 'H100' };
    const jl = { gpu_uuid: `GPU-${host}`, job_id: job, team: 'vision', model: 'vit', user: 'ann', rule: 'slurm' };
    const time = `${t}000000000`;
    samples.push({ name: 'vigil_gpu_up', kind: 'gauge', labels: gpu, value: 1, time_ns: time });
    samples.push({ name: 'vigil_gpu_allocated_seconds_total', kind: 'counter', labels: jl, value: 60 * i, time_ns: time });
    samples.push({ name: 'vigil_gpu_busy_seconds_total', kind: 'counter', labels: jl, value: 30 * i, time_ns: time });
  }
  return JSON.stringify({ host, batch_id: `${host}-${job}-${seq}`, seq, samples }).replace(/"time_ns":"(\d+)"/g, '"time_ns":$1');
}

async function until(what, fn, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function main() {
  const allowRoot = process.getuid() === 0 ? ['--allow-root'] : [];
  const proc = spawn(fleetBin, ['serve', '--listen', '127.0.0.1:0', '--db', join(work, 'fleet.db'),
    '--log-level', 'warn', ...allowRoot], { stdio: ['ignore', 'pipe', 'inherit'] });
  let context;
  try {
    let out = '';
    const port = await new Promise((res, rej) => {
      const timer = setTimeout(() => rej(new Error('vigil-fleet did not print its port in 20 s')), 20000);
      proc.stdout.on('data', (d) => {
        out += d;
        const m = out.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
        if (m) {
          clearTimeout(timer);
          res(Number(m[1]));
        }
      });
      proc.on('exit', (code) => rej(new Error(`vigil-fleet exited with ${code} before listening`)));
    });
    const base = `http://127.0.0.1:${port}`;
    await until('/healthz', async () => (await fetch(`${base}/healthz`)).ok, 20000);

    const nowS = Math.floor(Date.now() / 1000);
    let seq = 1;
    for (const host of HOSTS) {
      for (const job of [JOB, QUIET_JOB]) {
        const res = await fetch(`${base}/api/v1/ingest`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: batch(host, job, nowS, seq++) });
        if (!res.ok) throw new Error(`ingest for ${host}: ${res.status} ${await res.text()}`);
      }
      const q = new URLSearchParams({ job_id: JOB, host, start_ns: `${nowS - 300}000000000`, end_ns: `${nowS - 240}000000000`, frequency_hz: '19' });
      const res = await fetch(`${base}/api/v1/cpu-profiles?${q}`, {
        method: 'POST', headers: { 'Content-Type': 'text/plain', 'Content-Encoding': 'gzip' }, body: gzipSync(WINDOWS[host]),
      });
      const reply = await res.json();
      check(res.ok && reply.samples === (host === HOSTS[0] ? 40 : 20), `profile window of ${host} stored (${res.status} ${JSON.stringify(reply)})`);
    }

    context = await chromium.launchPersistentContext(join(work, 'profile'), {
      executablePath: chromiumPath,
      headless: true,
      viewport: { width: 1280, height: 900 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const page = context.pages()[0] || (await context.newPage());
    const problems = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.url()}`);
      if (!r.url().startsWith(base) && !r.url().startsWith('about:')) problems.push(`request outside the service: ${r.url()}`);
    });
    const open = async (hash, name) => {
      await page.goto(`${base}/${hash}`);
      await page.waitForFunction((n) => document.body.dataset.page === n && document.body.dataset.state !== 'loading', name, { timeout: 15000 });
      check((await page.evaluate(() => document.body.dataset.state)) === 'ready', `page ${name} loads (${hash})`);
    };

    // The job page: the top functions merged across both hosts.
    await open(`#/job/${JOB}`, 'job');
    const sub = await page.$eval('#job-cpu-profile .card-head .sub', (e) => e.textContent);
    check(sub.startsWith('60 samples at 19 Hz from 2 hosts (web-node-a, web-node-b)'), `job page: profile summary (${sub})`);
    const rows = await page.$$eval('#job-cpu-profile tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    const got = rows.map((r) => [r[0], r[2], r[3], r[4], r[5]]);
    check(JSON.stringify(got) === JSON.stringify(EXPECTED_TOP), `job page: top functions (${JSON.stringify(got)})`);
    await page.screenshot({ path: join(work, 'job-cpu-profile.png'), fullPage: true });

    // A job of the ledger without profiles says so, and nothing fails.
    await open(`#/job/${QUIET_JOB}`, 'job');
    const none = await page.$eval('#job-cpu-profile', (e) => e.textContent);
    check(none.includes('No CPU profile'), `a job without profiles says so (${none.slice(0, 60)})`);

    // The flame graph page, from the job page's link.
    await open(`#/job/${JOB}`, 'job');
    await page.click('#flamegraph-link');
    await page.waitForFunction(() => document.body.dataset.page === 'flamegraph' && document.body.dataset.state === 'ready', null, { timeout: 15000 });
    const frame = await (await page.waitForSelector('#flamegraph-frame')).contentFrame();
    await frame.waitForSelector('#chart .frame', { timeout: 10000 });
    const labels = await frame.$$eval('#chart .frame', (els) => els.map((e) => e.textContent));
    check(['train', 'main', 'step', 'matmul', 'allreduce', 'load'].every((l) => labels.some((x) => x.startsWith(l))),
      `flame graph draws the merged frames (${labels.length} frames)`);
    const title = await frame.$eval('#title', (e) => e.textContent);
    check(title.startsWith(`vigil-fleet: job ${JOB}, 2 hosts`), `flame graph title (${title})`);
    await frame.fill('#search', 'matmul');
    await frame.waitForFunction(() => document.getElementById('matched').textContent !== '', null, { timeout: 5000 });
    const matched = await frame.$eval('#matched', (e) => e.textContent);
    check(matched.includes('58.33'), `flame graph search: matmul is 35 of 60 samples (${matched})`);
    // Split by host: each host's stacks under its own root, 40 and 20 samples.
    await page.click('#flamegraph-split');
    await page.waitForFunction(() => document.body.dataset.state === 'ready'
      && (document.getElementById('flamegraph-frame')?.srcdoc || '').includes('"web-node-a"'), null, { timeout: 15000 });
    const split = await (await page.waitForSelector('#flamegraph-frame')).contentFrame();
    await split.waitForSelector('#chart .frame', { timeout: 10000 });
    const hostFrames = await split.$$eval('#chart .frame', (els) => els.map((e) => e.textContent).filter((t) => t.startsWith('web-node-')));
    check(hostFrames.length === 2, `flame graph by host: one root per host (${hostFrames.join(', ')})`);
    await split.fill('#search', 'web-node-a');
    await split.waitForFunction(() => document.getElementById('matched').textContent !== '', null, { timeout: 5000 });
    const hostShare = await split.$eval('#matched', (e) => e.textContent);
    check(hostShare.includes('66.67%'), `flame graph by host: web-node-a is 40 of 60 samples (${hostShare})`);
    const sandbox = await page.$eval('#flamegraph-frame', (e) => e.getAttribute('sandbox'));
    check(sandbox === 'allow-scripts', 'the flame graph runs sandboxed, away from the token');
    await page.screenshot({ path: join(work, 'flamegraph.png'), fullPage: true });

    check(problems.length === 0, `no console errors or failed requests${problems.length ? `: ${problems.join(' | ')}` : ''}`);
  } finally {
    if (context) await context.close().catch(() => {});
    proc.kill('SIGTERM');
    await new Promise((r) => (proc.exitCode !== null ? r() : proc.on('exit', r)));
  }
}

main()
  .catch((e) => {
    failures.push(e.stack || String(e));
    console.error(e.stack || String(e));
  })
  .finally(() => {
    if (failures.length) {
      console.error(`${failures.length} check(s) failed; ledger and screenshots kept in ${work}`);
      process.exit(1);
    }
    rmSync(work, { recursive: true, force: true });
    console.log('PASS');
  });
