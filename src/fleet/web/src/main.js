// SPDX-License-Identifier: Apache-2.0
// The vigil-fleet dashboard: hash routes (#/overview, #/attribution?team=..., #/heatmap,
// #/jobs, #/job/ID, #/flamegraph/JOB, #/workflows). Each render replaces the page; charts are destroyed with it.
// document.body.dataset.state is "loading", "ready" or "error" (the end-to-end test waits on it).
import './style.css';
import { attribution } from './pages/attribution.js';
import { flamegraph } from './cpu_profile.js';
import { heatmap } from './pages/heatmap.js';
import { jobs, job } from './pages/jobs.js';
import { overview } from './pages/overview.js';
import { workflows } from './pages/workflows.js';
import { h } from './dom.js';
import { signIn, takeTokenFromLocation, token } from './auth.js';

const PAGES = { overview, attribution, heatmap, jobs, job, flamegraph, workflows };
const app = document.getElementById('app');
const rangeSelect = document.getElementById('range');
let generation = 0;
let cleanups = [];

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [pathPart, query = ''] = raw.split('?');
  const parts = pathPart.split('/').filter(Boolean);
  const page = PAGES[parts[0]] ? parts[0] : 'overview';
  return { page, arg: parts.length > 1 ? decodeURIComponent(parts.slice(1).join('/')) : '', params: new URLSearchParams(query) };
}

async function render() {
  const gen = ++generation;
  for (const fn of cleanups) fn();
  cleanups = [];
  const { page, arg, params } = parseHash();
  document.body.dataset.page = page;
  document.body.dataset.state = 'loading';
  for (const a of document.querySelectorAll('#nav a')) {
    const on = a.dataset.page === page || ((page === 'job' || page === 'flamegraph') && a.dataset.page === 'jobs');
    a.classList.toggle('on', on);
  }
  const root = h('div', { class: 'page', id: `page-${page}` });
  app.replaceChildren(root);
  const ctx = {
    arg,
    params,
    range: rangeSelect.value,
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

const saved = new URLSearchParams(location.search).get('range');
if (saved && [...rangeSelect.options].some((o) => o.value === saved)) rangeSelect.value = saved;
takeTokenFromLocation();
rangeSelect.addEventListener('change', render);
window.addEventListener('hashchange', render);
render();
