// SPDX-License-Identifier: Apache-2.0
// Fleet workflow characterisation from the vigil analyze results vigil-fleet stores
// (GET /api/v1/workflows): where analysed GPU time goes (compute / communication / memory / idle,
// weighted by each job's GPU-hours), the most frequent insights and the GPU-hours of the jobs they
// fire on, the jobs with the most to gain; plus GPU-hours by framework from the ledger.
import { api } from '../api.js';
import { analysisLink, severity, shareRows } from '../analyses.js';
import { h, card, empty, kpi, table } from '../dom.js';
import * as f from '../format.js';
import { profilingCard } from './profiling_card.js';

const jobLink = (id) => h('a', { href: `#/job/${encodeURIComponent(id)}` }, id);
const pct1 = (v) => `${(100 * (v || 0)).toFixed(1)}%`;
// % of roofline of a job's analyses, with the share of kernel time its work model covers.
const roofline = (j) => (j.roofline_pct == null
  ? h('span', { class: 'roofline', title: 'no kernel with a work model on a GPU with known peaks' }, '—')
  : h('span', { class: 'roofline', title: `${pct1(j.roofline_coverage)} of kernel time modelled` },
    `${j.roofline_pct.toFixed(1)}%`, h('small', {}, ` (${pct1(j.roofline_coverage)} modelled)`)));

export async function workflows(root, ctx) {
  const [wf, fw, profiling] = await Promise.all([
    api('workflows', { since: ctx.win.from, until: ctx.win.to }),
    api('attribution', { by: 'framework', since: ctx.win.from, until: ctx.win.to }),
    profilingCard(),
  ]);
  if (!ctx.current()) return;
  const rows = fw.rows.filter((r) => r.key !== '(unallocated)');
  root.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Workflows'),
      h('p', { class: 'sub' }, `how the fleet's jobs spend GPU time: compute, communication, idle · ${f.counted(wf.ledger_window)}`)));
  if (!wf.analyses) {
    root.append(card('Characterisation from trace analyses', null,
      empty('No analyses uploaded yet',
        'This page aggregates vigil analyze results across jobs: the share of compute, communication and idle time, ' +
        'the most frequent insights and the GPU-hours they touch. Upload one with ' +
        '`vigil analyze TRACE --upload URL --job-id ID`; traces the fleet service collects from running jobs are added too.')));
  } else {
    root.append(
      h('div', { class: 'kpis' },
        kpi('Analyses', String(wf.analyses), `of ${wf.jobs} job${wf.jobs === 1 ? '' : 's'}`),
        kpi('GPU-hours weighed', f.gpuHours(wf.weight_gpu_hours), `${f.gpuHours(wf.ledger_gpu_hours)} from the ledger, the rest traced`),
        kpi('Compute', pct1(wf.shares.compute), 'GPU-hour weighted', 'good'),
        kpi('Communication', pct1(wf.shares.communication), 'not overlapped by compute'),
        kpi('Idle', pct1(wf.shares.idle), 'no GPU work in the traces', 'warn')),
      card('Where analysed GPU time goes', 'each job weighted by its GPU-hours in the window (traced time when the ledger does not know it)',
        h('div', { id: 'workflow-shares' }, shareRows([
          { label: h('strong', {}, 'Fleet'), shares: wf.shares, note: `${wf.jobs} jobs` },
          ...wf.top_jobs.map((j) => ({ label: jobLink(j.job_id), shares: j.shares, note: `${f.gpuHours(j.gpu_hours)} GPU-h (${j.weight_source})` })),
        ]))),
      card('Most frequent insights', 'by the number of jobs they fire on',
        table(
          [
            { label: 'Insight', cls: 'key', value: (i) => h('span', {}, i.title, ' ', h('code', {}, i.id)) },
            { label: 'Severity', value: (i) => severity(i.severity) },
            { label: 'Jobs', cls: 'num', value: (i) => String(i.jobs) },
            { label: 'Analyses', cls: 'num', value: (i) => String(i.analyses) },
            { label: 'GPU-hours touched', cls: 'num', value: (i) => f.gpuHours(i.gpu_hours) },
            { label: 'Mean est. gain', cls: 'num', value: (i) => `${i.mean_estimated_gain_pct.toFixed(1)}%` },
          ],
          wf.insights,
          { rowClass: () => 'insight-row', rowTitle: (i) => `jobs: ${i.job_ids.join(', ')}` })),
      card('Top jobs by estimated gain', 'what the best fix of the latest analysis could win',
        table(
          [
            { label: 'Job', cls: 'key', value: (j) => jobLink(j.job_id) },
            { label: 'Top insight', value: (j) => (j.top_insight ? h('span', {}, severity(j.top_insight.severity), ' ', j.top_insight.title) : '—') },
            { label: 'Gain', cls: 'num', value: (j) => `${j.estimated_gain_pct.toFixed(1)}%` },
            { label: 'GPU-h to win', cls: 'num', value: (j) => f.gpuHours(j.estimated_gain_gpu_hours) },
            { label: '% of roofline', cls: 'num', value: roofline },
            { label: 'Analysis', value: (j) => analysisLink(j.job_id, j.latest_analysis_id) },
          ],
          wf.top_jobs,
          { rowClass: () => 'gain-row' })));
  }
  root.append(
    card('GPU-hours by framework', `from the ledger, ${f.counted(fw)}`,
      rows.length
        ? table(
            [
              { label: 'Framework', cls: 'key', value: (r) => f.label(r.key) },
              { label: 'GPU-hours', cls: 'num', value: (r) => f.gpuHours(r.gpu_hours) },
              { label: 'Busy', cls: 'num', value: (r) => f.pct(r.busy_gpu_hours, r.gpu_hours) },
              { label: 'Held idle GPU-h', cls: 'num', value: (r) => f.gpuHours(r.held_idle_gpu_hours) },
              { label: 'Energy', cls: 'num', value: (r) => f.kwh(r.energy_joules) },
            ],
            rows,
          )
        : empty('No jobs', 'No job held a GPU in this window.')),
    profiling,
  );
}
