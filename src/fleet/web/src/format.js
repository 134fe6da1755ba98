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

export function duration(seconds) {
  if (!Number.isFinite(seconds)) return '—';
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
