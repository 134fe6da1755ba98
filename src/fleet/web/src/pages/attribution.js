// SPDX-License-Identifier: Apache-2.0
// Attribution table with drill-down team -> model -> user -> job. The path lives in the URL
// (#/attribution?team=a&model=b); a click on a row goes one level down, on a job to its page.
import { api } from '../api.js';
import { groupJobs } from '../data.js';
import { h, card, empty, table } from '../dom.js';
import * as f from '../format.js';

const LEVELS = ['team', 'model', 'user', 'job'];
const NAMES = { team: 'Team', model: 'Model', user: 'User', job: 'Job' };

function hrefFor(path) {
  const q = new URLSearchParams();
  for (const [k, v] of path) q.set(k, v);
  const s = q.toString();
  return `#/attribution${s ? `?${s}` : ''}`;
}

export async function attribution(root, ctx) {
  const path = [];
  for (const level of LEVELS.slice(0, 3)) {
    if (!ctx.params.has(level)) break;
    path.push([level, ctx.params.get(level)]);
  }
  const level = LEVELS[path.length];
  const [jobs, teams] = await Promise.all([
    api('jobs', { since: ctx.win.from, until: ctx.win.to, limit: 10000 }),
    api('attribution', { by: 'team', since: ctx.win.from, until: ctx.win.to }),
  ]);
  if (!ctx.current()) return;
  const price = teams.price_per_gpu_hour;
  const selected = jobs.jobs.filter((j) => path.every(([k, v]) => j[k] === v));
  const groups = groupJobs(selected, level);
  const total = groups.reduce((s, g) => s + g.gpu_hours, 0);
  const unallocated = path.length === 0 ? teams.rows.find((r) => r.key === '(unallocated)') : null;
  const base = total + (unallocated ? unallocated.gpu_hours : 0);

  const crumbs = [h('a', { href: hrefFor([]) }, 'All teams')];
  path.forEach(([k, v], i) => {
    crumbs.push(h('span', { class: 'sep' }, '›'));
    crumbs.push(i === path.length - 1
      ? h('span', { class: 'here' }, `${NAMES[k]}: ${f.label(v)}`)
      : h('a', { href: hrefFor(path.slice(0, i + 1)) }, `${NAMES[k]}: ${f.label(v)}`));
  });

  const share = (g) => {
    const busy = base ? (100 * g.busy_gpu_hours) / base : 0;
    const held = base ? (100 * g.held_idle_gpu_hours) / base : 0;
    const rest = base ? Math.max(0, (100 * g.gpu_hours) / base - busy - held) : 0;
    return h('div', { class: 'sharebar', title: `${f.pct(g.gpu_hours, base)} of the window's GPU-hours` },
      h('span', { class: 'busy', style: { width: `${busy}%` } }),
      h('span', { class: 'held', style: { width: `${held}%` } }),
      h('span', { class: 'other', style: { width: `${rest}%` } }));
  };
  const go = (g) => {
    if (level === 'job') ctx.navigate(`#/job/${encodeURIComponent(g.key)}`);
    else ctx.navigate(hrefFor([...path, [level, g.key]]));
  };
  const rows = unallocated
    ? [...groups, { key: '(unallocated)', jobs: 0, gpu_hours: unallocated.gpu_hours, busy_gpu_hours: 0,
        held_idle_gpu_hours: 0, energy_joules: unallocated.energy_joules, cost: unallocated.cost, unalloc: true }]
    : groups;

  root.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'GPU-hour attribution'),
      h('p', { class: 'sub' }, `${f.counted(jobs)} · click a row to drill down (team → model → user → job)`)),
    h('nav', { class: 'crumbs', id: 'crumbs' }, crumbs),
    card(`By ${NAMES[level].toLowerCase()}`, `${groups.length} ${level === 'job' ? 'jobs' : 'groups'} · ${f.gpuHours(total)} allocated GPU-hours`,
      h('div', { class: 'legend-inline' },
        h('span', { class: 'sw busy' }), 'busy', h('span', { class: 'sw held' }), 'held but idle',
        h('span', { class: 'sw other' }), 'allocated, not measured busy / unallocated'),
      groups.length
        ? table(
            [
              { label: NAMES[level], cls: 'key', value: (g) => (g.unalloc ? h('em', {}, 'unallocated GPUs') : f.label(g.key)) },
              { label: 'Share', cls: 'share', value: share },
              { label: 'GPU-hours', cls: 'num', value: (g) => f.gpuHours(g.gpu_hours) },
              { label: 'Busy', cls: 'num', value: (g) => f.pct(g.busy_gpu_hours, g.gpu_hours) },
              { label: 'Held idle GPU-h', cls: 'num', value: (g) => f.gpuHours(g.held_idle_gpu_hours) },
              { label: 'Energy', cls: 'num', value: (g) => f.kwh(g.energy_joules) },
              { label: 'Cost', cls: 'num', value: (g) => f.money(g.cost, price) },
              { label: 'Jobs', cls: 'num', value: (g) => (g.unalloc ? '—' : String(g.jobs)) },
            ],
            rows,
            {
              onRowClick: (g) => (g.unalloc ? null : go(g)),
              rowClass: (g) => (g.unalloc ? 'muted' : 'drill'),
              rowTitle: (g) => (g.unalloc ? null : level === 'job' ? 'open the job' : `show ${LEVELS[path.length + 1]}s`),
            },
          )
        : empty('No jobs here', 'No job with this identity ran in the selected window.')),
  );
}
