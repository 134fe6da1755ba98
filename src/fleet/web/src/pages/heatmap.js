// SPDX-License-Identifier: Apache-2.0
// Utilisation heatmap: one row per host, one column per time bucket over exactly the selected
// window, the colour the share of the host's reported GPU time that was busy (or allocated, or
// held but idle). A bucket with no report is hatched (not a colour of the scale, so it reads
// apart from 0 % without colour vision); a cell or a host's name opens the host's page.
import { api, windowParams } from '../api.js';
import { heatColour } from '../charts.js';
import { h, card, empty } from '../dom.js';
import * as f from '../format.js';
import { tickLabel, ticks, tzOffsetAt } from '../timewin.js';

const METRICS = {
  busy: { label: 'busy', field: 'busy_gpu_hours' },
  allocated: { label: 'allocated', field: 'allocated_gpu_hours' },
  held: { label: 'held but idle', field: 'held_idle_gpu_hours' },
};

export async function heatmap(root, ctx) {
  const metric = METRICS[ctx.params.get('metric')] ? ctx.params.get('metric') : 'busy';
  const w = windowParams(ctx.win);
  const data = await api('attribution', { by: 'host', ...w });
  if (!ctx.current()) return;
  const step = data.bucket_s;
  const xs = [];
  // Buckets start at the window counted (the API's since_s, to the minute).
  for (let t = data.since_s; t < data.until_s; t += step) xs.push(t);
  const hosts = [...new Set(data.rows.map((r) => r.key))].sort();
  const col = new Map(xs.map((x, i) => [x, i]));
  const cells = hosts.map(() => xs.map(() => null));
  const rowOf = new Map(hosts.map((k, i) => [k, i]));
  for (const r of data.rows) {
    const i = rowOf.get(r.key);
    const j = col.get(r.bucket_start_s);
    if (j === undefined) continue;
    const prev = cells[i][j] || { wall: 0, v: 0 };
    cells[i][j] = { wall: prev.wall + r.gpu_hours, v: prev.v + r[METRICS[metric].field] };
  }

  const picker = h('div', { class: 'seg' },
    Object.entries(METRICS).map(([k, m]) =>
      h('a', { href: `#/heatmap?metric=${k}`, class: k === metric ? 'on' : null }, m.label)));
  root.append(h('div', { class: 'page-head' }, h('h1', {}, 'Utilisation by host'),
    h('p', { class: 'sub' }, `share of each host's reported GPU time that was ${METRICS[metric].label}, per ${data.bucket_s / 3600} h (${f.counted(data)}); click a host for its GPUs`)));
  if (!hosts.length) {
    root.append(card('No hosts', null, empty('Nothing reported in this window', 'Hosts appear once their vigild pushes to this service.')));
    return;
  }
  const wrap = h('div', { class: 'heat-wrap' });
  const tip = h('div', { class: 'tip', hidden: true });
  root.append(card('Hosts × time', null, picker, wrap,
    h('div', { class: 'heat-legend' }, '0%', h('span', { class: 'ramp' }), '100%',
      h('span', { class: 'sw nodata hatch', id: 'legend-nodata' }), 'no report (hatched)')));
  wrap.append(tip);
  draw(wrap, tip, ctx, { xs, hosts, cells, step, what: METRICS[metric].label, win: ctx.win });
}

// Diagonal grey lines on white: "no report", told from any colour of the scale by its shape.
function hatch(g) {
  const tile = document.createElement('canvas');
  tile.width = 8;
  tile.height = 8;
  const t = tile.getContext('2d');
  t.fillStyle = '#ffffff';
  t.fillRect(0, 0, 8, 8);
  t.strokeStyle = '#94a3b8';
  t.lineWidth = 1.5;
  t.beginPath();
  t.moveTo(0, 8);
  t.lineTo(8, 0);
  t.moveTo(-2, 2);
  t.lineTo(2, -2);
  t.moveTo(6, 10);
  t.lineTo(10, 6);
  t.stroke();
  return g.createPattern(tile, 'repeat');
}

function draw(wrap, tip, ctx, { xs, hosts, cells, step, what, win }) {
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
    // Columns on a time scale of exactly the window: the first and last buckets are cut.
    const plotW = width - left - 8;
    const px = (t) => left + ((Math.min(Math.max(t, win.from), win.to) - win.from) / (win.to - win.from)) * plotW;
    const pattern = hatch(g);
    // Where the cells are, for tests and tools that click one.
    canvas.dataset.geometry = JSON.stringify({ left, top, rowH, plotW, from: win.from, to: win.to, step, hosts });
    g.font = '12px system-ui, sans-serif';
    g.textBaseline = 'middle';
    hosts.forEach((host, i) => {
      g.fillStyle = '#1d4ed8';
      g.textAlign = 'right';
      g.fillText(host.length > 20 ? `${host.slice(0, 19)}…` : host, left - 10, top + i * rowH + rowH / 2);
      xs.forEach((x, j) => {
        const c = cells[i][j];
        const x0 = px(x);
        const x1 = px(x + step);
        g.fillStyle = c && c.wall > 0 ? heatColour(c.v / c.wall) : pattern;
        g.fillRect(x0 + 0.5, top + i * rowH + 1, Math.max(1, x1 - x0 - 1), rowH - 2);
      });
    });
    g.fillStyle = '#475569';
    g.textAlign = 'center';
    g.strokeStyle = '#94a3b8';
    const axisY = top + hosts.length * rowH;
    const t = ticks(win.from, win.to, plotW, tzOffsetAt(win.to));
    for (const x of t.ticks) {
      g.fillRect(px(x), axisY, 1, 4);
      g.fillText(tickLabel(new Date(x * 1000), t.interval), px(x), axisY + 16);
    }
    const at = (e) => {
      const r = canvas.getBoundingClientRect();
      const ex = e.clientX - r.left;
      const i = Math.floor((e.clientY - r.top - top) / rowH);
      if (i < 0 || i >= hosts.length) return null;
      if (ex < left) return { i, j: -1 };
      const tt = win.from + ((ex - left) / plotW) * (win.to - win.from);
      const j = xs.findIndex((x) => tt >= x && tt < x + step);
      return j < 0 ? null : { i, j };
    };
    canvas.onclick = (e) => {
      const hit = at(e);
      if (hit) ctx.navigate(`#/host/${encodeURIComponent(hosts[hit.i])}`);
    };
    canvas.style.cursor = 'pointer';
    canvas.onmousemove = (e) => {
      const r = canvas.getBoundingClientRect();
      const hit = at(e);
      if (!hit || hit.j < 0) {
        tip.hidden = true;
        return;
      }
      const { i, j } = hit;
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
