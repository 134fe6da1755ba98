// SPDX-License-Identifier: Apache-2.0
// The fleet's profiling requests (GET /api/v1/profiling): who asked for which job's traces and why
// (manual, or the automatic low-utilisation trigger with its reason), how far each got, the
// analysis it produced, and the trigger's recent decisions (fired or skipped for budget). Shown on
// the Workflows page, where those analyses are aggregated, with a form that asks for one (the
// service wants an operator token for that when it has a token file).
import { api, apiPost } from '../api.js';
import { analysisLink } from '../analyses.js';
import { h, card, empty, table } from '../dom.js';
import * as f from '../format.js';

const jobLink = (id) => h('a', { href: `#/job/${encodeURIComponent(id)}` }, id);

// The reason without the trigger's own prefix ("manual: slow steps" under a "manual" badge).
const withoutTrigger = (r) => (r.reason.startsWith(`${r.trigger}: `) ? r.reason.slice(r.trigger.length + 2) : r.reason);

function outcome(r) {
  if (r.analysis_id) return analysisLink(r.job_id, r.analysis_id);
  return r.error ? h('span', { class: 'muted', title: r.error }, r.error.slice(0, 80)) : '—';
}

// Job id, how long to trace and why; on success the card is drawn again with the new request.
function askForm(redraw) {
  const job = h('input', { id: 'profile-job', placeholder: 'job id', size: 14 });
  const duration = h('input', { id: 'profile-duration', type: 'number', min: 1, value: 2000, size: 7 });
  const reason = h('input', { id: 'profile-reason', placeholder: 'why (kept with the request)', size: 30 });
  const status = h('span', { id: 'profile-status', class: 'muted' });
  const button = h('button', { id: 'profile-start', type: 'submit' }, 'Trace job');
  const submit = async (ev) => {
    ev.preventDefault();
    const jobId = job.value.trim();
    if (!jobId) {
      status.className = 'form-error';
      status.textContent = 'enter the id of a running job';
      return;
    }
    button.disabled = true;
    status.className = 'muted';
    status.textContent = 'asking…';
    try {
      const r = await apiPost('profiling', {
        job_id: jobId, duration_ms: Number(duration.value) || undefined, reason: reason.value.trim() || undefined,
      });
      await redraw(`request ${r.request_id} for job ${r.job_id}: ${r.state}`);
    } catch (e) {
      status.className = 'form-error';
      status.textContent = e.status === 403 ? `${e.message}; open the dashboard with #token=… to use one` : e.message;
      button.disabled = false;
    }
  };
  return h('form', { id: 'profile-form', class: 'ask-form', onsubmit: submit },
    h('label', {}, 'Job ', job), h('label', {}, 'for ', duration, ' ms'), h('label', {}, 'reason ', reason),
    button, status);
}

export async function profilingCard(notice = '') {
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
            { label: 'Why', value: (r) => h('span', {}, h('code', {}, r.trigger), ' ', withoutTrigger(r)) },
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
  const root = h('div', { id: 'profiling-requests' });
  const redraw = async (message) => root.replaceWith(await profilingCard(message));
  root.append(card('Profiling requests', `mode ${p.mode}: traces the fleet collected from running jobs, and why`,
    askForm(redraw), notice ? h('p', { id: 'profile-notice', class: 'notice' }, notice) : null, ...body));
  return root;
}
