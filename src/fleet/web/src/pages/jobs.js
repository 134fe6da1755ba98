// SPDX-License-Identifier: Apache-2.0
// Jobs list (by GPU-hours) and one job's page: efficiency over time, GPUs, identities, and the
// CPU profile uploaded by its hosts' daemons, and the traces and analyses recorded for it.
import { api, toSeconds } from '../api.js';
import { stackedBars, lines } from '../charts.js';
import { h, card, kpi, empty, table } from '../dom.js';
import * as f from '../format.js';
import { analysisDetail, analysesTable } from '../analyses.js';
import { cpuProfileSection } from '../cpu_profile.js';

const jobLink = (id) => h('a', { href: `#/job/${encodeURIComponent(id)}` }, id);

export async function jobs(root, ctx) {
  const [data, attr] = await Promise.all([
    api('jobs', { since: ctx.win.from, until: ctx.win.to, limit: 500 }),
    api('attribution', { by: 'job', since: ctx.win.from, until: ctx.win.to }),
  ]);
  if (!ctx.current()) return;
  const price = attr.price_per_gpu_hour;
  root.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Jobs'),
      h('p', { class: 'sub' }, `${data.jobs.length} jobs by GPU-hours · ${f.counted(data)}`)),
    card('Jobs', null,
      data.jobs.length
        ? table(
            [
              { label: 'Job', cls: 'key', value: (j) => jobLink(j.job_id) },
              { label: 'Team', value: (j) => f.label(j.team) },
              { label: 'Model', value: (j) => f.label(j.model) },
              { label: 'User', value: (j) => f.label(j.user) },
              { label: 'GPUs', cls: 'num', value: (j) => String(j.gpus) },
              { label: 'Duration', cls: 'num', value: (j) => f.duration(j.duration_s) },
              { label: 'GPU-hours', cls: 'num', value: (j) => f.gpuHours(j.gpu_hours) },
              { label: 'Busy', cls: 'num', value: (j) => f.pct(j.busy_gpu_hours, j.gpu_hours) },
              { label: 'Held idle', cls: 'num', value: (j) => f.gpuHours(j.held_idle_gpu_hours) },
              { label: 'MFU', cls: 'num', value: (j) => f.ratio(j.mfu_ratio) },
              { label: 'Device-s/GB', cls: 'num', value: (j) => (j.device_seconds_per_input_byte == null ? '—' : f.deviceSecondsPerGB(j.device_seconds_per_input_byte).replace(' device-s/GB', '')) },
              { label: 'Cost', cls: 'num', value: (j) => f.money(j.cost, price) },
              { label: 'Last seen', value: (j) => f.when(j.last_seen) },
            ],
            data.jobs,
            { onRowClick: (j) => ctx.navigate(`#/job/${encodeURIComponent(j.job_id)}`) },
          )
        : empty('No jobs', 'No job held a GPU in this window.')),
  );
}

