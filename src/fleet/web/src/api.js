// SPDX-License-Identifier: Apache-2.0
// Thin client of the vigil-fleet JSON API (docs/protocols.md "Fleet push").
import { authHeaders } from './auth.js';
import { hourBucket } from './timewin.js';

export async function api(path, params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const qs = q.toString();
  return reply(await fetch(`/api/v1/${path}${qs ? `?${qs}` : ''}`, {
    headers: { Accept: 'application/json', ...authHeaders() },
  }));
}

// POST of a JSON body (asking for profiling).
export async function apiPost(path, body) {
  return reply(await fetch(`/api/v1/${path}`, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', ...authHeaders() },
    body: JSON.stringify(body),
  }));
}

// The parsed reply, or an Error carrying the API's message and the HTTP status.
async function reply(res) {
  let body = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  if (!res.ok) {
    const err = new Error((body && body.error) || `${res.status} ${res.statusText}`);
    err.status = res.status;
    throw err;
  }
  return body;
}

// The window selected in the header (timewin.js resolveWindow), as API parameters: exact unix
// seconds, so every query of a page (and every auto-refresh) asks for the same window.
export function windowParams(win) {
  return { since: win.from, until: win.to, bucket: hourBucket(win.span) === 3600 ? '1h' : '6h' };
}

export const toSeconds = (rfc3339) => Math.floor(Date.parse(rfc3339) / 1000);
