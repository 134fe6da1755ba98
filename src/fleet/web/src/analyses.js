// SPDX-License-Identifier: Apache-2.0
// Pieces the Workflows and job pages share to show vigil analyze results stored by vigil-fleet
// (docs/protocols.md "Analysis upload"): the compute / communication / memory / idle split as a
// stacked bar, severity badges, and one analysis' insights with their evidence.
import { h, empty, table } from './dom.js';
import * as f from './format.js';

export const SHARES = [
  { key: 'compute', label: 'compute', color: '#2563eb' },
  { key: 'communication', label: 'communication', color: '#f59e0b' },
  { key: 'memory', label: 'memory', color: '#10b981' },
  { key: 'idle', label: 'idle', color: '#cbd5e1' },
  { key: 'other', label: 'other', color: '#64748b' },
];

const SEVERITY = {
  critical: { bg: '#fee2e2', fg: '#991b1b' },
  warning: { bg: '#fef3c7', fg: '#92400e' },
  info: { bg: '#e0f2fe', fg: '#075985' },
};

const pct1 = (v) => `${(100 * (v || 0)).toFixed(1)}%`;

export function severity(s) {
  const c = SEVERITY[s] || SEVERITY.info;
  return h('span', {
    class: `sev sev-${s}`,
    style: { background: c.bg, color: c.fg, borderRadius: '999px', padding: '1px 8px', fontSize: '12px', fontWeight: 600 },
  }, s || 'info');
}

// One horizontal bar, its segments as wide as the shares (0-1) of `shares`.
export function shareBar(shares, { height = 18 } = {}) {
  return h('div', {
    class: 'share-bar',
    role: 'img',
    'aria-label': SHARES.map((s) => `${s.label} ${pct1(shares[s.key])}`).join(', '),
    style: { display: 'flex', width: '100%', minWidth: '120px', height: `${height}px`, borderRadius: '4px', overflow: 'hidden', background: '#f1f5f9' },
  }, SHARES.filter((s) => shares[s.key] > 0).map((s) => h('div', {
    class: `share share-${s.key}`,
    dataset: { share: String(shares[s.key]) },
    title: `${s.label}: ${pct1(shares[s.key])}`,
    style: { width: `${100 * shares[s.key]}%`, background: s.color },
  })));
}

export function shareLegend() {
  return h('div', { class: 'share-legend', style: { display: 'flex', gap: '14px', flexWrap: 'wrap', margin: '8px 0', color: '#475569', fontSize: '12px' } },
    SHARES.map((s) => h('span', {},
      h('span', { style: { display: 'inline-block', width: '10px', height: '10px', borderRadius: '2px', background: s.color, marginRight: '5px' } }), s.label)));
}

