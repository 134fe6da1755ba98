// SPDX-License-Identifier: Apache-2.0
// The window and tick maths of timewin.js (node --test): exact windows that end now, custom
// ranges clipped to now, steps and bucket sizes, and readable ticks at every window from 1 h to
// 30 days on wide and narrow charts, checked against counts worked out by hand.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RANGES, gpuStep, hourBucket, resolveWindow, tickInterval, tickLabel, ticks, windowLabel } from './timewin.js';

// 2026-12-02 20:13:27 UTC.
const NOW = Date.UTC(2026, 11, 2, 20, 13, 27) / 1000;
// A Date whose local fields are the UTC ones of t (the tests run in any time zone).
const utc = (t) => {
  const d = new Date(t * 1000);
  return { getHours: () => d.getUTCHours(), getMinutes: () => d.getUTCMinutes(), getMonth: () => d.getUTCMonth(),
    getDate: () => d.getUTCDate(), getFullYear: () => d.getUTCFullYear() };
};

test('last 1 h at 20:13 is 19:13 to 20:13, not 19:00 to 21:00', () => {
  const w = resolveWindow({ range: '1h' }, NOW);
  assert.equal(w.to, NOW);
  assert.equal(w.from, NOW - 3600);
  assert.equal(windowLabel(utc(w.from), utc(w.to)), 'Dec 2, 19:13 – 20:13');
});

test('every preset ends now and spans its length', () => {
  for (const r of RANGES) {
    const w = resolveWindow({ range: r.key }, NOW);
    assert.equal(w.to - w.from, r.s, r.key);
    assert.equal(w.to, NOW);
  }
});

test('a custom range is kept, clipped to now, and refused when empty', () => {
  const a = resolveWindow({ from: NOW - 7200, to: NOW - 3600 }, NOW);
  assert.deepEqual([a.from, a.to, a.custom], [NOW - 7200, NOW - 3600, true]);
  const b = resolveWindow({ from: NOW - 600, to: NOW + 86400 }, NOW);
  assert.equal(b.to, NOW);
  assert.throws(() => resolveWindow({ from: NOW - 60, to: NOW - 120 }, NOW));
  assert.throws(() => resolveWindow({ from: NOW + 60, to: NOW + 120 }, NOW));
  assert.equal(windowLabel(utc(NOW - 86400 - 600), utc(NOW)), 'Dec 1, 20:03 – Dec 2, 20:13');
});

test('steps: at most 360 minute-grain buckets; hourly rollups 1 h up to 7 d', () => {
  assert.equal(gpuStep(3600), 60);
  assert.equal(gpuStep(86400), 300);
  assert.equal(gpuStep(7 * 86400), 1800);
  assert.equal(gpuStep(30 * 86400), 7200);
  for (const r of RANGES) assert.ok(r.s / gpuStep(r.s) <= 360, r.key);
  assert.equal(hourBucket(7 * 86400), 3600);
  assert.equal(hourBucket(30 * 86400), 21600);
});

test('ticks span the window, round, at least 80 px apart, at every window and width', () => {
  for (const width of [320, 640, 1000, 1400]) {
    for (const r of RANGES) {
      const w = resolveWindow({ range: r.key }, NOW);
      const { interval, ticks: ts } = ticks(w.from, w.to, width);
      assert.ok(ts.length >= 2, `${r.key} at ${width}px: ${ts.length} ticks`);
      assert.ok((interval * width) / r.s >= 80, `${r.key} at ${width}px: ticks ${((interval * width) / r.s).toFixed(0)} px apart`);
      assert.ok(ts[0] >= w.from && ts[ts.length - 1] <= w.to);
      assert.ok(ts[0] - w.from < interval && w.to - ts[ts.length - 1] < interval);
      for (const t of ts) assert.equal(t % interval, 0, `${r.key}: ${t} on a multiple of ${interval}`);
    }
  }
  // Worked by hand for a 1000 px chart (12 ticks at most).
  assert.equal(tickInterval(3600, 1000), 300); // 1 h: every 5 min, 12 ticks.
  assert.equal(tickInterval(6 * 3600, 1000), 1800); // 6 h: every 30 min.
  assert.equal(tickInterval(86400, 1000), 7200); // 24 h: every 2 h.
  assert.equal(tickInterval(7 * 86400, 1000), 86400); // 7 d: daily.
  assert.equal(tickInterval(30 * 86400, 1000), 7 * 86400); // 30 d: weekly.
  assert.deepEqual(ticks(NOW - 3600, NOW, 1000).ticks.slice(0, 2), [NOW - 3600 + 93, NOW - 3600 + 393]);
});

test('ticks fall on local hours and days: UTC+5:30 midnight is 18:30 UTC', () => {
  const tz = 5.5 * 3600;
  const { interval, ticks: ts } = ticks(NOW - 7 * 86400, NOW, 1000, tz);
  assert.equal(interval, 86400);
  for (const t of ts) assert.equal((t + tz) % 86400, 0);
  assert.equal(ts.length, 7);
});

test('labels: times within a day, dates at midnight and for day ticks', () => {
  const midnight = Date.UTC(2026, 11, 2) / 1000;
  assert.equal(tickLabel(utc(midnight + 19 * 3600 + 15 * 60), 300), '19:15');
  assert.equal(tickLabel(utc(midnight), 7200), 'Dec 2');
  assert.equal(tickLabel(utc(midnight + 7200), 86400), 'Dec 2');
});
