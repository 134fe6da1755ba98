// SPDX-License-Identifier: Apache-2.0
// Overview: fleet totals, GPU-hours stacked by team over time, utilisation over time, and the
// held-but-idle waste (top wasters, GPUs held idle right now).
import { api, windowParams } from '../api.js';
import { stackedBars, lines, PALETTE, GREY } from '../charts.js';
import { bucketAxis, byKey, perBucket } from '../data.js';
import { h, card, kpi, empty, table } from '../dom.js';
import * as f from '../format.js';
import { windowLabel } from '../timewin.js';

const windowText = (win) => windowLabel(new Date(win.from * 1000), new Date(win.to * 1000));

const UNALLOCATED = '(unallocated)';

export async function overview(root, ctx) {
  const w = windowParams(ctx.win);
  const [teams, hostsAttr, hosts, idleNow, wasters] = await Promise.all([
    api('attribution', { by: 'team', ...w }),
    api('attribution', { by: 'host', ...w }),
    api('hosts'),
    api('idle-now'),
    api('top-wasters', { since: w.since, until: w.until, limit: 8 }),
  ]);
  if (!ctx.current()) return;
  const t = teams.totals;
  const price = teams.price_per_gpu_hour;
  const gpus = hosts.hosts.reduce((n, x) => n + x.gpu_count, 0);

  root.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Fleet overview'),
      h('p', { class: 'sub' }, `${windowText(ctx.win)} (${f.counted(teams)}) · ${hosts.hosts.length} hosts · ${gpus} GPUs`)),
    h('div', { class: 'kpis' },
      kpi('GPU-hours', f.gpuHours(t.gpu_hours), price ? f.money(t.cost, price) : 'reported wall time'),
      kpi('Busy', f.pct(t.busy_gpu_hours, t.gpu_hours), `${f.gpuHours(t.busy_gpu_hours)} GPU-h doing work`, 'good'),
      kpi('Allocated', f.pct(t.allocated_gpu_hours, t.gpu_hours), `${f.gpuHours(t.allocated_gpu_hours)} GPU-h held by jobs`),
      kpi('Held but idle', `${f.gpuHours(t.held_idle_gpu_hours)} GPU-h`,
        price ? `${f.money(t.held_idle_gpu_hours * price, price)} wasted` : f.pct(t.held_idle_gpu_hours, t.gpu_hours) + ' of the fleet', 'warn'),
      kpi('Unallocated', `${f.gpuHours(t.idle_gpu_hours)} GPU-h`, f.pct(t.idle_gpu_hours, t.gpu_hours)),
      kpi('Energy', f.kwh(t.energy_joules), 'device energy'),
    ),
  );

  if (!teams.rows.length) {
    root.append(card('No data yet', null, empty('Nothing reported in this window',
      'Start vigild with --fleet-url pointing at this service; its samples show up here within a minute.')));
    return;
  }

  // GPU-hours by team, stacked; the unallocated time on top in grey.
  const xs = bucketAxis(teams.rows, teams.bucket_s);
  const perTeam = byKey(teams.rows, xs, 'gpu_hours');
  const totals = teams.rows.reduce((m, r) => m.set(r.key, (m.get(r.key) || 0) + r.gpu_hours), new Map());
  const keys = [...perTeam.keys()].filter((k) => k !== UNALLOCATED).sort((a, b) => totals.get(b) - totals.get(a));
  const series = keys.map((k, i) => ({ label: f.label(k), color: PALETTE[i % PALETTE.length], values: perTeam.get(k) }));
  if (perTeam.has(UNALLOCATED)) series.push({ label: 'unallocated', color: GREY, values: perTeam.get(UNALLOCATED) });
  const teamChart = h('div', { class: 'chart', id: 'chart-teams' });
  const utilChart = h('div', { class: 'chart', id: 'chart-util' });
  root.append(
    h('div', { class: 'row' },
      card('GPU-hours by team', `per ${teams.bucket_s / 3600} h bucket; grey: GPUs no job held`, teamChart)),
    h('div', { class: 'row' }, card('Fleet utilisation', 'share of reported GPU time', utilChart)),
  );
  stackedBars(teamChart, ctx, { xs, step: teams.bucket_s, win: ctx.win, series, fmt: (v) => `${f.gpuHours(v)} GPU-h`, yLabel: 'GPU-hours' });

  const hx = bucketAxis(hostsAttr.rows, hostsAttr.bucket_s);
  const sums = perBucket(hostsAttr.rows, hx, ['gpu_hours', 'allocated_gpu_hours', 'busy_gpu_hours', 'held_idle_gpu_hours']);
  const ratio = (k) => sums[k].map((v, i) => (sums.gpu_hours[i] > 0 ? (100 * v) / sums.gpu_hours[i] : null));
  lines(utilChart, ctx, {
    xs: hx,
    step: hostsAttr.bucket_s,
    win: ctx.win,
    yRange: [0, 100],
    fmt: (v) => `${Math.round(v)}%`,
    yLabel: '% of GPU time',
    series: [
      { label: 'allocated', color: '#64748b', values: ratio('allocated_gpu_hours'), dash: [6, 4] },
      { label: 'busy', color: '#2563eb', values: ratio('busy_gpu_hours'), fill: 'rgba(37,99,235,0.08)' },
      { label: 'held but idle', color: '#f59e0b', values: ratio('held_idle_gpu_hours') },
    ],
  });

  const wasteRows = wasters.jobs.filter((j) => j.held_idle_gpu_hours > 0);
  const heldNow = idleNow.held_idle;
  root.append(
    h('div', { class: 'row two' },
      card('Top held-but-idle jobs', 'GPU-hours allocated to a job while the GPU did nothing',
        wasteRows.length
          ? table(
              [
                { label: 'Job', value: (j) => h('a', { href: `#/job/${encodeURIComponent(j.job_id)}` }, j.job_id) },
                { label: 'Team', value: (j) => f.label(j.team) },
                { label: 'User', value: (j) => f.label(j.user) },
                { label: 'Held idle', cls: 'num', value: (j) => `${f.gpuHours(j.held_idle_gpu_hours)} GPU-h` },
                { label: 'of its time', cls: 'num', value: (j) => f.pct(j.held_idle_gpu_hours, j.gpu_hours) },
                { label: 'Cost', cls: 'num', value: (j) => f.money(j.held_idle_cost, price) },
              ],
              wasteRows,
            )
          : empty('No waste', 'No job held a GPU without using it in this window.')),
      card('GPUs idle right now', 'last 5 minutes',
        h('div', { class: 'now' },
          h('div', { class: 'now-n' }, h('span', { class: 'big warn' }, String(heldNow.length)), ' held by a job but idle'),
          h('div', { class: 'now-n' }, h('span', { class: 'big' }, String(idleNow.idle.length)), ' not allocated')),
        heldNow.length
          ? table(
              [
                { label: 'Host', value: (g) => g.host },
                { label: 'GPU', value: (g) => h('code', {}, g.gpu_uuid) },
                { label: 'Jobs', value: (g) => g.jobs || '—' },
              ],
              heldNow.slice(0, 8),
            )
          : null),
    ),
  );
}
