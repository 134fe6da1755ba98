// SPDX-License-Identifier: Apache-2.0
// End-to-end test of the vigil-fleet dashboard: starts the built vigil-fleet on a free loopback
// port with an empty ledger, pushes a small fleet through POST /api/v1/ingest, then drives
// Debian's Chromium (playwright-core, no browser download) through every page: pages load, the
// charts draw the pushed data, the attribution drill-down works, the heatmap tells 0 % from no
// report and opens a host, the host and GPU pages chart the GPUs over exactly the chosen window
// (presets, custom range, auto-refresh), units read right, the new pages' screenshots hold drawn
// content where their charts and tables are, and the console stays clean.
// Exit 0: pass, 1: fail, 77: skipped (no chromium / playwright-core).
//
// Environment: VIGIL_FLEET_BIN (the vigil-fleet binary), VIGIL_WEB_NODE_MODULES (where
// playwright-core is installed), VIGIL_CHROMIUM (default /usr/bin/chromium), VIGIL_WEB_OUT
// (where screenshots go; default a temp dir).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ANALYSES, HOSTS, JOBS, JOB_1001_CLIENT, TEAMS, makeBatches, toJson, uploadAnalyses } from './fleet_dataset.mjs';
import { checkRegions } from './screenshot_check.mjs';

const SKIP = 77;
const chromiumPath = process.env.VIGIL_CHROMIUM || '/usr/bin/chromium';
const fleetBin = process.env.VIGIL_FLEET_BIN;
const nodeModules = process.env.VIGIL_WEB_NODE_MODULES;

function skip(why) {
  console.log(`SKIPPED: ${why}`);
  process.exit(SKIP);
}
if (!existsSync(chromiumPath)) skip(`no Chromium at ${chromiumPath} (install the Debian package chromium)`);
if (!nodeModules || !existsSync(join(nodeModules, 'playwright-core'))) {
  skip(`playwright-core is not installed under ${nodeModules} (build the vigil_fleet_web target first)`);
}
if (!fleetBin || !existsSync(fleetBin)) {
  console.error(`FAIL: vigil-fleet binary not found: ${fleetBin}`);
  process.exit(1);
}
const { chromium } = createRequire(resolve(nodeModules, 'x.js'))('playwright-core');

const work = mkdtempSync(join(tmpdir(), 'vigil-web-'));
const outDir = process.env.VIGIL_WEB_OUT || work;
mkdirSync(outDir, { recursive: true });
const failures = [];
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
};

