// SPDX-License-Identifier: Apache-2.0
// deploy/kubernetes/*.yaml and the Helm chart deploy/helm/vigil (rendered by the real Go template
// engine, see helm_render/) against the Kubernetes API schemas: kubernetes-models' ajv validators,
// generated from the Kubernetes OpenAPI spec, check types, required fields, enums and formats;
// k8s_fields_check.py (Debian's python3-kubernetes models) rejects unknown fields, which the
// schemas leave open. Then the same checks must refuse broken copies, so the test can fail.
// Environment: VIGIL_DEPLOY_NODE_MODULES (npm ci of schema/), VIGIL_HELM_RENDER (the renderer
// binary; without it the chart is skipped with a message). Exit 77 when node_modules is missing.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const modules = process.env.VIGIL_DEPLOY_NODE_MODULES || path.join(here, 'schema/node_modules');
if (!existsSync(path.join(modules, 'kubernetes-models'))) {
  console.log(`SKIPPED: ${modules} has no kubernetes-models (npm ci in tests/deploy/schema)`);
  process.exit(77);
}
const require = createRequire(path.join(modules, 'x.js'));
const YAML = await import(pathToFileURL(require.resolve('yaml')).href);

// apps/v1 DaemonSet -> kubernetes-models/apps/v1/DaemonSet; v1 Service -> kubernetes-models/v1/Service.
async function modelFor(apiVersion, kind) {
  const file = path.join(modules, 'kubernetes-models', apiVersion, `${kind}.js`);
  if (!existsSync(file)) return null;
  return (await import(pathToFileURL(file).href))[kind];
}

function parseDocs(text, source) {
  const docs = [];
  // YAML 1.1, as kubectl and helm read it (0440 is octal).
  for (const d of YAML.parseAllDocuments(text, { version: '1.1' })) {
    if (d.errors.length) throw new Error(`${source}: YAML: ${d.errors[0].message}`);
    const obj = d.toJS();
    if (obj != null) docs.push({ source, obj });
  }
  return docs;
}

// Every problem of `docs`, as lines.
async function problems(docs) {
  const out = [];
  for (const { source, obj } of docs) {
    const where = `${source} ${obj.kind}/${obj.metadata?.name}`;
    const Model = await modelFor(String(obj.apiVersion), String(obj.kind));
    if (!Model) {
      out.push(`${where}: no schema for ${obj.apiVersion} ${obj.kind}`);
      continue;
    }
    try {
      new Model(structuredClone(obj)).validate();
    } catch (e) {
      out.push(`${where}: ${e.message}`);
    }
  }
  const fields = spawnSync(existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3',
    [path.join(here, 'k8s_fields_check.py')],
    { input: JSON.stringify(docs.map((d) => ({ ...d.obj, _source: d.source }))), encoding: 'utf8' });
  if (fields.status === 77) {
    console.log(`note: ${fields.stdout.trim()}; unknown fields are not checked`);
  } else if (fields.status !== 0) {
    out.push(...(fields.stdout + fields.stderr).trim().split('\n'));
  }
  return out;
}

let failed = 0;
let passed = 0;
function expect(ok, what, detail = '') {
  if (ok) {
    passed++;
    console.log(`ok: ${what}`);
  } else {
    failed++;
    console.log(`FAIL: ${what}${detail ? `\n  ${detail}` : ''}`);
  }
}

const plainDir = path.join(root, 'deploy/kubernetes');
const plain = readdirSync(plainDir).filter((f) => f.endsWith('.yaml')).sort()
  .flatMap((f) => parseDocs(readFileSync(path.join(plainDir, f), 'utf8'), `deploy/kubernetes/${f}`));
const kinds = plain.map((d) => d.obj.kind).sort().join(',');
expect(kinds === 'DaemonSet,Deployment,Namespace,PersistentVolumeClaim,Service', `plain manifests hold ${kinds}`);
const plainProblems = await problems(plain);
expect(plainProblems.length === 0, 'plain manifests match the schemas', plainProblems.join('\n  '));

