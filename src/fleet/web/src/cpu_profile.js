// SPDX-License-Identifier: Apache-2.0
// A job's CPU profile from vigild's continuous mode (GET /api/v1/jobs/<id>/cpu-profile, merged
// over the job's hosts in the header's window): the hottest functions on the job page, and the
// flame graph page (#/flamegraph/<id>) that shows vigil-fleet's self-contained flame graph in a
// sandboxed frame. The HTML is fetched with the dashboard's token, since a plain link would not
// carry it.
import { api } from './api.js';
import { authHeaders } from './auth.js';
import { h, card, empty, table } from './dom.js';
import * as f from './format.js';

const profilePath = (id) => `jobs/${encodeURIComponent(id)}/cpu-profile`;

// The card on the job page; a job without uploaded profiles says how to get them.
export async function cpuProfileSection(root, ctx, id) {
  const p = await api(profilePath(id), { since: ctx.range, top: 25 });
  if (!ctx.current()) return;
  if (!p.profiles) {
    root.append(h('div', { id: 'job-cpu-profile' }, card('CPU profile', null,
      empty('No CPU profile', 'No host uploaded a CPU profile of this job in this window. '
        + 'vigild --profile.continuous with --fleet-url samples the processes that hold GPUs and uploads them.'))));
    return;
  }
  const total = p.samples;
  const hosts = p.hosts.map((x) => x.host);
  const link = h('a', { id: 'flamegraph-link', href: `#/flamegraph/${encodeURIComponent(id)}` }, 'Open the flame graph');
  root.append(h('div', { id: 'job-cpu-profile' }, card('CPU profile',
    `${total.toLocaleString('en-US')} samples at ${p.frequency_hz} Hz from ${hosts.length} host${hosts.length === 1 ? '' : 's'} `
      + `(${hosts.join(', ')}), ${f.when(p.start)} – ${f.when(p.end)}`,
    h('p', {}, link),
    table(
      [
        { label: 'Function', cls: 'key', value: (r) => h('code', {}, r.function) },
        { label: 'Module', value: (r) => r.module || '—' },
        { label: 'Self', cls: 'num', value: (r) => r.self.toLocaleString('en-US') },
        { label: 'Self %', cls: 'num', value: (r) => f.pct(r.self, total) },
        { label: 'Total', cls: 'num', value: (r) => r.total.toLocaleString('en-US') },
        { label: 'Total %', cls: 'num', value: (r) => f.pct(r.total, total) },
      ],
      p.top,
    ))));
}

// #/flamegraph/<job id>[?by_host=1]: the merged profile's flame graph, full width; by_host puts
// each host's stacks under its own root.
export async function flamegraph(root, ctx) {
  const id = ctx.arg;
  const byHost = ctx.params.get('by_host') === '1';
  const q = new URLSearchParams({ since: ctx.range, format: 'html', by_host: byHost ? '1' : '0' });
  const res = await fetch(`/api/v1/${profilePath(id)}?${q}`, { headers: authHeaders() });
  if (!res.ok) {
    let message = `${res.status} ${res.statusText}`;
    try {
      message = (await res.json()).error || message;
    } catch {
      // Not JSON: the status line says enough.
    }
    const err = new Error(message);
    err.status = res.status;
    throw err;
  }
  const page = await res.text();
  if (!ctx.current()) return;
  root.append(
    h('div', { class: 'page-head' }, h('h1', {}, `CPU flame graph: job ${id}`),
      h('p', { class: 'sub' }, h('a', { href: `#/job/${encodeURIComponent(id)}` }, 'Back to the job'), ' · ',
        h('a', { id: 'flamegraph-split', href: `#/flamegraph/${encodeURIComponent(id)}${byHost ? '' : '?by_host=1'}` },
          byHost ? 'Hosts merged' : 'One root per host'))),
    // The page's own script draws the graph; the sandbox keeps it away from the dashboard's token.
    h('iframe', {
      id: 'flamegraph-frame', title: `CPU flame graph of job ${id}`, sandbox: 'allow-scripts', srcdoc: page,
      style: { width: '100%', height: '75vh', border: '1px solid #e2e8f0', borderRadius: '10px', background: '#fff' },
    }),
  );
}
