// SPDX-License-Identifier: Apache-2.0
// Hosts list, one host's page and one GPU's page, the pages Grafana users look for first: per
// GPU utilisation, SM activity, memory, power, temperature, the FLOP/s estimate and the share of
// reported time allocated and busy, over exactly the selected window (GET /api/v1/hosts/NAME and
// /api/v1/hosts/NAME/gpus/UUID, minute rows of the ledger in buckets of timewin.gpuStep), and the
// jobs that held the GPUs. A bucket with no report is a gap in the lines.
import { api } from '../api.js';
import { lines, PALETTE } from '../charts.js';
import { h, card, kpi, empty, table } from '../dom.js';
import * as f from '../format.js';
import { gpuStep } from '../timewin.js';

const hostHref = (host) => `#/host/${encodeURIComponent(host)}`;
const gpuHref = (host, uuid) => `#/gpu/${encodeURIComponent(host)}/${encodeURIComponent(uuid)}`;
const jobHref = (id) => `#/job/${encodeURIComponent(id)}`;

export async function hostsPage(root, ctx) {
  const data = await api('hosts');
  if (!ctx.current()) return;
  root.append(h('div', { class: 'page-head' }, h('h1', {}, 'Hosts'),
    h('p', { class: 'sub' }, `${data.hosts.length} hosts · ${data.hosts.reduce((n, x) => n + x.gpu_count, 0)} GPUs; open one for its GPUs over the window`)));
  root.append(card('Hosts', null, data.hosts.length
    ? table(
        [
          { label: 'Host', cls: 'key', value: (x) => h('a', { href: hostHref(x.host) }, x.host) },
          { label: 'GPUs', cls: 'num', value: (x) => String(x.gpu_count) },
          { label: 'GPU model', value: (x) => [...new Set(x.gpus.map((g) => g.gpu_model))].join(', ') || '—' },
          { label: 'Health', value: (x) => x.health },
          { label: 'Driver', value: (x) => x.driver || '—' },
          { label: 'vigild', value: (x) => x.daemon_version || '—' },
          { label: 'Last report', value: (x) => `${f.when(x.last_seen)} (${f.duration(x.last_seen_ago_s)} ago)` },
        ],
        data.hosts,
        { onRowClick: (x) => ctx.navigate(hostHref(x.host)), rowClass: () => 'host-row' })
    : empty('No hosts', 'Hosts appear once their vigild pushes to this service (--fleet-url).')));
}

export async function hostPage(root, ctx) {
  const host = ctx.args[0] || '';
  const data = await api(`hosts/${encodeURIComponent(host)}`, series(ctx));
  if (!ctx.current()) return;
  root.append(h('div', { class: 'crumbs' }, h('a', { href: '#/hosts' }, 'Hosts'), h('span', { class: 'sep' }, '›'), h('span', { class: 'here' }, host)));
  head(root, `Host ${host}`, data);
  summary(root, data);
  charts(root, ctx, data);
  root.append(card('GPUs', `${data.gpus.length} GPUs · means over the window`, gpuTable(ctx, data)));
  jobsCard(root, data);
}

export async function gpuPage(root, ctx) {
  const [host, uuid] = [ctx.args[0] || '', ctx.args.slice(1).join('/')];
  const data = await api(`hosts/${encodeURIComponent(host)}/gpus/${encodeURIComponent(uuid)}`, series(ctx));
  if (!ctx.current()) return;
  const g = data.gpus[0];
  root.append(h('div', { class: 'crumbs' }, h('a', { href: '#/hosts' }, 'Hosts'), h('span', { class: 'sep' }, '›'),
    h('a', { href: hostHref(host) }, host), h('span', { class: 'sep' }, '›'), h('span', { class: 'here' }, uuid)));
  head(root, `GPU ${uuid}`, data, g.gpu_model);
  summary(root, data);
  charts(root, ctx, data);
  jobsCard(root, data);
}

// The API window: exactly the header's, in buckets of at most 360 per line.
function series(ctx) {
  return { since: ctx.win.from, until: ctx.win.to, step: `${gpuStep(ctx.win.span)}s` };
}