// Rows of labelled bars: [{label (node|string), shares, note}].
export function shareRows(rows) {
  return h('div', { class: 'share-rows' }, shareLegend(), rows.map((r) =>
    h('div', { class: 'share-row', style: { display: 'grid', gridTemplateColumns: '180px 1fr 260px', gap: '12px', alignItems: 'center', margin: '6px 0' } },
      h('div', { class: 'share-label', style: { overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' } }, r.label),
      shareBar(r.shares),
      h('div', { class: 'sub', style: { fontSize: '12px' } },
        `compute ${pct1(r.shares.compute)} · comm ${pct1(r.shares.communication)} · idle ${pct1(r.shares.idle)}${r.note ? ` · ${r.note}` : ''}`))));
}

// The table of a job's analyses; a row opens the analysis.
export function analysesTable(list, onOpen) {
  if (!list.length) {
    return empty('No analyses for this job yet',
      'Upload one with `vigil analyze TRACE --upload URL --job-id ID`; traces the fleet service collects from the job\'s daemons are analysed and listed here too.');
  }
  return table(
    [
      { label: 'Received', value: (a) => h('a', { class: 'analysis-link', href: `#/job/${encodeURIComponent(a.job_id)}?analysis=${a.id}`, onclick: (e) => e.stopPropagation() }, f.when(a.received)) },
      { label: 'Source', value: (a) => a.source },
      { label: 'Reason', value: (a) => a.reason || '—' },
      { label: 'Host', value: (a) => a.host || '—' },
      { label: 'Ranks', cls: 'num', value: (a) => String(a.ranks) },
      { label: 'GPU time traced', cls: 'num', value: (a) => f.duration(a.gpu_seconds) },
      { label: 'Compute / comm / memory / idle', value: (a) => shareBar(a.shares, { height: 12 }) },
      { label: 'Insights', value: (a) => (a.insights.length ? h('div', { class: 'insight-ids', style: { whiteSpace: 'normal', minWidth: '200px' } }, a.insights.map((i) => h('span', { style: { display: 'inline-block', whiteSpace: 'nowrap', margin: '1px 6px 1px 0' } }, severity(i.severity), ' ', h('code', {}, i.id)))) : 'none') },
    ],
    list,
    { onRowClick: onOpen, rowClass: () => 'analysis-row' },
  );
}

const us = (v) => (Number.isFinite(v) ? f.duration(v / 1e6) : '—');

// What an evidence row's value counts, by insight (src/trace/insights): times are nanoseconds,
// sizes bytes, the rest counts.
const EVIDENCE_UNIT = {
  low_gpu_utilization: 'ns', exposed_communication: 'ns', no_tensor_cores: 'ns', excessive_sync: 'ns',
  straggler: 'ns', dataloader_bottleneck: 'ns', pageable_memcpy: 'bytes', memory_near_capacity: 'bytes',
  launch_bound: 'kernels', unfused_optimizer: 'kernels per step',
};

export function evidenceValue(insight, v) {
  if (v === undefined || v === null || !Number.isFinite(Number(v))) return '—';
  const unit = EVIDENCE_UNIT[insight];
  if (unit === 'ns') return f.duration(Number(v) / 1e9);
  if (unit === 'bytes') return f.bytes(Number(v));
  if (unit) return `${Math.round(Number(v)).toLocaleString('en-US')} ${unit}`;
  return Number(v).toLocaleString('en-US', { maximumSignificantDigits: 4 });
}

// One analysis: the split, then every insight with its evidence and recommendation.
export function analysisDetail(a) {
  const r = a.report || {};
  const insights = r.insights || [];
  return h('div', { class: 'analysis-detail' },
    h('p', { class: 'sub' }, [
      `${a.ranks} rank${a.ranks === 1 ? '' : 's'}`, `${a.steps} profiler step${a.steps === 1 ? '' : 's'}`,
      `${f.duration(a.gpu_seconds)} GPU time traced`,
      a.trace_start ? `trace ${f.when(a.trace_start)} – ${f.when(a.trace_end)}` : null,
      `${a.source}${a.reason ? ` (${a.reason})` : ''}`, a.host ? `from ${a.host}` : null,
    ].filter(Boolean).join(' · ')),
    shareRows([{ label: 'This trace', shares: a.shares }]),
    insights.length
      ? insights.map((i) => h('div', { class: 'insight', dataset: { insight: i.id }, style: { borderTop: '1px solid #e2e8f0', padding: '12px 0' } },
          h('div', { style: { display: 'flex', gap: '10px', alignItems: 'baseline', flexWrap: 'wrap' } },
            severity(i.severity), h('strong', { class: 'insight-title' }, i.title), h('code', {}, i.id),
            h('span', { class: 'sub' }, `estimated gain ${Number(i.estimated_gain_pct || 0).toFixed(1)}% of GPU time`)),
          i.detail ? h('p', { style: { margin: '6px 0' } }, i.detail) : null,
          (i.evidence || []).length
            ? table(
                [
                  { label: 'Evidence', value: (e) => e.what || '—' },
                  { label: 'Name', value: (e) => (e.name ? h('code', {}, String(e.name).slice(0, 120)) : '—') },
                  { label: 'Rank', cls: 'num', value: (e) => (e.rank === undefined || e.rank === null ? '—' : String(e.rank)) },
                  { label: 'Duration', cls: 'num', value: (e) => us(e.dur_us) },
                  { label: 'Value', cls: 'num', value: (e) => evidenceValue(i.id, e.value) },
                ],
                i.evidence)
            : null,
          i.recommendation ? h('p', { class: 'recommendation', style: { margin: '8px 0 0' } }, h('strong', {}, 'Recommendation: '), i.recommendation) : null))
      : empty('No insights', 'vigil analyze found none of the known anti-patterns in this trace.'));
}

// A link to one analysis on its job's page.
export function analysisLink(jobId, id) {
  return h('a', { href: `#/job/${encodeURIComponent(jobId)}?analysis=${id}` }, `#${id}`);
}