let rendered = [];
const renderer = process.env.VIGIL_HELM_RENDER;
if (renderer && existsSync(renderer)) {
  const r = spawnSync(renderer, [path.join(root, 'deploy/helm/vigil'), '--release', 'vigil', '--namespace', 'vigil'], { encoding: 'utf8' });
  expect(r.status === 0, 'helm chart renders', r.stderr);
  rendered = r.status === 0 ? parseDocs(r.stdout, 'deploy/helm/vigil') : [];
  const rkinds = rendered.map((d) => d.obj.kind).sort().join(',');
  expect(rkinds === 'DaemonSet,Deployment,PersistentVolumeClaim,Service', `chart renders ${rkinds}`);
  const chartProblems = await problems(rendered);
  expect(chartProblems.length === 0, 'rendered chart matches the schemas', chartProblems.join('\n  '));
  // The chart and the plain manifests describe the same pods.
  const pick = (docs, kind) => docs.find((d) => d.obj.kind === kind)?.obj.spec.template.spec;
  for (const kind of ['DaemonSet', 'Deployment']) {
    const a = pick(plain, kind);
    const b = pick(rendered, kind);
    expect(JSON.stringify(a?.containers[0].args) === JSON.stringify(b?.containers[0].args),
      `${kind}: chart and plain manifest pass the same arguments`,
      `${JSON.stringify(a?.containers[0].args)} vs ${JSON.stringify(b?.containers[0].args)}`);
  }
  // vigild alone: no fleet objects, no push, and still valid.
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const tmp = mkdtempSync(path.join(tmpdir(), 'vigil-helm-'));
  writeFileSync(path.join(tmp, 'alone.yaml'), 'fleet: {enabled: false}\nvigild: {extraCapabilities: [BPF]}\n');
  const alone = spawnSync(renderer, [path.join(root, 'deploy/helm/vigil'), '--release', 'vigil', '--namespace', 'vigil', '--values', path.join(tmp, 'alone.yaml')], { encoding: 'utf8' });
  rmSync(tmp, { recursive: true, force: true });
  const aloneDocs = alone.status === 0 ? parseDocs(alone.stdout, 'deploy/helm/vigil (fleet.enabled=false)') : [];
  const aloneArgs = aloneDocs[0]?.obj.spec.template.spec.containers[0].args || [];
  expect(aloneDocs.length === 1 && aloneDocs[0].obj.kind === 'DaemonSet' && !aloneArgs.some((a) => a.startsWith('--fleet')),
    'with fleet.enabled=false the chart renders only the DaemonSet, without --fleet-url', alone.stderr + JSON.stringify(aloneArgs));
  expect(JSON.stringify(aloneDocs[0]?.obj.spec.template.spec.containers[0].securityContext.capabilities.add || []).includes('BPF'),
    'vigild.extraCapabilities reaches the container');
  const aloneProblems = await problems(aloneDocs);
  expect(aloneProblems.length === 0, 'the vigild-only chart matches the schemas', aloneProblems.join('\n  '));
} else {
  console.log('note: VIGIL_HELM_RENDER is not set (no Go toolchain at build time): chart not rendered');
}

// Broken copies must be refused: a wrong type, a missing required field, a bad enum value and a
// misspelt key each.
const ds = plain.find((d) => d.obj.kind === 'DaemonSet');
const breakages = [
  ['hostPID as a string', (o) => { o.spec.template.spec.hostPID = 'true'; }],
  ['container without a name', (o) => { delete o.spec.template.spec.containers[0].name; }],
  ['bad protocol', (o) => { o.spec.template.spec.containers[0].ports[0].protocol = 'TPC'; }],
  ['misspelt readOnly', (o) => {
    const m = o.spec.template.spec.containers[0].volumeMounts[0];
    m.readonly = m.readOnly;
    delete m.readOnly;
  }],
];
for (const [what, mutate] of breakages) {
  const obj = structuredClone(ds.obj);
  mutate(obj);
  const found = await problems([{ source: 'broken', obj }]);
  expect(found.length > 0, `refuses a DaemonSet with ${what}`);
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
