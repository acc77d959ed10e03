// WASM and native agree byte for byte: for every fixture in DATA/inductor
// (*.pre.json, *.post.json), the module's plan() equals the CLI's
// `schedlab plan X -o out.json`; bad inputs give the CLI's message as a
// thrown error (less the CLI's "schedlab plan: FILE: " prefix: the module
// reads text, not files); the page's plan session (bytes in, stage by stage)
// gives the CLI's plan text, and its overview, curves and names are the
// plan's own figures. Then a bench (printed, not asserted): a 10k-node
// layered graph planned natively and in WASM.
//
// usage: node plan-parity.js --cli PATH/schedlab --wasm WASM_BUILD_DIR --data tests/data [--bench-nodes N]
'use strict';
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { loadSchedlab } = require('./load-module');

function parseArgs(argv) {
  const args = { benchNodes: 10000 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
    args[key] = argv[i + 1];
  }
  for (const k of ['cli', 'wasm', 'data']) if (!args[k]) throw new Error(`missing --${k}`);
  args.benchNodes = Number(args.benchNodes);
  return args;
}

function runCli(cli, args) {
  return spawnSync(cli, args, { encoding: 'utf8', maxBuffer: 1 << 30 });
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

// A layered bench graph from the CLI's generator (core/gen).
function benchGraph(cli, nodes, file) {
  const r = runCli(cli, ['gen', 'layered', '--nodes', String(nodes), '-o', file]);
  if (r.status !== 0) throw new Error(`schedlab gen layered failed: ${r.stderr}`);
  return 'schedlab gen layered';
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const core = await loadSchedlab(args.wasm);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'schedlab-parity-'));
  let failures = 0;
  const check = (name, fn) => {
    try {
      fn();
      console.log(`ok   ${name}`);
    } catch (e) {
      failures += 1;
      console.log(`FAIL ${name}: ${e.message.split('\n').slice(0, 6).join('\n')}`);
    }
  };

  // 1. Every fixture, default options and each single method.
  const dir = path.join(args.data, 'inductor');
  const fixtures = fs.readdirSync(dir).filter((f) => /\.(pre|post)\.json$/.test(f)).sort();
  assert(fixtures.length > 0, `no fixtures in ${dir}`);
  const methods = core.memoryMethods().map((m) => m.name);
  for (const f of fixtures) {
    const graphPath = path.join(dir, f);
    const text = fs.readFileSync(graphPath, 'utf8');
    const variants = [{ flags: [], options: '' }, ...methods.map((m) => ({ flags: ['--memory-methods', m], options: JSON.stringify({ memory_methods: [m] }) })),
      { flags: ['--compare'], options: JSON.stringify({ compare: true }) }];
    for (const { flags, options } of variants) {
      check(`plan ${f} ${flags.join(' ') || '(defaults)'}`, () => {
        const out = path.join(tmp, 'plan.json');
        const r = runCli(args.cli, ['plan', graphPath, '-o', out, ...flags]);
        assert.strictEqual(r.status, 0, `CLI failed: ${r.stderr}`);
        const native = fs.readFileSync(out, 'utf8');
        const wasm = core.plan(text, options);
        assert(wasm === native, `WASM plan differs from the CLI's (${wasm.length} vs ${native.length} bytes)`);
      });
    }
  }

  // 1b. The page's session on every fixture (and with comm passes): the plan
  // text is the CLI's, and the overview, curves and names the page's first
  // report shows are the plan's own figures.
  const close = (a, b) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
  const passes = core.commPasses().map((p) => p.name).filter((n) => n !== 'enforce_comm_ordering_for_fsdp');
  for (const f of fixtures) {
    const graphPath = path.join(dir, f);
    const bytes = new Uint8Array(fs.readFileSync(graphPath));
    for (const flags of [[], ['--comm-passes', passes.join(',')]]) {
      check(`session ${f} ${flags.length ? 'with every comm pass' : '(defaults)'}: plan text, overview, curves and names as the CLI's plan`, () => {
        const out = path.join(tmp, 'plan.json');
        const r = runCli(args.cli, ['plan', graphPath, '-o', out, ...flags]);
        assert.strictEqual(r.status, 0, `CLI failed: ${r.stderr}`);
        const native = fs.readFileSync(out, 'utf8');
        const plan = JSON.parse(native);
        const session = core.openPlanSession();
        try {
          const stages = [];
          session.run(bytes, flags.length ? JSON.stringify({ comm_passes: passes }) : '', (name) => stages.push(name));
          assert.deepStrictEqual(stages, ['load', 'front_end', 'memory', 'pricing', 'comms', 'simulation', 'predict', 'compare', 'ranks', 'views']);
          const ov = session.overview();
          assert.strictEqual(ov.graph, plan.graph);
          assert.strictEqual(ov.nodes, plan.nodes);
          assert.deepStrictEqual(ov.final, plan.final);
          for (const k of ['chosen', 'method_order', 'peak', 'peak_step']) assert.deepStrictEqual(ov.memory[k], plan.memory[k], `memory.${k}`);
          for (const [name, m] of Object.entries(plan.memory.methods)) {
            assert.deepStrictEqual(ov.memory.methods[name], m.error ? { error: m.error } : { peak: m.peak }, `memory.methods.${name}`);
          }
          const methodOrder = plan.memory.methods[plan.memory.chosen].order;
          assert.strictEqual(ov.method_peak_node, methodOrder[plan.memory.peak_step] || '');
          assert.strictEqual(ov.options.hardware, plan.options.hardware);
          assert.deepStrictEqual(ov.options.comm_passes, plan.options.comm_passes);
          assert.strictEqual(ov.simulation.collective_count, plan.simulation.collectives.length);
          for (const k of ['step_time_us', 'exposed_comm_us']) assert(close(ov.simulation[k], plan.simulation[k]), `simulation.${k}`);
          assert.deepStrictEqual(ov.predicted, plan.predicted);  // one writer (core/io) for both
          assert.strictEqual(Boolean(ov.comm), Boolean(plan.comm));
          if (plan.comm) for (const k of ['step_time_before_us', 'exposed_comm_before_us']) assert(close(ov.comm[k], plan.comm[k]), `comm.${k}`);
          assert.strictEqual(ov.front_end ? ov.front_end.input_nodes : null, plan.front_end ? plan.front_end.input_nodes : null);
          const fin = session.curve(1);
          assert.strictEqual(fin.peak, plan.final.peak_bytes);
          assert.strictEqual(fin.peak_step, plan.final.peak_step);
          assert(fin.curve instanceof Float64Array && fin.curve.length === plan.nodes + 1, 'final curve');
          if (!plan.comm) assert.deepStrictEqual(Array.from(fin.curve), plan.memory.curve);
          assert.strictEqual(session.namesText(1), plan.order.join('\n'));
          if (plan.memory.methods.baseline && !plan.memory.methods.baseline.error) {
            assert.strictEqual(session.curve(0).peak, plan.memory.methods.baseline.peak);
            const baselineOrder = plan.memory.methods.baseline.order;
            assert.strictEqual(session.namesText(0), baselineOrder.join('\n'));
            assert.deepStrictEqual(Array.from(session.baselineSteps()), plan.order.map((name) => baselineOrder.indexOf(name)));
            const c0 = session.curve(0);
            assert.strictEqual(session.nameAt(0, c0.peak_step), baselineOrder[c0.peak_step] || '');
          }
          assert(session.planText() === native, 'session plan text differs from the CLI\'s');
        } finally {
          session.delete();
        }
      });
    }
  }

  // 2. Bad input: the same message, as a thrown SchedlabError of the CLI's kind.
  const good = JSON.parse(fs.readFileSync(path.join(dir, fixtures[0]), 'utf8'));
  const badNode = structuredClone(good);
  badNode.nodes[1].reads = [{ name: 'no_such_buffer' }];
  const bad = {
    'not JSON': '{"format": "schedgraph/1", "nodes": [',
    'wrong format': JSON.stringify({ ...good, format: 'schedgraph/0' }),
    'unknown buffer': JSON.stringify(badNode),
  };
  for (const [name, text] of Object.entries(bad)) {
    check(`error parity: ${name}`, () => {
      const file = path.join(tmp, 'bad.json');
      fs.writeFileSync(file, text);
      const r = runCli(args.cli, ['plan', file, '-o', path.join(tmp, 'never.json')]);
      assert.notStrictEqual(r.status, 0, 'the CLI accepted a bad graph');
      const prefix = `schedlab plan: ${file}: `;
      assert(r.stderr.startsWith(prefix), `unexpected CLI message: ${r.stderr}`);
      const cliMessage = r.stderr.trim().slice(prefix.length);
      assert.throws(() => core.plan(text, ''), (e) => {
        assert.strictEqual(e.name, 'SchedlabError');
        assert.strictEqual(e.message, cliMessage);
        assert.strictEqual(e.kind, r.status === 2 ? 'usage' : 'input');
        return true;
      });
    });
  }
  check('error parity: unknown memory method', () => {
    const graphPath = path.join(dir, fixtures[0]);
    const r = runCli(args.cli, ['plan', graphPath, '--memory-methods', 'nope', '-o', path.join(tmp, 'never.json')]);
    const cliMessage = r.stderr.trim().replace(/^schedlab plan: /, '');
    assert.throws(() => core.plan(fs.readFileSync(graphPath, 'utf8'), '{"memory_methods": ["nope"]}'), { message: cliMessage });
  });

  // 3. Bench (not an assertion): native CLI process vs WASM call, same graph.
  // Wall time and CPU time (user + system: steadier on a shared machine; the
  // CLI's comes from /usr/bin/time when it exists). One warm-up run each.
  if (args.benchNodes > 0) {
    const file = path.join(tmp, 'bench.json');
    const source = benchGraph(args.cli, args.benchNodes, file);
    const text = fs.readFileSync(file, 'utf8');
    const timeTool = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
    const native = { wall: [], cpu: [] };
    const wasm = { wall: [], cpu: [] };
    for (let i = 0; i < 6; i++) {
      const cliArgs = ['plan', file, '-o', path.join(tmp, 'bench.plan.json')];
      let t = process.hrtime.bigint();
      const r = timeTool ? spawnSync(timeTool, ['-f', 'cpu %U %S', args.cli, ...cliArgs], { encoding: 'utf8' }) : spawnSync(args.cli, cliArgs);
      const wall = Number(process.hrtime.bigint() - t) / 1e6;
      const cpuMatch = timeTool ? /cpu ([\d.]+) ([\d.]+)/.exec(r.stderr) : null;
      t = process.hrtime.bigint();
      const c = process.cpuUsage();
      core.plan(text, '');
      const wasmCpu = process.cpuUsage(c);
      const wasmWall = Number(process.hrtime.bigint() - t) / 1e6;
      if (i === 0) continue;  // warm-up: V8 tiers the module up on its first runs
      native.wall.push(wall);
      if (cpuMatch) native.cpu.push((Number(cpuMatch[1]) + Number(cpuMatch[2])) * 1000);
      wasm.wall.push(wasmWall);
      wasm.cpu.push((wasmCpu.user + wasmCpu.system) / 1000);
    }
    const fmt = (x) => `${median(x).toFixed(0)} ms`;
    console.log(`bench: ${args.benchNodes}-node graph (${source}): load + plan (default options) + serialize, median of 5 after a warm-up`);
    console.log(`bench:   native CLI (whole process): wall ${fmt(native.wall)}${native.cpu.length ? `, cpu ${fmt(native.cpu)}` : ''}`);
    console.log(`bench:   WASM under node:            wall ${fmt(wasm.wall)}, cpu ${fmt(wasm.cpu)}`);
    const ratio = native.cpu.length ? median(wasm.cpu) / median(native.cpu) : median(wasm.wall) / median(native.wall);
    console.log(`bench:   WASM / native: ${ratio.toFixed(2)}x (${native.cpu.length ? 'cpu' : 'wall'} time)`);
  }

  fs.rmSync(tmp, { recursive: true, force: true });
  if (failures) {
    console.log(`${failures} check(s) failed`);
    process.exit(1);
  }
  console.log('all checks passed');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
