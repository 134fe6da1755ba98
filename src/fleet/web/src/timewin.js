// SPDX-License-Identifier: Apache-2.0
// Time windows and axis ticks, as Grafana users expect them: a window is exactly what was asked
// for and never ends in the future ("last 1 h" at 20:13 is 19:13–20:13), a custom range is
// clipped to now, and axes span the window with ticks at round local times (every 5, 10, 15,
// 30 min, 1, 2, 3, 6, 12 h or 1, 2, 7, 14 days) spaced at least `minPx` apart, from 1 h to 30 d.
// Pure functions of their arguments (the clock and the time zone offset are passed in), so
// timewin_test.mjs checks them under node.

export const RANGES = [
  { key: '1h', label: 'last 1 hour', s: 3600 },
  { key: '6h', label: 'last 6 hours', s: 6 * 3600 },
  { key: '24h', label: 'last 24 hours', s: 86400 },
  { key: '7d', label: 'last 7 days', s: 7 * 86400 },
  { key: '30d', label: 'last 30 days', s: 30 * 86400 },
];
export const REFRESH = [
  { key: 'off', label: 'off', ms: 0 },
  { key: '30s', label: '30 s', ms: 30000 },
  { key: '1m', label: '1 min', ms: 60000 },
];

// Minute-grain buckets the per-host and per-GPU API accepts (ledger_gpu_query.h).
const GPU_STEPS = [60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
const TICKS = [60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 2 * 86400, 7 * 86400, 14 * 86400];

// {range: '1h'} or {from, to} (unix s) -> {from, to, span} in unix seconds, `to` at most now.
// Throws on a custom range that is empty or ends before it starts.
export function resolveWindow(sel, nowS) {
  const now = Math.floor(nowS);
  if (sel.from !== undefined && sel.from !== null) {
    const to = Math.min(Math.floor(sel.to ?? now), now);
    const from = Math.floor(sel.from);
    if (!(to > from)) throw new Error('the range must end after it starts, and start before now');
    return { from, to, span: to - from, custom: true };
  }
  const r = RANGES.find((x) => x.key === sel.range) || RANGES[2];
  return { from: now - r.s, to: now, span: r.s, custom: false, key: r.key };
}

// The smallest minute-grain step giving at most maxPoints buckets (the server's default rule).
export function gpuStep(spanS, maxPoints = 360) {
  return GPU_STEPS.find((s) => spanS <= s * maxPoints) ?? GPU_STEPS[GPU_STEPS.length - 1];
}

// Hourly-rollup bucket of the attribution pages: 1 h up to 7 days, 6 h beyond.
export function hourBucket(spanS) {
  return spanS > 7 * 86400 ? 6 * 3600 : 3600;
}

// The tick interval: the smallest in TICKS with ticks at least minPx apart over widthPx.
export function tickInterval(spanS, widthPx, minPx = 80) {
  const most = Math.max(2, Math.floor(widthPx / minPx));
  return TICKS.find((iv) => spanS / iv <= most) ?? TICKS[TICKS.length - 1];
}

// Tick times in [from, to] at multiples of the interval in local time (tzOffsetS: seconds east
// of UTC, -Date#getTimezoneOffset()*60 of the tick's day; days start at local midnight).
export function ticks(from, to, widthPx, tzOffsetS = 0, minPx = 80) {
  const iv = tickInterval(to - from, widthPx, minPx);
  const out = [];
  const first = Math.ceil((from + tzOffsetS) / iv) * iv - tzOffsetS;
  for (let t = first; t <= to; t += iv) out.push(t);
  return { interval: iv, ticks: out };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n) => String(n).padStart(2, '0');

// A tick's label: "HH:MM" within a day, the date ("Dec 2") at local midnight and for day ticks.
// `local` is the tick as a Date read in local time (tests pass one built from UTC fields).
export function tickLabel(local, interval) {
  const midnight = local.getHours() === 0 && local.getMinutes() === 0;
  const date = `${MONTHS[local.getMonth()]} ${local.getDate()}`;
  if (interval >= 86400 || midnight) return date;
  return `${two(local.getHours())}:${two(local.getMinutes())}`;
}

// "Dec 2, 19:13 – 20:13" (the date again when the window crosses midnight).
export function windowLabel(fromLocal, toLocal) {
  const date = (d) => `${MONTHS[d.getMonth()]} ${d.getDate()}`;
  const time = (d) => `${two(d.getHours())}:${two(d.getMinutes())}`;
  const sameDay = date(fromLocal) === date(toLocal) && fromLocal.getFullYear() === toLocal.getFullYear();
  return sameDay ? `${date(fromLocal)}, ${time(fromLocal)} – ${time(toLocal)}`
    : `${date(fromLocal)}, ${time(fromLocal)} – ${date(toLocal)}, ${time(toLocal)}`;
}

// Seconds east of UTC at unix time t in this browser.
export const tzOffsetAt = (t) => -new Date(t * 1000).getTimezoneOffset() * 60;