async function until(what, fn, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ''}`);
}

// vigil-fleet refuses root unless told (CI runs as root).
const allowRoot = process.getuid() === 0 ? ['--allow-root'] : [];

function startFleet() {
  const proc = spawn(fleetBin, ['serve', '--listen', '127.0.0.1:0', '--db', join(work, 'fleet.db'),
    '--price-per-gpu-hour', '2.5', '--log-level', 'warn', ...allowRoot], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const port = new Promise((resolve, reject) => {
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) resolve(Number(m[1]));
    });
    proc.on('exit', (code) => reject(new Error(`vigil-fleet exited with ${code} before listening`)));
  });
  return { proc, port };
}

// Counts the pixels of a canvas within `tol` of an RGB colour (or matching a predicate).
function countPixels(page, selector, match) {
  return page.evaluate(([sel, m]) => {
    const pred = typeof m === 'string' ? new Function('r', 'g', 'b', `return ${m};`) : null;
    let n = 0;
    for (const c of document.querySelectorAll(sel)) {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      for (let i = 0; i < d.length; i += 4) {
        if (d[i + 3] < 200) continue;
        if (pred ? pred(d[i], d[i + 1], d[i + 2])
          : Math.abs(d[i] - m[0]) <= 6 && Math.abs(d[i + 1] - m[1]) <= 6 && Math.abs(d[i + 2] - m[2]) <= 6) n++;
      }
    }
    return n;
  }, [selector, match]);
}

async function main() {
  const { proc, port: portP } = startFleet();
  let context;
  try {
    const port = await Promise.race([portP, new Promise((_, rej) => setTimeout(() => rej(new Error('vigil-fleet did not print its port in 20 s')), 20000))]);
    const base = `http://127.0.0.1:${port}`;
    await until('/healthz', async () => (await fetch(`${base}/healthz`)).ok, 20000);

    // Push the fleet.
    const batches = makeBatches(Math.floor(Date.now() / 1000));
    let samples = 0;
    for (const b of batches) {
      const res = await fetch(`${base}/api/v1/ingest`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: toJson(b) });
      const body = await res.json();
      if (!res.ok || !body.accepted) throw new Error(`ingest of ${b.batch_id}: ${res.status} ${JSON.stringify(body)}`);
      samples += body.samples;
    }
    console.log(`pushed ${batches.length} batches, ${samples} samples from ${HOSTS.length} hosts`);
    const analysisIds = await uploadAnalyses(base);
    check(analysisIds.length === ANALYSES.length && new Set(analysisIds).size === ANALYSES.length,
      `uploaded ${ANALYSES.length} vigil analyze reports (ids ${analysisIds.join(', ')})`);
    const attr = await (await fetch(`${base}/api/v1/attribution?by=team&since=24h`)).json();
    const teamsInLedger = attr.rows.map((r) => r.key);
    check(TEAMS.every((t) => teamsInLedger.includes(t)), `ledger has the teams pushed (${teamsInLedger.join(', ')})`);
    const nowS = Date.now() / 1000;
    check(attr.since_s % 60 === 0 && [86400, 86460].includes(attr.until_s - attr.since_s) && Math.abs(attr.until_s - nowS) < 120
      && attr.whole_hour_edges.length === 0,
      `attribution counts exactly the last 24 h, to the minute (${attr.since} – ${attr.until})`);

    const index = await fetch(`${base}/`);
    check(index.ok && index.headers.get('content-type').startsWith('text/html'), 'GET / serves index.html');
    const missing = await fetch(`${base}/assets/nope.js`);
    check(missing.status === 404, 'an unknown asset is 404');

    context = await chromium.launchPersistentContext(join(work, 'profile'), {
      executablePath: chromiumPath,
      headless: true,
      viewport: { width: 1280, height: 800 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const page = context.pages()[0] || (await context.newPage());
    const problems = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.url()}`);
      if (!r.url().startsWith(base)) problems.push(`request outside the service: ${r.url()}`);
    });
    const ready = (name) => page.waitForFunction(
      (n) => document.body.dataset.page === n && document.body.dataset.state !== 'loading', name, { timeout: 15000 });
    const state = () => page.evaluate(() => document.body.dataset.state);
    const open = async (hash, name) => {
      await page.goto(`${base}/${hash}`);
      await ready(name);
      check((await state()) === 'ready', `page ${name} loads (${hash})`);
    };
    // A full-page screenshot, kept, and checked for drawn content in each [selector, share].
    const shot = async (name, regions) => {
      const png = await page.screenshot({ fullPage: true });
      writeFileSync(join(outDir, `${name}.png`), png);
      const boxes = await Promise.all(regions.map(([sel]) => page.$eval(sel, (e) => {
        const r = e.getBoundingClientRect();
        return { x: r.x + window.scrollX, y: r.y + window.scrollY, width: r.width, height: r.height };
      }).catch(() => null)));
      const bad = checkRegions(png, regions.map(([sel, minShare], i) => ({ name: sel, box: boxes[i], minShare })));
      check(bad.length === 0, `screenshot ${name}.png holds content in ${regions.map((r) => r[0]).join(', ')}${bad.length ? `: ${bad.join('; ')}` : ''}`);
    };

    // Overview.
    await open('#/overview', 'overview');
    const legend = await page.$$eval('#chart-teams .u-legend .u-series .u-label', (els) => els.map((e) => e.textContent));
    check(TEAMS.every((t) => legend.includes(t)), `overview legend lists the teams (${legend.join(', ')})`);
    const teamColours = [[37, 99, 235], [245, 158, 11], [16, 185, 129]];
    for (const [i, c] of teamColours.entries()) {
      const n = await countPixels(page, '#chart-teams canvas', c);
      check(n > 300, `overview: bars of team #${i + 1} drawn (${n} px)`);
    }
    const busyLine = await countPixels(page, '#chart-util canvas', [37, 99, 235]);
    check(busyLine > 100, `overview: utilisation line drawn (${busyLine} px)`);
    const kpi = await page.$eval('.kpi .kpi-value', (e) => e.textContent);
    check(Number.parseFloat(kpi) > 10, `overview: GPU-hours total shown (${kpi})`);
    const wasters = await page.$$eval('.card table.grid tbody tr', (rows) => rows.map((r) => r.textContent));
    check(wasters.some((t) => t.includes('1002')), 'overview: the held-idle job 1002 is among the top wasters');
    const overviewSub = await page.$eval('.page-head .sub', (e) => e.textContent);
    check(overviewSub.includes(' counted)') && !overviewSub.includes('whole hours'),
      `overview: names the window it counted (${overviewSub})`);
    await page.screenshot({ path: join(outDir, 'overview.png'), fullPage: true });

    // Attribution drill-down: team -> model -> user -> job -> job page.
    await open('#/attribution', 'attribution');
    const rowKeys = () => page.$$eval('#page-attribution tbody tr td.key', (tds) => tds.map((t) => t.textContent));
    const top = await rowKeys();
    check(TEAMS.every((t) => top.includes(t)), `attribution lists the teams (${top.join(', ')})`);
    const drill = async (key, crumb) => {
      await page.click(`#page-attribution tbody tr.drill:has(td.key:text-is("${key}"))`);
      await page.waitForFunction((c) => document.body.dataset.state === 'ready'
        && document.querySelector('#crumbs .here')?.textContent === c, crumb, { timeout: 10000 });
      return rowKeys();
    };
    await page.screenshot({ path: join(outDir, 'attribution.png'), fullPage: true });
    const models = await drill('search', 'Team: search');
    check(models.length === 2 && models.includes('llama-70b') && models.includes('bert-large'),
      `drill-down to team search shows its models (${models.join(', ')})`);
    const users = await drill('llama-70b', 'Model: llama-70b');
    check(users.length === 1 && users[0] === 'alice', `drill-down to model llama-70b shows its user (${users.join(', ')})`);
    const jobs = await drill('alice', 'User: alice');
    check(jobs.length === 1 && jobs[0] === '1001', `drill-down to user alice shows job 1001 (${jobs.join(', ')})`);
    await page.click('#page-attribution tbody tr.drill');
    await ready('job');
    check(page.url().endsWith('#/job/1001'), `a job row opens the job page (${page.url()})`);

    // Job page.
    await open('#/job/1002', 'job');
    const jobBusy = await countPixels(page, '#chart-job-hours canvas', [37, 99, 235]);
    const jobHeld = await countPixels(page, '#chart-job-hours canvas', [245, 158, 11]);
    check(jobBusy > 200 && jobHeld > 200, `job page: busy and held-idle bars drawn (${jobBusy}, ${jobHeld} px)`);
    const eff = await countPixels(page, '#chart-job-eff canvas', [16, 185, 129]);
    check(eff > 50, `job page: efficiency line drawn (${eff} px)`);
    await page.screenshot({ path: join(outDir, 'job.png'), fullPage: true });
    const gpuRows = await page.$$eval('code', (els) => els.map((e) => e.textContent).filter((t) => t.startsWith('GPU-')));
    check(gpuRows.length === 4, `job page lists the job's 4 GPUs (${gpuRows.length})`);
    const kpis = async () => Object.fromEntries(await page.$$eval('.kpi', (els) => els.map((e) => [
      e.querySelector('.kpi-label').textContent, e.querySelector('.kpi-value').textContent])));
    const job1002 = await (await fetch(`${base}/api/v1/jobs/1002`)).json();
    const k1002 = await kpis();
    check(k1002['Mean SM activity'] === `${(100 * job1002.mean_sm_active_ratio).toFixed(1)}%`
      && k1002.Busy === `${(100 * job1002.busy_ratio).toFixed(1)}%`,
      `job page: mean SM activity (${k1002['Mean SM activity']}) is the API's SM activity, the busy share (${k1002.Busy}) its own KPI`);
    check(k1002['Device-s per GB'] === '—', `job page: a job with no input bytes reported shows none (${k1002['Device-s per GB']})`);
    await open('#/job/1001', 'job');
    const k1001 = await kpis();
    const perGB = (JOB_1001_CLIENT.deviceSecondsPerInputByte * 1e9).toPrecision(3);
    check(k1001['Device-s per GB'] === `${perGB} device-s/GB`, `job page: device-seconds per input byte beside MFU (${k1001['Device-s per GB']}, want ${perGB})`);
    check(k1001['FLOP/s (est.)'] !== undefined && (await page.textContent('#page-job')).includes(`MFU ${(100 * JOB_1001_CLIENT.mfu).toFixed(1)}%`), 'job page: MFU shown');
    const gpuLink = await page.$eval('#page-job a[href^="#/gpu/"]', (a) => a.getAttribute('href'));
    check(gpuLink === '#/gpu/gpu-node-01/GPU-gpu-node-01-0', `job page links its GPUs to their pages (${gpuLink})`);

    // Heatmap: one row per host, coloured cells.
    await open('#/heatmap', 'heatmap');
    const blue = await countPixels(page, '#heatmap', 'b > 150 && b - r > 60');
    check(blue > 2000, `heatmap cells drawn (${blue} px)`);
    await page.screenshot({ path: join(outDir, 'heatmap.png'), fullPage: true });
    const heldView = await page.$('.seg a[href="#/heatmap?metric=held"]');
    check(Boolean(heldView), 'heatmap offers the held-but-idle view');
    // 24 h window, 4 h of reports: most cells are "no report", hatched grey lines on white;
    // gpu-node-05 runs no job: its cells are the scale's 0 % colour, a different pattern.
    // Hatch lines: slate grey (148,163,184) and its blend with white; no colour of the blue scale
    // is that grey (where the scale is as dark, its blue is far stronger).
    const hatched = await countPixels(page, '#heatmap', 'r > 120 && r < 190 && b - r > 25 && b - r < 45 && g - r > 8 && g - r < 22');
    const zero = await countPixels(page, '#heatmap', [224, 242, 254]);
    check(hatched > 2000, `heatmap: buckets with no report are hatched (${hatched} px of hatch lines)`);
    check(zero > 500, `heatmap: a host at 0 % busy is drawn in the scale's 0 % colour (${zero} px)`);
    const legendHatch = await page.$eval('#legend-nodata', (e) => getComputedStyle(e).backgroundImage);
    check(legendHatch.includes('repeating-linear-gradient'), 'heatmap legend shows "no report" as the hatch pattern');
    const geo = JSON.parse(await page.$eval('#heatmap', (c) => c.dataset.geometry));
    const now = Date.now() / 1000;
    check(Math.abs(geo.to - now) < 120 && geo.to - geo.from === 86400,
      `heatmap spans exactly the last 24 h, ending now (${new Date(geo.from * 1000).toISOString()} – ${new Date(geo.to * 1000).toISOString()})`);
    const row = geo.hosts.indexOf('gpu-node-02');
    await page.click('#heatmap', { position: { x: geo.left + geo.plotW - 20, y: geo.top + row * geo.rowH + geo.rowH / 2 } });
    await ready('host');
    check(page.url().endsWith('#/host/gpu-node-02'), `a heatmap cell opens its host's page (${page.url()})`);

    // The host page (opened from the heatmap above).
    await open('#/host/gpu-node-02', 'host');
    const hostApi = await (await fetch(`${base}/api/v1/hosts/gpu-node-02?since=24h&step=5m`)).json();
    const hostGpuRows = await page.$$eval('#page-host tr.gpu-row', (rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
    check(hostGpuRows.length === 4, `host page lists its 4 GPUs (${hostGpuRows.length})`);
    const g0 = hostApi.gpus[0].summary;
    check(hostGpuRows[0][2] === `${(100 * g0.utilization_ratio).toFixed(1)}%` && hostGpuRows[0][6] === `${Math.round(g0.power_watts)} W`,
      `host page: GPU 0's utilisation and power as the API gives them (${hostGpuRows[0][2]}, ${hostGpuRows[0][6]})`);
    for (const id of ['util', 'sm', 'mem', 'power', 'temp', 'alloc']) {
      // The GPUs' lines overlap (alike GPUs): count the pixels of any line colour (saturated).
      const n = await countPixels(page, `#chart-gpu-${id} canvas`, 'Math.max(r, g, b) - Math.min(r, g, b) > 80');
      check(n > 150, `host page: ${id} chart drawn (${n} px of lines)`);
    }
    const flopsCard = await page.textContent('#page-host');
    check(flopsCard.includes('Not reported'), 'host page: the FLOP/s estimate, not pushed here, says "Not reported" (no empty chart)');
    const hostJobs = await page.$$eval('#page-host tr.job-row td.key', (tds) => tds.map((t) => t.textContent));
    check(hostJobs.length === 1 && hostJobs[0] === '1002', `host page lists the jobs on it (${hostJobs.join(', ')})`);
    const win = await page.textContent('#series-window');
    check(win.includes('5 min buckets'), `host page: 24 h in 5-minute buckets (${win})`);
    await shot('host', [['#series-kpis', 0.02], ['#chart-gpu-util', 0.02], ['#chart-gpu-power', 0.02], ['#chart-gpu-temp', 0.02],
      ['#chart-gpu-mem', 0.02], ['#page-host table.grid', 0.05]]);

    // Time windows: a preset ends now; a custom range is exact and clipped to now; auto-refresh.
    await page.selectOption('#range', '1h');
    await page.waitForFunction(() => location.search.includes('range=1h') && document.body.dataset.state === 'ready', null, { timeout: 10000 });
    const oneHour = await page.evaluate(async () => {
      const u = new URL(location.href);
      return { search: u.search, sub: document.querySelector('#series-window').textContent };
    });
    check(oneHour.sub.includes('1 min buckets'), `window 1 h: one-minute buckets (${oneHour.sub})`);
    const from = new Date(Date.now() - 3 * 3600e3);
    const to = new Date(Date.now() + 3600e3); // In the future: clipped to now.
    const local = (d) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}T${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
    await page.selectOption('#range', 'custom');
    await page.fill('#range-from', local(from));
    await page.fill('#range-to', local(to));
    await page.click('#range-apply');
    await page.waitForFunction(() => location.search.includes('from=') && document.body.dataset.state === 'ready', null, { timeout: 10000 });
    const custom = await page.evaluate(() => Object.fromEntries(new URL(location.href).searchParams));
    check(Number(custom.from) === Math.floor(new Date(local(from)).getTime() / 1000), `custom range: from kept (${custom.from})`);
    const customSub = await page.textContent('#series-window');
    check(customSub.includes('1 min buckets'), `custom range of 3 h, clipped to now: one-minute buckets (${customSub})`);
    await page.selectOption('#refresh', '30s');
    await page.waitForFunction(() => location.search.includes('refresh=30s') && document.body.dataset.state === 'ready', null, { timeout: 5000 });
    check((await page.$eval('#refresh', (e) => e.value)) === '30s' && (await page.$eval('#range', (e) => e.value)) === 'custom',
      'auto-refresh 30 s is set and the custom range kept');
    const asked = Date.now();
    await page.waitForRequest((r) => r.url().includes('/api/v1/hosts/gpu-node-02?'), { timeout: 45000 });
    const after = (Date.now() - asked) / 1000;
    check(after > 25 && after < 40, `auto-refresh: the page asks again after about 30 s (${after.toFixed(1)} s)`);
    await ready('host');
    await page.selectOption('#refresh', 'off');
    await page.selectOption('#range', '24h');
    await page.waitForFunction(() => location.search.includes('range=24h') && !location.search.includes('from=') && document.body.dataset.state === 'ready', null, { timeout: 10000 });

    // One GPU's page, from the host page's GPU table.
    await page.click('#page-host tr.gpu-row');
    await ready('gpu');
    check(page.url().endsWith('#/gpu/gpu-node-02/GPU-gpu-node-02-0'), `a GPU row opens the GPU's page (${page.url()})`);
    const gpuJobs = await page.$$eval('#page-gpu tr.job-row td.key', (tds) => tds.map((t) => t.textContent));
    check(gpuJobs.length === 1 && gpuJobs[0] === '1002', `GPU page lists the job on it (${gpuJobs.join(', ')})`);
    await shot('gpu', [['#series-kpis', 0.02], ['#chart-gpu-util', 0.02], ['#chart-gpu-sm', 0.02], ['#chart-gpu-alloc', 0.02]]);

    // Hosts list.
    await open('#/hosts', 'hosts');
    const hostRows = await page.$$eval('#page-hosts tr.host-row td.key', (tds) => tds.map((t) => t.textContent));
    check(hostRows.length === HOSTS.length && HOSTS.every((x) => hostRows.includes(x)), `hosts page lists the ${HOSTS.length} hosts (${hostRows.join(', ')})`);
    await shot('hosts', [['#page-hosts table.grid', 0.05]]);
    await page.click('#page-hosts tr.host-row:has-text("gpu-node-05")');
    await ready('host');
    check(page.url().endsWith('#/host/gpu-node-05'), `a host row opens its page (${page.url()})`);

    // Jobs and workflows.
    await open('#/jobs', 'jobs');
    const jobCount = await page.$$eval('#page-jobs tbody tr', (r) => r.length);
    check(jobCount === JOBS.length, `jobs page lists ${JOBS.length} jobs (${jobCount})`);
    const row1001 = await page.$$eval('#page-jobs tbody tr', (rows) => rows.map((r) => [...r.children].map((c) => c.textContent)).find((c) => c[0] === '1001'));
    check(row1001 && row1001.includes(`${(100 * JOB_1001_CLIENT.mfu).toFixed(1)}%`) && row1001.includes((JOB_1001_CLIENT.deviceSecondsPerInputByte * 1e9).toPrecision(3)),
      `jobs page: job 1001's MFU and device-seconds per GB side by side (${row1001 && row1001.slice(-4).join(' | ')})`);
    // Asking for profiling from the Workflows page: an empty job id and a job that does not run
    // are refused with the reason; a running job's request (its hosts report no control address
    // here, so it ends failed with the reason) is listed.
    await open('#/workflows', 'workflows');
    const workflowsSub = await page.$eval('#page-workflows .page-head .sub', (e) => e.textContent);
    check(workflowsSub.includes(' counted'), `workflows: names the ledger window it counted (${workflowsSub})`);
    await page.click('#profile-start');
    const emptyMsg = await page.textContent('#profile-status');
    check(emptyMsg.includes('enter the id'), `workflows: an empty job id is refused in the page (${emptyMsg})`);
    await page.fill('#profile-job', 'no-such-job');
    const problemsBefore = problems.length;
    await page.click('#profile-start');
    await page.waitForFunction(() => document.querySelector('#profile-status')?.classList.contains('form-error') &&
      !document.querySelector('#profile-status').textContent.includes('enter the id'), null, { timeout: 10000 });
    const refused = await page.textContent('#profile-status');
    check(/no-such-job|no host|not running|recent/i.test(refused), `workflows: the service's refusal is shown (${refused})`);
    // That refusal is the one failed request expected: a 404 for the POST (and Chromium's log of it).
    const expected = problems.splice(problemsBefore);
    check(expected.every((x) => x.includes('404')), `workflows: the refusal is the only failed request (${expected.join(' | ')})`);
    await page.fill('#profile-job', '1001');
    await page.fill('#profile-duration', '500');
    await page.fill('#profile-reason', 'dashboard test');
    await page.click('#profile-start');
    await page.waitForSelector('#profile-notice', { timeout: 10000 });
    const notice = await page.textContent('#profile-notice');
    check(notice.includes('job 1001'), `workflows: the accepted request is confirmed (${notice})`);
    await page.screenshot({ path: join(outDir, 'workflows.png'), fullPage: true });
    const profRows = await page.$$eval('#profiling-requests tr.profiling-row', (rows) => rows.map((r) => r.textContent));
    check(profRows.length === 1 && profRows[0].includes('1001') && profRows[0].includes('dashboard test'),
      `workflows: the profiling request is listed with its job and reason (${JSON.stringify(profRows)})`);
    const shareRows = await page.$$eval('#workflow-shares .share-row', (rows) => rows.map((r) => ({
      label: r.querySelector('.share-label').textContent,
      segs: [...r.querySelectorAll('.share')].map((s) => ({ cls: s.className, share: Number(s.dataset.share), px: s.getBoundingClientRect().width })),
    })));
    const analysedJobs = new Set(ANALYSES.map((a) => a.job));
    check(shareRows.length === 1 + analysedJobs.size && shareRows[0].label === 'Fleet',
      `workflows: one share bar for the fleet and one per analysed job (${shareRows.map((r) => r.label).join(', ')})`);
    const fleetSegs = shareRows[0]?.segs || [];
    const compute = fleetSegs.find((x) => x.cls.includes('share-compute'));
    const idle = fleetSegs.find((x) => x.cls.includes('share-idle'));
    const sum = fleetSegs.reduce((a, x) => a + x.share, 0);
    check(compute && compute.px > 2 && idle && idle.px > 100 && Math.abs(sum - 1) < 1e-6,
      `workflows: fleet bar drawn with compute and idle segments summing to 100% (${fleetSegs.map((x) => `${x.cls.split(' ').pop()} ${x.px.toFixed(0)}px`).join(', ')})`);
    const insightRows = await page.$$eval('#page-workflows tr.insight-row', (rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
    const low = insightRows.find((r) => r[0].includes('low_gpu_utilization'));
    check(low && low[2] === String(analysedJobs.size) && low[1] === 'critical',
      `workflows: low_gpu_utilization fires on all ${analysedJobs.size} jobs, critical (${JSON.stringify(low)})`);
    check(insightRows.some((r) => r[0].includes('exposed_communication')), 'workflows: exposed_communication listed');
    const gainLinks = await page.$$eval('#page-workflows tr.gain-row td.key a', (as) => as.map((a) => a.textContent));
    check(gainLinks.length === analysedJobs.size, `workflows: top jobs by gain (${gainLinks.join(', ')})`);
    // % of roofline per job: the cell says what the API says (a figure with its coverage, or a
    // dash where no kernel has a work model on a GPU with peaks).
    const roofCells = await page.$$eval('#page-workflows tr.gain-row', (rows) => rows.map((r) => ({
      job: r.querySelector('td.key a').textContent, text: r.querySelector('.roofline')?.textContent })));
    const range = await page.$eval('#range', (sel) => sel.value);
    const wfApi = await (await fetch(`${base}/api/v1/workflows?since=${encodeURIComponent(range)}`)).json();
    const roofOk = roofCells.length === analysedJobs.size && roofCells.every((c) => {
      const j = wfApi.top_jobs.find((x) => x.job_id === c.job);
      if (!j || !('roofline_pct' in j) || c.text == null) return false;
      return j.roofline_pct == null ? c.text === '—'
        : c.text.startsWith(`${j.roofline_pct.toFixed(1)}%`) && c.text.includes(`${(100 * j.roofline_coverage).toFixed(1)}% modelled`);
    });
    check(roofOk, `workflows: % of roofline per job as the API gives it (${JSON.stringify(roofCells)})`);
    const wfText = await page.textContent('#page-workflows');
    check(wfText.includes('pytorch') && wfText.includes('jax'), 'workflows page still shows GPU-hours by framework');
    await page.click(`#page-workflows tr.gain-row td.key a:text-is("${gainLinks[0]}")`);
    await ready('job');
    check(page.url().endsWith(`#/job/${gainLinks[0]}`), `a top job links to its job page (${page.url()})`);

    // A job's analyses, and one opened.
    await open('#/job/1001', 'job');
    const analysisRows = await page.$$eval('#job-analyses tr.analysis-row', (rows) => rows.map((r) => r.textContent));
    check(analysisRows.length === 2 && analysisRows.some((t) => t.includes('nightly profile')),
      `job page lists job 1001's 2 analyses (${analysisRows.length})`);
    await page.click('#job-analyses tr.analysis-row:has-text("nightly profile")');
    await page.waitForFunction(() => document.body.dataset.state === 'ready' && document.querySelector('#analysis-detail'), null, { timeout: 10000 });
    check(/#\/job\/1001\?analysis=\d+$/.test(page.url()), `clicking an analysis opens it (${page.url()})`);
    const shown = await page.$$eval('#analysis-detail .insight', (els) => els.map((e) => ({
      id: e.dataset.insight, title: e.querySelector('.insight-title').textContent,
      evidence: e.querySelectorAll('table.grid tbody tr').length, rec: e.querySelector('.recommendation')?.textContent || '',
    })));
    const exposed = shown.find((i) => i.id === 'exposed_communication');
    check(shown.length === 2 && exposed && exposed.evidence >= 1 && exposed.rec.includes('Overlap communication'),
      `analysis detail shows its insights with evidence and recommendations (${shown.map((i) => `${i.id}: ${i.evidence} evidence`).join('; ')})`);
    await page.screenshot({ path: join(outDir, 'analysis.png'), fullPage: true });
    const detailText = await page.textContent('#analysis-detail');
    const raw = detailText.match(/\d(\.\d+)?e[+-]\d+/g);
    check(!raw, `analysis detail: no raw exponent numbers such as 5.886e+7 (${raw ? raw.join(', ') : 'none'})`);
    const values = await page.$$eval('#analysis-detail .insight[data-insight="low_gpu_utilization"] tbody tr', (rows) => rows.map((r) => r.lastElementChild.textContent));
    check(values.length > 0 && values.every((v) => /^\d+(\.\d+)? (ms|s|µs)$/.test(v)), `analysis detail: idle gaps read as times (${values.slice(0, 3).join(', ')})`);

    check(problems.length === 0, `no console errors or failed requests${problems.length ? `: ${problems.join(' | ')}` : ''}`);
    console.log(`screenshots in ${outDir}`);
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
      console.error(`${failures.length} check(s) failed; ledger and profile kept in ${work}`);
      process.exit(1);
    }
    rmSync(work, { recursive: true, force: true });
    console.log('PASS');
  });