function head(root, title, data, note) {
  const step = data.step_s >= 3600 ? `${data.step_s / 3600} h` : `${data.step_s / 60} min`;
  root.append(h('div', { class: 'page-head' }, h('h1', {}, title),
    h('p', { class: 'sub', id: 'series-window' }, [note, `${f.when(data.since)} – ${f.when(data.until)}`, `${step} buckets`].filter(Boolean).join(' · '))));
}

// Time-weighted means over the window of all GPUs shown.
function summary(root, data) {
  const s = data.gpus.map((g) => g.summary);
  const mean = (k) => {
    const v = s.map((x) => x[k]).filter((x) => x !== null && x !== undefined);
    return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
  };
  const sum = (k) => s.reduce((a, x) => a + (x[k] || 0), 0);
  const temps = s.map((x) => x.temperature_celsius).filter((x) => x !== null && x !== undefined);
  const power = s.some((x) => x.power_watts !== null) ? sum('power_watts') : null;
  root.append(h('div', { class: 'kpis', id: 'series-kpis' },
    kpi('Utilisation', f.ratio(mean('utilization_ratio')), 'kernel running (NVML)'),
    kpi('SM activity', f.ratio(mean('sm_active_ratio')), 'SMs with a warp resident', 'good'),
    kpi('Allocated', f.pct(sum('allocated_s'), sum('reported_s')), `busy ${f.pct(sum('busy_s'), sum('allocated_s'))} of it`),
    kpi('Memory used', f.bytes(sum('memory_used_bytes')), s.some((x) => x.memory_total_bytes) ? `of ${f.bytes(sum('memory_total_bytes'))}` : null),
    kpi('Power', f.watts(power), data.gpus.length > 1 ? 'all GPUs' : null),
    kpi('Temperature', temps.length ? f.celsius(Math.max(...temps)) : '—', data.gpus.length > 1 ? 'hottest GPU (mean)' : 'mean'),
    kpi('FLOP/s (est.)', f.flops(sum('flops_estimated') || null), 'from pipe activity'),
    kpi('Jobs', String(data.jobs.length), 'held a GPU in the window'),
  ));
}

const METRICS = [
  { id: 'util', title: 'Utilisation', sub: '% of time a kernel ran', key: 'utilization_ratio', scale: 100, yRange: [0, 100], fmt: (v) => `${Math.round(v)}%` },
  { id: 'sm', title: 'SM activity', sub: '% of SMs with a warp resident', key: 'sm_active_ratio', scale: 100, yRange: [0, 100], fmt: (v) => `${Math.round(v)}%` },
  { id: 'mem', title: 'Memory used', sub: 'GiB', key: 'memory_used_bytes', scale: 1 / 2 ** 30, fmt: (v) => `${v.toFixed(v < 10 ? 1 : 0)} GiB` },
  { id: 'power', title: 'Power', sub: 'W (the energy counter where no power gauge is reported)', key: 'power_watts', scale: 1, fmt: (v) => `${Math.round(v)} W` },
  { id: 'temp', title: 'Temperature', sub: '°C', key: 'temperature_celsius', scale: 1, fmt: (v) => `${Math.round(v)} °C` },
  { id: 'flops', title: 'FLOP/s estimate', sub: 'TFLOP/s, from pipe activity', key: 'flops_estimated', scale: 1e-12, fmt: (v) => `${v.toFixed(v < 10 ? 1 : 0)} T` },
  { id: 'alloc', title: 'Allocated and busy', sub: '% of reported time', key: null, yRange: [0, 100], fmt: (v) => `${Math.round(v)}%` },
];

// Bucket starts over the window (the first cut at `since`), and the middle of each bucket.
function axis(data) {
  const step = data.step_s;
  const starts = [];
  for (let t = data.since_s; t < data.until_s; t = (Math.floor(t / step) + 1) * step) starts.push(t);
  const mids = starts.map((t) => (t + Math.min((Math.floor(t / step) + 1) * step, data.until_s)) / 2);
  return { starts, mids };
}

