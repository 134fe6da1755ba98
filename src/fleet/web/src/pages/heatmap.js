// SPDX-License-Identifier: Apache-2.0
// Utilisation heatmap: one row per host, one column per time bucket, the colour the share of the
// host's reported GPU time that was busy (or allocated, or held but idle).
import { api, windowParams } from '../api.js';
import { heatColour } from '../charts.js';
import { bucketAxis } from '../data.js';
import { h, card, empty } from '../dom.js';
import * as f from '../format.js';

const METRICS = {
  busy: { label: 'busy', field: 'busy_gpu_hours' },
  allocated: { label: 'allocated', field: 'allocated_gpu_hours' },
  held: { label: 'held but idle', field: 'held_idle_gpu_hours' },
};

export async function heatmap(root, ctx) {
  const metric = METRICS[ctx.params.get('metric')] ? ctx.params.get('metric') : 'busy';
  const w = windowParams(ctx.range);
  const data = await api('attribution', { by: 'host', ...w });
  if (!ctx.current()) return;
  const xs = bucketAxis(data.rows, data.bucket_s);
  const hosts = [...new Set(data.rows.map((r) => r.key))].sort();
  const col = new Map(xs.map((x, i) => [x, i]));
  const cells = hosts.map(() => xs.map(() => null));
  const rowOf = new Map(hosts.map((k, i) => [k, i]));
  for (const r of data.rows) {
    const i = rowOf.get(r.key);
    const j = col.get(r.bucket_start_s);
    const prev = cells[i][j] || { wall: 0, v: 0 };
    cells[i][j] = { wall: prev.wall + r.gpu_hours, v: prev.v + r[METRICS[metric].field] };
  }

  const picker = h('div', { class: 'seg' },
    Object.entries(METRICS).map(([k, m]) =>
      h('a', { href: `#/heatmap?metric=${k}`, class: k === metric ? 'on' : null }, m.label)));
  root.append(h('div', { class: 'page-head' }, h('h1', {}, 'Utilisation by host'),
    h('p', { class: 'sub' }, `share of each host's reported GPU time that was ${METRICS[metric].label}, per ${data.bucket_s / 3600} h`)));
  if (!hosts.length) {
    root.append(card('No hosts', null, empty('Nothing reported in this window', 'Hosts appear once their vigild pushes to this service.')));
    return;
  }
  const wrap = h('div', { class: 'heat-wrap' });
  const tip = h('div', { class: 'tip', hidden: true });
  root.append(card('Hosts × time', null, picker, wrap,
    h('div', { class: 'heat-legend' }, '0%', h('span', { class: 'ramp' }), '100%',
      h('span', { class: 'sw nodata' }), 'no report')));
  wrap.append(tip);
  draw(wrap, tip, ctx, { xs, hosts, cells, step: data.bucket_s, what: METRICS[metric].label });
}

function draw(wrap, tip, ctx, { xs, hosts, cells, step, what }) {
  const canvas = h('canvas', { id: 'heatmap' });
  wrap.prepend(canvas);
  const left = 150;
  const top = 8;
  const bottom = 30;
  const rowH = 24;
  const render = () => {
    const width = Math.max(480, Math.floor(wrap.getBoundingClientRect().width));
    const height = top + hosts.length * rowH + bottom;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = width * dpr;
    canvas.height = height * dpr;
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
    const g = canvas.getContext('2d');
    g.scale(dpr, dpr);
    g.clearRect(0, 0, width, height);
    const colW = (width - left - 8) / xs.length;
    g.font = '12px system-ui, sans-serif';
    g.textBaseline = 'middle';
    hosts.forEach((host, i) => {
      g.fillStyle = '#334155';
      g.textAlign = 'right';
      g.fillText(host.length > 20 ? `${host.slice(0, 19)}…` : host, left - 10, top + i * rowH + rowH / 2);
      xs.forEach((_, j) => {
        const c = cells[i][j];
        g.fillStyle = heatColour(c && c.wall > 0 ? c.v / c.wall : null);
        g.fillRect(left + j * colW + 0.5, top + i * rowH + 1, Math.max(1, colW - 1), rowH - 2);
      });
    });
    g.fillStyle = '#475569';
    g.textAlign = 'center';
    const every = Math.max(1, Math.ceil(xs.length / Math.floor((width - left) / 70)));
    xs.forEach((x, j) => {
      if (j % every) return;
      const d = new Date(x * 1000);
      const text = step >= 86400 || xs.length > 48
        ? d.toLocaleString('en-GB', { month: 'short', day: 'numeric', hour: '2-digit' })
        : d.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' });
      g.fillText(text, left + j * colW + colW / 2, top + hosts.length * rowH + 16);
    });
    canvas.onmousemove = (e) => {
      const r = canvas.getBoundingClientRect();
      const j = Math.floor((e.clientX - r.left - left) / colW);
      const i = Math.floor((e.clientY - r.top - top) / rowH);
      if (i < 0 || i >= hosts.length || j < 0 || j >= xs.length) {
        tip.hidden = true;
        return;
      }
      const c = cells[i][j];
      tip.hidden = false;
      tip.textContent = `${hosts[i]} · ${new Date(xs[j] * 1000).toLocaleString('en-GB')} · ${
        c && c.wall > 0 ? `${f.pct(c.v, c.wall)} ${what} of ${f.gpuHours(c.wall)} GPU-h` : 'no report'}`;
      tip.style.left = `${e.clientX - r.left + 12}px`;
      tip.style.top = `${e.clientY - r.top + 12}px`;
    };
    canvas.onmouseleave = () => {
      tip.hidden = true;
    };
  };
  render();
  window.addEventListener('resize', render);
  ctx.onCleanup(() => window.removeEventListener('resize', render));
}
