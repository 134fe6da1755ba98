// SPDX-License-Identifier: Apache-2.0
// Times the vigil-fleet dashboard's overview page in headless Chromium (Debian's chromium driven
// by playwright-core from the dashboard's npm packages): from navigation start until the page
// says it is ready and its charts' canvases hold drawn pixels. Prints each run and the median in
// ms. A benchmark, not a test: it fails only when the page does not load.
//
// Usage: node bench/dashboard_load.mjs BASE_URL [RANGE=30d] [RUNS=5]
// Environment: VIGIL_WEB_NODE_MODULES (where playwright-core is installed), VIGIL_CHROMIUM
// (default /usr/bin/chromium). Exit 77 when either is missing.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const [base, range = '30d', runsArg = '5'] = process.argv.slice(2);
const chromiumPath = process.env.VIGIL_CHROMIUM || '/usr/bin/chromium';
const nodeModules = process.env.VIGIL_WEB_NODE_MODULES;
if (!base) {
  console.error('usage: dashboard_load.mjs BASE_URL [RANGE] [RUNS]');
  process.exit(2);
}
if (!existsSync(chromiumPath) || !nodeModules || !existsSync(join(nodeModules, 'playwright-core'))) {
  console.log(`SKIPPED: needs ${chromiumPath} and playwright-core under ${nodeModules}`);
  process.exit(77);
}
const { chromium } = createRequire(resolve(nodeModules, 'x.js'))('playwright-core');

const work = mkdtempSync(join(tmpdir(), 'vigil-dash-bench-'));
const context = await chromium.launchPersistentContext(join(work, 'profile'), {
  executablePath: chromiumPath,
  headless: true,
  viewport: { width: 1280, height: 800 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const page = context.pages()[0] || (await context.newPage());
const errors = [];
page.on('pageerror', (e) => errors.push(e.message));

// Ready: the overview rendered (data-state) and every chart canvas has opaque pixels.
const drawn = () => page.waitForFunction(() => {
  if (document.body.dataset.page !== 'overview' || document.body.dataset.state !== 'ready') return false;
  const canvases = [...document.querySelectorAll('#app canvas')];
  if (canvases.length === 0) return false;
  return canvases.every((c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    for (let i = 3; i < d.length; i += 16) if (d[i] > 200) return true;
    return false;
  });
}, null, { timeout: 60000, polling: 'raf' });

const times = [];
let status = 0;
try {
  const runs = Number(runsArg);
  for (let i = 0; i <= runs; i++) {
    // A fresh load each time (the first, cold, is not counted): nothing cached but the assets.
    await page.goto('about:blank');
    const t0 = Date.now();
    await page.goto(`${base}/?range=${range}#/overview`);
    await drawn();
    const ms = Date.now() - t0;
    const nav = await page.evaluate(() => {
      const api = performance.getEntriesByType('resource').filter((r) => r.name.includes('/api/v1/'));
      return Math.max(0, ...api.map((r) => r.responseEnd)) - Math.min(...api.map((r) => r.startTime));
    });
    if (i > 0) times.push(ms);
    console.log(`overview ${range} run ${i}${i === 0 ? ' (cold, not counted)' : ''}: ${ms} ms` +
      ` (API requests ${Math.round(nav)} ms)`);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  const text = await page.$eval('.page-head .sub', (e) => e.textContent).catch(() => '');
  console.log(`overview_load_ms median=${median} min=${sorted[0]} max=${sorted[sorted.length - 1]}` +
    ` runs=${sorted.length} (${text})`);
  if (errors.length) console.log(`page errors: ${errors.join('; ')}`);
} catch (e) {
  console.error(`dashboard_load: ${e.message}`);
  status = 1;
} finally {
  await context.close();
  rmSync(work, { recursive: true, force: true });
}
process.exit(status);
