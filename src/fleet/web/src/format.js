// SPDX-License-Identifier: Apache-2.0
// Number and time formatting shared by the pages.

export function gpuHours(v) {
  if (!Number.isFinite(v)) return '—';
  if (v === 0) return '0';
  if (v < 0.1) return v.toFixed(3);
  if (v < 100) return v.toFixed(1);
  return Math.round(v).toLocaleString('en-US');
}

export function pct(part, whole) {
  if (!whole) return '—';
  return `${((100 * part) / whole).toFixed(1)}%`;
}

export function kwh(joules) {
  if (!Number.isFinite(joules)) return '—';
  const v = joules / 3.6e6;
  return v < 10 ? `${v.toFixed(2)} kWh` : `${Math.round(v).toLocaleString('en-US')} kWh`;
}

export function money(v, price) {
  if (!price) return '—';
  return `$${v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

// A span of time: sub-second spans in ms (µs below 1 ms), then s, min, h, d.
export function duration(seconds) {
  if (!Number.isFinite(seconds)) return '—';
  if (seconds < 1) return seconds === 0 ? '0 s' : seconds < 1e-3 ? `${(seconds * 1e6).toFixed(1)} µs` : `${(seconds * 1e3).toFixed(seconds < 0.01 ? 2 : 1)} ms`;
  if (seconds < 10) return `${seconds.toFixed(2)} s`;
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const hrs = Math.floor(m / 60);
  if (hrs < 48) return `${hrs}h ${m % 60}m`;
  return `${Math.floor(hrs / 24)}d ${hrs % 24}h`;
}

export function when(rfc3339) {
  const t = Date.parse(rfc3339);
  if (!Number.isFinite(t)) return '—';
  return new Date(t).toLocaleString('en-GB', {
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  });
}

// The window a ledger reply counted (its since/until, to the minute), and the edges counted as
// their whole hour because their minute rows are past retention.
export function counted(reply) {
  const text = `${when(reply.since)} – ${when(reply.until)} counted`;
  const edges = reply.whole_hour_edges || [];
  if (!edges.length) return text;
  return `${text}; ${edges.join(' and ')} widened to the whole hour (minute rows past retention)`;
}

export function flops(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  const units = ['FLOP/s', 'kFLOP/s', 'MFLOP/s', 'GFLOP/s', 'TFLOP/s', 'PFLOP/s'];
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i += 1;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

export const label = (v) => (v === '' || v === undefined || v === null ? '(unlabelled)' : v);

// A ratio 0-1 as a percentage; '—' when unknown.
export function ratio(v, digits = 1) {
  return v === null || v === undefined || !Number.isFinite(v) ? '—' : `${(100 * v).toFixed(digits)}%`;
}

export function bytes(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${v.toFixed(i === 0 || v >= 100 ? 0 : 1)} ${units[i]}`;
}

export const watts = (v) => (v === null || v === undefined || !Number.isFinite(v) ? '—' : `${Math.round(v)} W`);
export const celsius = (v) => (v === null || v === undefined || !Number.isFinite(v) ? '—' : `${Math.round(v)} °C`);

// libvigil_client's device-seconds per input byte, shown per GB of input (10^9 bytes).
export function deviceSecondsPerGB(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  const perGB = v * 1e9;
  return `${perGB >= 100 ? Math.round(perGB).toLocaleString('en-US') : perGB.toPrecision(3)} device-s/GB`;
}
