// SPDX-License-Identifier: Apache-2.0
// Fleet workflow characterisation. Aggregates of uploaded vigil analyze results need the fleet
// service to store analyses (profiling as a service); until it does, this page says what feeds it
// and shows the one workload split the ledger already has: GPU-hours by framework.
import { api } from '../api.js';
import { h, card, empty, table } from '../dom.js';
import * as f from '../format.js';

export async function workflows(root, ctx) {
  const fw = await api('attribution', { by: 'framework', since: ctx.range });
  if (!ctx.current()) return;
  const rows = fw.rows.filter((r) => r.key !== '(unallocated)');
  root.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Workflows'),
      h('p', { class: 'sub' }, 'how the fleet\'s jobs spend GPU time: compute, communication, idle')),
    card('Characterisation from trace analyses', null,
      empty('No analyses uploaded yet',
        'This page aggregates vigil analyze results across jobs: the share of compute, communication and idle time, ' +
        'the most frequent insights and the GPU-hours they touch. It fills in once the fleet service collects traces ' +
        'from the daemons of running jobs and stores their analyses.')),
    card('GPU-hours by framework', 'from the ledger',
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
  );
}
