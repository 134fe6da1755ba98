// SPDX-License-Identifier: Apache-2.0
// Thin client of the vigil-fleet JSON API (docs/protocols.md "Fleet push").
import { authHeaders } from './auth.js';

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

// The window selected in the header, as API parameters.
export function windowParams(range) {
  const bucket = range === '30d' ? '6h' : '1h';
  return { since: range, bucket };
}

export const toSeconds = (rfc3339) => Math.floor(Date.parse(rfc3339) / 1000);
