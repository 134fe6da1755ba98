// SPDX-License-Identifier: Apache-2.0
// The dashboard against a locked-down vigil-fleet: HTTPS (a certificate made by the openssl command
// for 127.0.0.1) and --token-file. In Debian's Chromium: the first API 401 turns into a sign-in
// form, a wrong token is refused with a message, the right one loads the overview with data, and a
// #token= link signs in and leaves no token in the address bar. No token ever goes into a URL the
// server sees. Exit 0: pass, 1: fail, 77: skipped (no chromium / playwright-core / openssl).
//
// Environment: VIGIL_FLEET_BIN, VIGIL_WEB_NODE_MODULES, VIGIL_CHROMIUM (as dashboard_test.mjs).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { makeBatches, toJson } from './fleet_dataset.mjs';

const SKIP = 77;
const chromiumPath = process.env.VIGIL_CHROMIUM || '/usr/bin/chromium';
const fleetBin = process.env.VIGIL_FLEET_BIN;
const nodeModules = process.env.VIGIL_WEB_NODE_MODULES;
const skip = (why) => {
  console.log(`SKIPPED: ${why}`);
  process.exit(SKIP);
};
if (!existsSync(chromiumPath)) skip(`no Chromium at ${chromiumPath} (install the Debian package chromium)`);
if (!nodeModules || !existsSync(join(nodeModules, 'playwright-core'))) skip('playwright-core is not installed');
if (!fleetBin || !existsSync(fleetBin)) {
  console.error(`FAIL: vigil-fleet binary not found: ${fleetBin}`);
  process.exit(1);
}
const { chromium } = createRequire(resolve(nodeModules, 'x.js'))('playwright-core');

const work = mkdtempSync(join(tmpdir(), 'vigil-web-auth-'));
const cert = join(work, 'cert.pem');
const key = join(work, 'key.pem');
const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
  '-nodes', '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
  '-keyout', key, '-out', cert], { stdio: 'ignore' });
if (made.status !== 0) skip('the openssl command cannot make a test certificate');
const TOKEN = 'dash-token-7f3a';
const OPERATOR = 'op-token-19c2';
writeFileSync(join(work, 'tokens'), `* ${TOKEN}\n@operator ${OPERATOR}\n`);

const failures = [];
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
};

// vigil-fleet refuses root unless told (CI runs as root).
const allowRoot = process.getuid() === 0 ? ['--allow-root'] : [];

const proc = spawn(fleetBin, ['serve', '--listen', '127.0.0.1:0', '--db', join(work, 'fleet.db'),
  '--token-file', join(work, 'tokens'), '--tls-cert', cert, '--tls-key', key, '--log-level', 'warn',
  '--profiling', 'manual', ...allowRoot],
{ stdio: ['ignore', 'pipe', 'inherit'] });
let context;
try {
  const port = await new Promise((res, rej) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on https:\/\/127\.0\.0\.1:(\d+)/);
      if (m) res(Number(m[1]));
    });
    proc.on('exit', (code) => rej(new Error(`vigil-fleet exited with ${code} before listening`)));
  });
  const base = `https://127.0.0.1:${port}`;

  context = await chromium.launchPersistentContext(join(work, 'profile'), {
    executablePath: chromiumPath,
    headless: true,
    ignoreHTTPSErrors: true,  // The test's own certificate; the server side of TLS is what is tested.
    viewport: { width: 1280, height: 800 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  // Push a small fleet through the browser's own request API (it trusts nothing else here).
  const batches = makeBatches(Math.floor(Date.now() / 1000));
  for (const b of batches) {
    const r = await context.request.post(`${base}/api/v1/ingest`, {
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' }, data: toJson(b) });
    if (!r.ok()) throw new Error(`ingest: HTTP ${r.status()} ${await r.text()}`);
  }
  const anonymous = await context.request.get(`${base}/api/v1/hosts`);
  check(anonymous.status() === 401, 'the API answers 401 without a token');

  const page = context.pages()[0] || (await context.newPage());
  const problems = [];
  const urls = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    // The browser logs every 401/403 answer; those are the point of this test.
    if (m.type() === 'error' && !/status of 40[13]/.test(m.text())) problems.push(`console error: ${m.text()}`);
  });
  page.on('request', (r) => urls.push(r.url()));
  const settled = () => page.waitForFunction(() => ['ready', 'signin', 'error'].includes(document.body.dataset.state),
    null, { timeout: 15000 });
  const state = () => page.evaluate(() => document.body.dataset.state);

  await page.goto(`${base}/#/overview`);
  await settled();
  check((await state()) === 'signin', 'without a token the dashboard shows the sign-in form');
  await page.fill('#token', 'wrong-token');
  await page.click('#signin button');
  await page.waitForFunction(() => document.body.dataset.state !== 'loading' &&
    /not accepted/.test(document.getElementById('app').textContent), null, { timeout: 15000 });
  check((await state()) === 'signin', 'a wrong token is refused and the form says so');
  await page.fill('#token', TOKEN);
  await page.click('#signin button');
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 15000 });
  check(await page.locator('#page-overview canvas').count() > 0, 'the right token loads the overview with its charts');

  const fresh = await context.newPage();
  await fresh.goto(`${base}/#token=${TOKEN}`);
  await fresh.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 15000 });
  check(!fresh.url().includes(TOKEN), `a #token= link signs in and is removed from the address bar (${fresh.url()})`);
  check(!urls.some((u) => u.includes(TOKEN)), 'no request URL carries the token');

  // Asking for profiling from the Workflows page: a host token is told it needs an operator's;
  // an operator token gets past the guard (and is told the job runs nowhere).
  const ask = async (p, job) => {
    await p.goto(`${base}/#/workflows`);
    await p.waitForSelector('#profile-job', { timeout: 15000 });
    await p.fill('#profile-job', job);
    await p.click('#profile-start');
    await p.waitForFunction(() => document.querySelector('#profile-status')?.classList.contains('form-error'),
      null, { timeout: 15000 });
    return p.textContent('#profile-status');
  };
  const asHost = await ask(page, 'job-7');
  check(/operator token/.test(asHost), `a host token may not ask for profiling, and is told why (${asHost})`);
  const op = await context.newPage();
  await op.goto(`${base}/#token=${OPERATOR}`);
  await op.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 15000 });
  const asOperator = await ask(op, 'job-7');
  check(/no host held its GPUs/.test(asOperator), `an operator token may (${asOperator})`);
  for (const p of problems) check(false, p);
} catch (e) {
  check(false, `unexpected: ${e.stack || e}`);
} finally {
  if (context) await context.close().catch(() => {});
  proc.kill('SIGTERM');
  rmSync(work, { recursive: true, force: true });
}
process.exit(failures.length ? 1 : 0);