function charts(root, ctx, data) {
  const { starts, mids } = axis(data);
  const index = new Map(starts.map((t, i) => [t, i]));
  const win = { from: data.since_s, to: data.until_s };
  const grid = h('div', { class: 'chart-grid' });
  root.append(grid);
  for (const m of METRICS) {
    let series;
    if (m.key) {
      series = data.gpus.map((g, gi) => {
        const values = new Array(starts.length).fill(null);
        for (const p of g.points) {
          const i = index.get(p.t);
          if (i !== undefined && p[m.key] !== null) values[i] = p[m.key] * m.scale;
        }
        return { label: data.gpus.length > 1 ? shortGpu(g.gpu_uuid) : m.title, color: PALETTE[gi % PALETTE.length], values };
      });
    } else {
      // Allocated and busy: all GPUs together, as shares of their reported time.
      const rep = new Array(starts.length).fill(0);
      const alloc = new Array(starts.length).fill(0);
      const busy = new Array(starts.length).fill(0);
      for (const g of data.gpus) {
        for (const p of g.points) {
          const i = index.get(p.t);
          if (i === undefined) continue;
          rep[i] += p.reported_s;
          alloc[i] += p.allocated_s;
          busy[i] += p.busy_s;
        }
      }
      const share = (a) => a.map((v, i) => (rep[i] > 0 ? (100 * v) / rep[i] : null));
      series = [
        { label: 'allocated', color: '#64748b', values: share(alloc), dash: [6, 4] },
        { label: 'busy', color: '#2563eb', values: share(busy), fill: 'rgba(37,99,235,0.08)' },
      ];
    }
    const el = h('div', { class: 'chart', id: `chart-gpu-${m.id}` });
    const reported = series.some((s) => s.values.some((v) => v !== null));
    grid.append(card(m.title, m.sub, reported ? el
      : empty('Not reported', 'No GPU here reported this in the window (its backend may not measure it).')));
    if (reported) lines(el, ctx, { xs: starts, at: mids, series, win, height: 200, yRange: m.yRange, fmt: m.fmt });
  }
}

const shortGpu = (uuid) => (uuid.length > 16 ? `${uuid.slice(0, 8)}…${uuid.slice(-6)}` : uuid);

function gpuTable(ctx, data) {
  return table(
    [
      { label: 'GPU', cls: 'key', value: (g) => h('a', { href: gpuHref(data.host, g.gpu_uuid) }, h('code', {}, g.gpu_uuid)) },
      { label: 'Model', value: (g) => g.gpu_model || '—' },
      { label: 'Utilisation', cls: 'num', value: (g) => f.ratio(g.summary.utilization_ratio) },
      { label: 'SM activity', cls: 'num', value: (g) => f.ratio(g.summary.sm_active_ratio) },
      { label: 'Allocated', cls: 'num', value: (g) => f.pct(g.summary.allocated_s, g.summary.reported_s) },
      { label: 'Memory', cls: 'num', value: (g) => (g.summary.memory_total_bytes ? `${f.bytes(g.summary.memory_used_bytes)} / ${f.bytes(g.summary.memory_total_bytes)}` : f.bytes(g.summary.memory_used_bytes)) },
      { label: 'Power', cls: 'num', value: (g) => f.watts(g.summary.power_watts) },
      { label: 'Temp.', cls: 'num', value: (g) => f.celsius(g.summary.temperature_celsius) },
      { label: 'FLOP/s (est.)', cls: 'num', value: (g) => f.flops(g.summary.flops_estimated) },
      { label: 'Last report', value: (g) => f.when(g.last_seen) },
    ],
    data.gpus,
    { onRowClick: (g) => ctx.navigate(gpuHref(data.host, g.gpu_uuid)), rowClass: () => 'gpu-row' });
}

function jobsCard(root, data) {
  root.append(card('Jobs on these GPUs', 'in the window', data.jobs.length
    ? table(
        [
          { label: 'Job', cls: 'key', value: (j) => h('a', { href: jobHref(j.job_id) }, j.job_id) },
          { label: 'Team', value: (j) => f.label(j.team) },
          { label: 'User', value: (j) => f.label(j.user) },
          { label: 'Model', value: (j) => f.label(j.model) },
          { label: 'GPUs', cls: 'num', value: (j) => String(j.gpus.length) },
          { label: 'From – to', value: (j) => `${f.when(j.first)} – ${f.when(j.last)}` },
          { label: 'GPU-hours', cls: 'num', value: (j) => f.gpuHours(j.allocated_gpu_hours) },
          { label: 'Busy', cls: 'num', value: (j) => f.pct(j.busy_gpu_hours, j.allocated_gpu_hours) },
        ],
        data.jobs,
        { rowClass: () => 'job-row' })
    : empty('No jobs', 'No job held these GPUs in this window.')));
}