export async function job(root, ctx) {
  const id = ctx.arg;
  let j;
  try {
    j = await api(`jobs/${encodeURIComponent(id)}`);
  } catch (e) {
    if (e.status !== 404) throw e;
    const { analyses } = await api('analyses', { job_id: id });
    if (!ctx.current()) return;
    root.append(card(`Job ${id}`, null, empty('Unknown job', analyses.length
      ? 'The ledger has no GPU time for this job id; only its trace analyses are stored.'
      : 'The ledger has no job with this id.')));
    if (analyses.length) await analysesSection(root, ctx, id, analyses);
    return;
  }
  if (!ctx.current()) return;
  const who = j.identities[0] || {};
  root.append(
    h('div', { class: 'page-head' }, h('h1', {}, `Job ${j.job_id}`),
      h('p', { class: 'sub' }, [f.label(who.team), f.label(who.model), f.label(who.user), who.framework || null, who.rule ? `identified by ${who.rule}` : null]
        .filter(Boolean).join(' · '))),
    h('div', { class: 'kpis' },
      kpi('Duration', f.duration(j.duration_s), `${f.when(j.first_seen)} – ${f.when(j.last_seen)}`),
      kpi('GPUs', String(j.gpus.length), [...new Set(j.gpus.map((g) => g.gpu_model))].join(', ')),
      kpi('GPU-hours', f.gpuHours(j.gpu_hours), j.cost ? f.money(j.cost, 1) : null),
      kpi('Busy', f.ratio(j.busy_ratio), 'busy / allocated GPU time', 'good'),
      kpi('Mean SM activity', f.ratio(j.mean_sm_active_ratio), j.mean_sm_active_ratio == null ? 'not measured' : 'of its GPUs while it held them'),
      kpi('Held but idle', `${f.gpuHours(j.held_idle_gpu_hours)} GPU-h`, f.pct(j.held_idle_gpu_hours, j.gpu_hours), 'warn'),
      kpi('FLOP/s (est.)', f.flops(j.mean_flops_estimated), j.mfu_ratio == null ? 'MFU: not reported' : `MFU ${(100 * j.mfu_ratio).toFixed(1)}%`),
      kpi('Device-s per GB', f.deviceSecondsPerGB(j.device_seconds_per_input_byte),
        j.device_seconds_per_input_byte == null ? 'input bytes not reported' : 'of input (libvigil_client)'),
      kpi('Energy', f.kwh(j.energy_joules)),
    ),
  );
  const hours = j.hours || [];
  if (hours.length) {
    const xs = hours.map((x) => toSeconds(x.hour));
    const busy = hours.map((x) => x.busy_gpu_hours);
    const held = hours.map((x) => x.held_idle_gpu_hours);
    const other = hours.map((x) => Math.max(0, x.gpu_hours - x.busy_gpu_hours - x.held_idle_gpu_hours));
    const eff = hours.map((x) => (x.gpu_hours > 0 ? (100 * x.busy_gpu_hours) / x.gpu_hours : null));
    const split = h('div', { class: 'chart', id: 'chart-job-hours' });
    const effChart = h('div', { class: 'chart', id: 'chart-job-eff' });
    root.append(h('div', { class: 'row two' },
      card('GPU-hours per hour', 'allocated time split by what the GPUs did', split),
      card('Efficiency', 'busy share of allocated GPU time', effChart)));
    // The job's life in whole hours, with the dashboard's round local ticks.
    const life = { from: xs[0], to: xs[xs.length - 1] + 3600 };
    stackedBars(split, ctx, {
      xs, step: 3600, height: 240, win: life, yLabel: 'GPU-hours', fmt: (v) => `${f.gpuHours(v)} GPU-h`,
      series: [
        { label: 'busy', color: '#2563eb', values: busy },
        { label: 'held but idle', color: '#f59e0b', values: held },
        { label: 'other allocated', color: '#cbd5e1', values: other },
      ],
    });
    lines(effChart, ctx, {
      xs, step: 3600, height: 240, win: life, yRange: [0, 100], yLabel: '% busy', fmt: (v) => `${Math.round(v)}%`,
      series: [{ label: 'busy / allocated', color: '#10b981', values: eff, fill: 'rgba(16,185,129,0.10)' }],
    });
  }
  root.append(card('GPUs', `${j.gpus.length} GPUs`, table(
    [
      { label: 'Host', value: (g) => h('a', { href: `#/host/${encodeURIComponent(g.host)}` }, g.host) },
      { label: 'GPU', value: (g) => h('a', { href: `#/gpu/${encodeURIComponent(g.host)}/${encodeURIComponent(g.gpu_uuid)}` }, h('code', {}, g.gpu_uuid)) },
      { label: 'Model', value: (g) => g.gpu_model || '—' },
    ], j.gpus)));
  await cpuProfileSection(root, ctx, id);
  await analysesSection(root, ctx, id, j.analyses || []);
  if (j.identities.length > 1) {
    root.append(card('Identities', 'the label sets this job id was seen with', table(
      ['team', 'model', 'user', 'framework', 'rule'].map((k) => ({ label: k, value: (x) => f.label(x[k]) })), j.identities)));
  }
}

// The job's analyses, and the one picked with ?analysis=N opened below them.
async function analysesSection(root, ctx, id, list) {
  const open = (a) => ctx.navigate(`#/job/${encodeURIComponent(id)}?analysis=${a.id}`);
  root.append(card('Traces and analyses', list.length ? `${list.length} vigil analyze result${list.length === 1 ? '' : 's'}` : null,
    h('div', { id: 'job-analyses' }, analysesTable(list, open))));
  const want = Number(ctx.params.get('analysis'));
  if (!want) return;
  const a = await api(`analyses/${want}`);
  if (!ctx.current()) return;
  const section = card(`Analysis #${a.id}`, `received ${f.when(a.received)}`, analysisDetail(a));
  section.id = 'analysis-detail';
  root.append(section);
  section.scrollIntoView({ block: 'start' });
}
