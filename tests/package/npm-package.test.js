// The npm package `schedlab-view` (web/package.json) as a docs site gets it:
// a real `npm pack ./web` (its prepack copies the WASM core in), the tarball's
// files checked against package.json's `files`, `exports` and `types`, then
// `npm install` of the tarball in a scratch project (offline: it has no
// dependencies) and, from that project only:
//   - node: `import { loadSchedlab } from 'schedlab-view'` plans a real graph,
//     byte for byte the CLI's plan; require() and every export resolve;
//   - tsc (Debian's node-typescript): typed consumers of the widget, the
//     worker API and the core compile under --strict, and misuse does not;
//   - Chromium: a page that does `import "schedlab-view"` (an import map onto
//     node_modules) renders <schedlab-view> with the CLI's peak;
// and `npm install ./web` (the folder) in another gives node the same core.
// usage: node tests/package/npm-package.test.js --wasm-build DIR --cli CLI [--chromium PATH]   (ctest: npm_package)
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { run, root, cliPlan, launch, peakText } = require(path.join(__dirname, '..', 'web', 'harness.js'));

function sh(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 26, ...options });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

function check(condition, what) {
  if (!condition) throw new Error(what);
}

async function main() {
  const args = { chromium: process.env.CHROMIUM || '/usr/bin/chromium' };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase())] = argv[i + 1];
  for (const k of ['wasmBuild', 'cli']) if (!args[k]) throw new Error(`missing --${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'schedlab-npm-'));
  const graphFile = path.join(root, 'tests', 'data', 'inductor', 'mlp_2.post.json');
  const expected = cliPlan(args.cli, graphFile, work);
  let failures = 0;
  const step = (name, fn) => {
    try {
      fn();
      console.log(`ok   ${name}`);
    } catch (e) {
      failures += 1;
      console.log(`FAIL ${name}: ${e.message}`);
    }
  };

  // 1. npm pack: prepack (scripts/build-npm.sh) puts the WASM core into web/.
  const env = { ...process.env, WASM_BUILD_DIR: path.resolve(args.wasmBuild) };
  const packed = JSON.parse(sh('npm', ['pack', './web', '--json', '--pack-destination', work], { cwd: root, env }))[0];
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'web', 'package.json'), 'utf8'));
  const inTarball = new Set(packed.files.map((f) => f.path));
  step(`npm pack: ${packed.filename}, ${packed.files.length} files, ${(packed.size / 1024).toFixed(0)} KiB`, () => {
    check(packed.name === 'schedlab-view', `name ${packed.name}`);
    const targets = [];
    const walk = (v) => (typeof v === 'string' ? targets.push(v) : Object.values(v).forEach(walk));
    walk(manifest.exports);
    targets.push(manifest.types);
    for (const t of targets.filter((t) => !t.includes('*'))) check(inTarball.has(t.replace(/^\.\//, '')), `exports/types name ${t}, which the tarball lacks`);
    for (const f of ['schedlab_core.js', 'schedlab_core.wasm', 'js/worker.js', 'js/planner.js', 'style.css']) check(inTarball.has(f), `the tarball lacks ${f}`);
    const allowed = (f) => f === 'package.json' || manifest.files.some((entry) => (entry.endsWith('/') ? f.startsWith(entry) : f === entry));
    const extra = [...inTarball].filter((f) => !allowed(f));
    check(extra.length === 0, `files outside package.json's "files": ${extra.join(', ')}`);
    check(!inTarball.has('index.html'), 'the playground is not part of the package');
  });

  // 2. A scratch project installs the tarball.
  const project = path.join(work, 'site');
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'scratch-docs-site', private: true }));
  sh('npm', ['install', '--offline', '--no-audit', '--no-fund', path.join(work, packed.filename)], { cwd: project });
  const installed = path.join(project, 'node_modules', 'schedlab-view');
  step('npm install of the tarball in a scratch project', () => check(fs.existsSync(path.join(installed, 'schedlab_core.wasm')), 'no schedlab_core.wasm installed'));

  // 3. node: the package's node export is the core.
  fs.copyFileSync(graphFile, path.join(project, 'graph.json'));
  fs.writeFileSync(path.join(project, 'consumer.mjs'), `
import fs from 'fs';
import { createRequire } from 'module';
import { loadSchedlab } from 'schedlab-view';
const require = createRequire(import.meta.url);
const core = await loadSchedlab();
fs.writeFileSync('plan.json', core.plan(fs.readFileSync('graph.json', 'utf8'), ''));
if (typeof require('schedlab-view').loadSchedlab !== 'function') throw new Error('require() gives no loadSchedlab');
const resolved = {};
for (const sub of ['schedlab-view', 'schedlab-view/planner', 'schedlab-view/core', 'schedlab-view/schedlab_core.wasm',
  'schedlab-view/style.css', 'schedlab-view/schedlab-view.js', 'schedlab-view/js/worker.js', 'schedlab-view/package.json']) {
  resolved[sub] = require.resolve(sub);
  if (!fs.existsSync(resolved[sub])) throw new Error(sub + ' resolves to a missing file');
}
try { core.plan('{"nodes": 3}', ''); throw new Error('a bad graph planned'); } catch (e) { if (e.name !== 'SchedlabError' || e.kind !== 'input') throw e; }
console.log(JSON.stringify(resolved));
`);
  step('node: import { loadSchedlab } from "schedlab-view" plans the CLI\'s plan, byte for byte; every export resolves', () => {
    sh(process.execPath, ['consumer.mjs'], { cwd: project });
    check(fs.readFileSync(path.join(project, 'plan.json'), 'utf8') === expected.text, 'the plan differs from the CLI\'s');
  });

  // 3b. `npm install ./web` (the folder, linked) gives the same package.
  const linked = path.join(work, 'linked-site');
  fs.mkdirSync(linked);
  fs.writeFileSync(path.join(linked, 'package.json'), JSON.stringify({ name: 'scratch-linked-site', private: true }));
  step('npm install of the web/ folder: node loads the same core', () => {
    sh('npm', ['install', '--offline', '--no-audit', '--no-fund', path.join(root, 'web')], { cwd: linked });
    const script = `require('schedlab-view').loadSchedlab().then((core) => process.stdout.write(core.plan(require('fs').readFileSync(${JSON.stringify(graphFile)}, 'utf8'), '')))`;
    check(sh(process.execPath, ['-e', script], { cwd: linked }) === expected.text, 'the plan differs from the CLI\'s');
  });

  // 4. tsc: the types, strict, against the installed package.
  fs.writeFileSync(path.join(project, 'browser.ts'), `
import 'schedlab-view/schedlab-view.js';
import type { SchedlabViewAttributes } from 'schedlab-view/schedlab-view.js';
import { Planner } from 'schedlab-view/planner';
import type { WorkerRequest, WorkerReply } from 'schedlab-view/planner';
const view = document.createElement('schedlab-view');
view.setAttribute('passes', 'lpmf,bfs');
const attrs: SchedlabViewAttributes = { src: 'graph.json', height: 200 };
const planner = new Planner();
export async function peak(): Promise<number> {
  const reply = await planner.plan(attrs.src, { memory_methods: ['lpmf'], comm_passes: ['overlap_schedule'] }, (p) => p.stage.length);
  const caps = await planner.capabilities();
  return reply.final.peak + reply.baselineSteps[0] + caps.memoryMethods.length + (view.isConnected ? 1 : 0);
}
const request: WorkerRequest = { id: 1, type: 'live', order: 'baseline', step: 3 };
const reply: WorkerReply = { id: 1, progress: { stage: 'planning', detail: 'memory' } };
// @ts-expect-error: a plan needs a Blob or text
planner.plan(42);
// @ts-expect-error: orders are 'baseline' or 'chosen'
planner.live('final', 0);
// @ts-expect-error: SchedlabViewAttributes require src
const noSrc: SchedlabViewAttributes = { passes: 'lpmf' };
export { request, reply, noSrc };
`);
  fs.writeFileSync(path.join(project, 'node.ts'), `
import { loadSchedlab, SchedlabError } from 'schedlab-view';
export async function plan(graphJson: string): Promise<number> {
  const core = await loadSchedlab();
  const session = core.openPlanSession();
  session.run(graphJson, JSON.stringify({ fuse: false }), (stage) => stage.length);
  const curve = session.curve(1);
  session.delete();
  try {
    core.validate('{}');
  } catch (e) {
    if (e instanceof SchedlabError && e.kind === 'input') return -1;
  }
  // @ts-expect-error: orders are 0 (baseline) or 1 (final)
  core.openPlanSession().curve(2);
  return curve.peak + core.memoryMethods().length + JSON.parse(core.plan(graphJson)).nodes;
}
`);
  fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, module: 'node16', moduleResolution: 'node16', target: 'es2020', lib: ['es2020', 'dom'], types: [] },
    files: ['browser.ts', 'node.ts'],
  }));
  step('tsc --strict: the widget, the worker API and the core, typed from the installed package', () => {
    const tsc = process.env.TSC || '/usr/bin/tsc';
    check(fs.existsSync(tsc), `${tsc} not found (Debian: apt-get install node-typescript, or scripts/install-deps.sh --web)`);
    sh(tsc, ['-p', 'tsconfig.json'], { cwd: project });
  });

  // 5. Chromium: a page imports "schedlab-view" from node_modules.
  fs.writeFileSync(path.join(project, 'index.html'), `<!doctype html>
<meta charset="utf-8">
<link rel="icon" href="data:,">
<script type="importmap">{"imports": {"schedlab-view": "./node_modules/schedlab-view/schedlab-view.js"}}</script>
<script type="module">import 'schedlab-view';</script>
<schedlab-view src="graph.json" height="160"></schedlab-view>
`);
  const site = await launch({ site: project, cli: args.cli, chromium: args.chromium });
  await site.test('Chromium: import "schedlab-view" from the installed package renders the CLI\'s peak', async () => {
    const context = await site.newContext();
    const page = await context.newPage();
    await page.goto(`${site.url}index.html`);
    const shown = await peakText(page, 60000);
    check(shown === String(expected.plan.final.peak_bytes), `the widget shows ${shown}, the CLI ${expected.plan.final.peak_bytes}`);
    await context.close();
  });
  await site.finish();
  fs.rmSync(work, { recursive: true, force: true });
  if (failures) {
    console.log(`${failures} npm package check(s) failed`);
    process.exit(1);
  }
}

run(main);
