// SPDX-License-Identifier: Apache-2.0
// The `vigil analyze --html` page in headless Chromium (Debian's chromium driven by playwright-core
// from the dashboard's npm packages): writes the page for a sample trace, opens it from disk, and
// checks that the GPU timeline renders (an SVG with stream lanes and rectangles) and that the
// zoom buttons, the wheel and a drag change its viewBox, with no console error and no request
// outside the file.
// Exit 0: pass, 1: fail, 77: skipped (no chromium / playwright-core).
//
// Environment: VIGIL_BIN (the vigil binary), VIGIL_TRACE (a trace with GPU work),
// VIGIL_WEB_NODE_MODULES (where playwright-core is installed), VIGIL_CHROMIUM (default
// /usr/bin/chromium).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const SKIP = 77;
const chromiumPath = process.env.VIGIL_CHROMIUM || '/usr/bin/chromium';
const nodeModules = process.env.VIGIL_WEB_NODE_MODULES;
function skip(why) {
  console.log(`SKIPPED: ${why}`);
  process.exit(SKIP);
}
if (!existsSync(chromiumPath)) skip(`no Chromium at ${chromiumPath} (install the Debian package chromium)`);
if (!nodeModules || !existsSync(join(nodeModules, 'playwright-core'))) {
  skip(`playwright-core is not installed under ${nodeModules} (build the vigil_fleet_web target first)`);
}
const { chromium } = createRequire(resolve(nodeModules, 'x.js'))('playwright-core');

const failures = [];
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
};
const work = mkdtempSync(join(tmpdir(), 'vigil-html-'));

async function main() {
  const html = join(work, 'report.html');
  const run = spawnSync(process.env.VIGIL_BIN, ['analyze', process.env.VIGIL_TRACE, '--html', html],
    { encoding: 'utf8' });
  check(run.status === 0 && existsSync(html), `vigil analyze --html exits 0 (${run.stderr.slice(-300)})`);
  console.log(`page: ${statSync(html).size} bytes`);
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('request', (r) => {
      if (!r.url().startsWith('file://')) problems.push(`request outside the page: ${r.url()}`);
    });
    await page.goto(pathToFileURL(html).href);
    const svg = page.locator('svg.tl-svg').first();
    const shape = await svg.evaluate((s) => ({
      lanes: s.closest('.tl').querySelectorAll('.tl-labels div').length,
      streams: [...s.closest('.tl').querySelectorAll('.tl-labels div')].filter((d) => d.textContent.includes('stream')).length,
      rects: s.querySelectorAll('rect').length,
      width: s.getBoundingClientRect().width,
      viewBox: s.getAttribute('viewBox'),
    }));
    check(shape.streams >= 1 && shape.lanes > shape.streams && shape.rects > 0 && shape.width > 300,
      `the timeline renders: ${shape.lanes} lanes (${shape.streams} streams), ${shape.rects} rectangles, ${shape.width}px wide`);
    const box = async () => (await svg.getAttribute('viewBox')).split(' ').map(Number);
    const [x0, , w0] = await box();
    check(x0 === 0 && w0 > 0, `initial viewBox ${shape.viewBox}`);
    await page.locator('.tl-in').first().click();
    const [x1, , w1] = await box();
    check(Math.abs(w1 - w0 / 2) < 1e-6 && x1 > 0, `+ halves the viewBox width around the centre (x ${x1}, width ${w1})`);
    const b = await svg.boundingBox();
    await page.mouse.move(b.x + b.width / 4, b.y + b.height / 2);
    await page.mouse.wheel(0, -100);
    const [x2, , w2] = await box();
    check(w2 < w1, `the wheel zooms in (width ${w1} -> ${w2}, x ${x2})`);
    await page.mouse.down();
    await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 4 });
    await page.mouse.up();
    const [x3, , w3] = await box();
    check(x3 < x2 && Math.abs(w3 - w2) < 1e-6, `a drag to the right pans to earlier times (x ${x2} -> ${x3})`);
    const label = await page.locator('.tl-win').first().textContent();
    check(/showing [0-9.]+ ms to [0-9.]+ ms/.test(label), `the window label follows the zoom: "${label}"`);
    await page.locator('.tl-reset').first().click();
    check((await svg.getAttribute('viewBox')) === shape.viewBox, 'reset restores the whole span');
    await page.locator('.tl-out').first().click();
    check((await svg.getAttribute('viewBox')) === shape.viewBox, 'zooming out stops at the whole span');
    check(problems.length === 0, `no console errors or outside requests${problems.length ? `: ${problems.join(' | ')}` : ''}`);
  } finally {
    await browser.close().catch(() => {});
  }
}

main()
  .catch((e) => {
    failures.push(e.stack || String(e));
    console.error(e.stack || String(e));
  })
  .finally(() => {
    if (failures.length) {
      console.error(`${failures.length} check(s) failed; page kept in ${work}`);
      process.exit(1);
    }
    rmSync(work, { recursive: true, force: true });
    console.log('PASS');
  });
