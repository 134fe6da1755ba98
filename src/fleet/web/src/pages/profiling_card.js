// SPDX-License-Identifier: Apache-2.0
// The fleet's profiling requests (GET /api/v1/profiling): who asked for which job's traces and why
// (manual, or the automatic low-utilisation trigger with its reason), how far each got, the
// analysis it produced, and the trigger's recent decisions (fired or skipped for budget). Shown on
// the Workflows page, where those analyses are aggregated.
import { api } from '../api.js';
import { analysisLink } from '../analyses.js';
import { h, card, empty, table } from '../dom.js';
import * as f from '../format.js';

const jobLink = (id) => h('a', { href: `#/job/${encodeURIComponent(id)}` }, id);

function outcome(r) {
  if (r.analysis_id) return analysisLink(r.job_id, r.analysis_id);
  return r.error ? h('span', { class: 'muted', title: r.error }, r.error.slice(0, 80)) : '—';
}

export async function profilingCard() {
  let p;
  try {
    p = await api('profiling', { limit: 20 });
  } catch (e) {
    if (e.status === 404) {
      return card('Profiling requests', null,
        empty('Profiling is off', 'Start vigil-fleet with --profiling manual or auto to trace jobs from here.'));
    }
    throw e;
  }
  const hostsOk = (r) => r.hosts.filter((x) => x.state !== 'failed').length;
  const body = [
    p.requests.length
      ? table(
          [
            { label: 'Requested', value: (r) => f.when(r.created) },
            { label: 'Job', cls: 'key', value: (r) => jobLink(r.job_id) },
            { label: 'Why', value: (r) => h('span', {}, h('code', {}, r.trigger), ' ', r.reason) },
            { label: 'State', value: (r) => h('span', { class: `state state-${r.state}` }, r.state) },
            { label: 'Hosts', cls: 'num', value: (r) => `${hostsOk(r)} / ${r.hosts.length}` },
            { label: 'Files', cls: 'num', value: (r) => `${r.files.length} / ${r.expected_files}` },
            { label: 'Analysis', value: outcome },
          ],
          p.requests,
          { rowClass: () => 'profiling-row', rowTitle: (r) => r.request_id })
      : empty('No profiling requests yet',
        'vigil fleet profile --job-id J traces a running job on every host it uses' +
          (p.mode === 'auto' ? '; the automatic trigger adds jobs that idle their GPUs.' : '.')),
  ];
  if (p.decisions && p.decisions.length) {
    body.push(h('h3', {}, 'Automatic trigger'),
      table(
        [
          { label: 'When', value: (d) => f.when(d.time) },
          { label: 'Job', cls: 'key', value: (d) => jobLink(d.job_id) },
          { label: 'Decision', value: (d) => d.decision },
          { label: 'Reason', value: (d) => d.reason },
        ],
        p.decisions.slice(0, 10)));
  }
  return h('div', { id: 'profiling-requests' },
    card('Profiling requests', `mode ${p.mode}: traces the fleet collected from running jobs, and why`, ...body));
}
