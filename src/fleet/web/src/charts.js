// SPDX-License-Identifier: Apache-2.0
// Charts on uPlot: stacked bars (GPU-hours by group over time) and lines (ratios over time).
// Every chart follows its container's width; destroy() is registered with the page.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { tickLabel, ticks, tzOffsetAt } from './timewin.js';

export const PALETTE = [
  '#2563eb', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6',
  '#06b6d4', '#ec4899', '#84cc16', '#f97316', '#0f766e',
];
export const GREY = '#cbd5e1';

const AXIS = { stroke: '#475569', grid: { stroke: '#e2e8f0', width: 1 }, ticks: { stroke: '#cbd5e1' } };

// The x axis of a window {from, to} (timewin.js): exactly the window, round local ticks.
export function timeAxis(win) {
  let interval = 3600;
  return {
    ...AXIS,
    splits: (u) => {
      const width = u.bbox.width / (window.devicePixelRatio || 1);
      const t = ticks(win.from, win.to, width, tzOffsetAt(win.to));
      interval = t.interval;
      return t.ticks;
    },
    values: (u, splits) => splits.map((t) => tickLabel(new Date(t * 1000), interval)),
  };
}

// The x scale and axis of a chart: the window when given, else the data's own range.
function xScaleAxis(win, fallback) {
  return win ? { scale: { time: true, range: () => [win.from, win.to] }, axis: timeAxis(win) } : { scale: fallback, axis: AXIS };
}

function widthOf(el) {
  return Math.max(320, Math.floor(el.getBoundingClientRect().width) || 960);
}

function mount(el, opts, data, ctx) {
  const chart = new uPlot({ ...opts, width: widthOf(el) }, data, el);
  const onResize = () => chart.setSize({ width: widthOf(el), height: opts.height });
  window.addEventListener('resize', onResize);
  ctx.onCleanup(() => {
    window.removeEventListener('resize', onResize);
    chart.destroy();
  });
  return chart;
}

// xs: bucket starts (unix s), step: bucket length (s); series: [{label, color, values}], stacked in
// order (first at the bottom). fmt formats a raw value for the legend.
export function stackedBars(el, ctx, { xs, step, series, height = 280, fmt, yLabel, win }) {
  const n = xs.length;
  const cum = [];
  let acc = new Array(n).fill(0);
  for (const s of series) {
    acc = acc.map((a, i) => a + (s.values[i] || 0));
    cum.push(acc);
  }
  // Draw the top of the stack first; each lower band paints over it.
  const order = series.map((_, i) => i).reverse();
  const bars = uPlot.paths.bars({ size: [0.88, 160], align: 0 });
  const centres = xs.map((t) => t + step / 2);
  const x = xScaleAxis(win, { time: true, range: () => [xs[0], xs[n - 1] + step] });
  const opts = {
    height,
    cursor: { points: { show: false } },
    scales: {
      x: x.scale,
      y: { range: (u, min, max) => [0, max > 0 ? max * 1.08 : 1] },
    },
    axes: [x.axis, { ...AXIS, label: yLabel, size: 56, labelSize: 18 }],
    legend: { live: true },
    series: [
      { label: 'time', value: (u, v) => (v == null ? '—' : new Date(v * 1000).toLocaleString('en-GB')) },
      ...order.map((i) => ({
        label: series[i].label,
        stroke: series[i].color,
        fill: series[i].color,
        width: 0,
        paths: bars,
        points: { show: false },
        value: (u, v, si, idx) => (idx == null ? '—' : fmt(series[i].values[idx] || 0)),
      })),
    ],
  };
  return mount(el, opts, [centres, ...order.map((i) => cum[i])], ctx);
}

// series: [{label, color, values, dash}]; values already in display units (null: no report, a
// gap). With `step`, xs are bucket starts: points sit mid-bucket and the x range matches
// stackedBars'; with `at`, xs are the points' own times. `win` fixes the x axis to the window.
export function lines(el, ctx, { xs, step, series, height = 240, yRange, fmt, yLabel, win, at: atTimes }) {
  const n = xs.length;
  const x = xScaleAxis(win, step ? { time: true, range: () => [xs[0], xs[n - 1] + step] } : { time: true });
  const opts = {
    height,
    scales: {
      x: x.scale,
      y: { range: yRange ? () => yRange : (u, min, max) => [0, max > 0 ? max * 1.1 : 1] },
    },
    axes: [x.axis, { ...AXIS, label: yLabel, size: 64, labelSize: 18, values: (u, vals) => vals.map(fmt) }],
    series: [
      { label: 'time', value: (u, v) => (v == null ? '—' : new Date(v * 1000).toLocaleString('en-GB')) },
      ...series.map((s) => ({
        label: s.label,
        stroke: s.color,
        width: 2,
        dash: s.dash,
        fill: s.fill,
        points: { show: xs.length < 40, size: 5 },
        value: (u, v) => (v == null ? '—' : fmt(v)),
      })),
    ],
  };
  const at = atTimes || (step ? xs.map((t) => t + step / 2) : xs);
  return mount(el, opts, [at, ...series.map((s) => s.values)], ctx);
}

// A light-to-dark blue scale for ratios in [0, 1] (light to dark reads alike to colour-blind
// eyes); null is "no report", drawn hatched by the heatmap, never as a colour of the scale.
export function heatColour(r) {
  if (r === null || r === undefined) return '#f1f5f9';
  const t = Math.max(0, Math.min(1, r));
  const from = [224, 242, 254];
  const to = [30, 64, 175];
  const c = from.map((f, i) => Math.round(f + (to[i] - f) * t));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}
