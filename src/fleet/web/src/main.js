// SPDX-License-Identifier: Apache-2.0
// The vigil-fleet dashboard: hash routes (#/overview, #/attribution?team=..., #/heatmap,
// #/hosts, #/host/NAME, #/gpu/HOST/UUID, #/jobs, #/job/ID, #/flamegraph/JOB, #/workflows). Each
// render replaces the page; charts are destroyed with it. The time window and auto-refresh live
// in the query string (?range=1h, or ?from=UNIX&to=UNIX; &refresh=30s), so a link keeps them.
// document.body.dataset.state is "loading", "ready" or "error" (the end-to-end test waits on it).
import './style.css';
import { attribution } from './pages/attribution.js';
import { flamegraph } from './cpu_profile.js';
import { heatmap } from './pages/heatmap.js';
import { jobs, job } from './pages/jobs.js';
import { gpuPage, hostPage, hostsPage } from './pages/hosts.js';
import { overview } from './pages/overview.js';
import { workflows } from './pages/workflows.js';
import { h } from './dom.js';
import { signIn, takeTokenFromLocation, token } from './auth.js';
import { REFRESH, resolveWindow } from './timewin.js';

const PAGES = { overview, attribution, heatmap, hosts: hostsPage, host: hostPage, gpu: gpuPage, jobs, job, flamegraph, workflows };
const PARENT = { job: 'jobs', flamegraph: 'jobs', host: 'hosts', gpu: 'hosts' };
const app = document.getElementById('app');
const rangeSelect = document.getElementById('range');
const refreshSelect = document.getElementById('refresh');
const customBox = document.getElementById('custom-range');
const fromInput = document.getElementById('range-from');
const toInput = document.getElementById('range-to');
let generation = 0;
let cleanups = [];
let timer = null;

// The selection in the query string: {range} or {from, to} (unix s), and the refresh key.
function selection() {
  const q = new URLSearchParams(location.search);
  const from = Number(q.get('from'));
  const to = Number(q.get('to'));
  const sel = q.has('from') && Number.isFinite(from) ? { from, to: Number.isFinite(to) && q.has('to') ? to : undefined } : { range: q.get('range') || '24h' };
  const refresh = REFRESH.some((r) => r.key === q.get('refresh')) ? q.get('refresh') : 'off';
  return { sel, refresh };
}

function select(params) {
  const q = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(params)) {
    if (v === null) q.delete(k);
    else q.set(k, String(v));
  }
  history.replaceState(null, '', `${location.pathname}?${q}${location.hash}`);
  render();
}

// datetime-local values are local times without a zone: Date parses them as local.
const toInputValue = (t) => {
  const d = new Date(t * 1000);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
};
const fromInputValue = (v) => Math.floor(new Date(v).getTime() / 1000);

function syncControls(sel, refresh, win) {
  rangeSelect.value = sel.from !== undefined ? 'custom' : (win && win.key) || '24h';
  customBox.hidden = rangeSelect.value !== 'custom';
  if (win) {
    fromInput.value = toInputValue(win.from);
    toInput.value = toInputValue(win.to);
  }
  refreshSelect.value = refresh;
}

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [pathPart, query = ''] = raw.split('?');
  const parts = pathPart.split('/').filter(Boolean);
  const page = PAGES[parts[0]] ? parts[0] : 'overview';
  const args = parts.slice(1).map(decodeURIComponent);
  return { page, arg: args.join('/'), args, params: new URLSearchParams(query) };
}

async function render() {
  const gen = ++generation;
  for (const fn of cleanups) fn();
  cleanups = [];
  const { page, arg, args, params } = parseHash();
  document.body.dataset.page = page;
  document.body.dataset.state = 'loading';
  for (const a of document.querySelectorAll('#nav a')) {
    a.classList.toggle('on', a.dataset.page === page || PARENT[page] === a.dataset.page);
  }
  const { sel, refresh } = selection();
  clearTimeout(timer);
  const ms = REFRESH.find((r) => r.key === refresh).ms;
  // An auto-refresh re-reads the same page and keeps where the reader had scrolled to.
  if (ms) {
    timer = setTimeout(async () => {
      const y = window.scrollY;
      await render();
      window.scrollTo(0, y);
    }, ms);
  }
  let win;
  try {
    win = resolveWindow(sel, Date.now() / 1000);
  } catch (e) {
    win = resolveWindow({ range: '24h' }, Date.now() / 1000);
    syncControls(sel, refresh, null);
    app.replaceChildren(h('div', { class: 'error' }, h('strong', {}, 'Bad time range. '), e.message));
    document.body.dataset.state = 'error';
    return;
  }
  syncControls(sel, refresh, win);
  const root = h('div', { class: 'page', id: `page-${page}` });
  app.replaceChildren(root);
  const ctx = {
    arg,
    args,
    params,
    win,
    // The window as the analysis endpoints' since (they take unix seconds too).
    range: String(win.from),
    current: () => gen === generation,
    onCleanup: (fn) => cleanups.push(fn),
    navigate: (hash) => {
      location.hash = hash;
    },
  };
  try {
    await PAGES[page](root, ctx);
    if (ctx.current()) document.body.dataset.state = 'ready';
  } catch (e) {
    if (!ctx.current()) return;
    // 401: no token sent; 403 with a token: it was refused. Either way, ask for one.
    if (e.status === 401 || (e.status === 403 && token())) {
      signIn(root, e.status === 403, render);
      document.body.dataset.state = 'signin';
      return;
    }
    root.append(h('div', { class: 'error' }, h('strong', {}, 'Could not load this page. '), String(e.message || e)));
    document.body.dataset.state = 'error';
  }
}

takeTokenFromLocation();
rangeSelect.addEventListener('change', () => {
  if (rangeSelect.value === 'custom') {
    customBox.hidden = false;
    fromInput.focus();
    return;
  }
  select({ range: rangeSelect.value, from: null, to: null });
});
document.getElementById('range-apply').addEventListener('click', () =>
  select({ range: null, from: fromInputValue(fromInput.value), to: fromInputValue(toInput.value) }));
refreshSelect.addEventListener('change', () => select({ refresh: refreshSelect.value === 'off' ? null : refreshSelect.value }));
window.addEventListener('hashchange', render);
render();
