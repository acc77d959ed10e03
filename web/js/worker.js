// The planning worker: owns the WASM module so that reading, parsing and
// planning never block the page. Started by planner.js through a small blob
// trampoline, so the module's base URL comes with the first message
// ({type: 'init', base, wasmModule}).
//
// Requests: {id, type, ...}; replies: {id, result} or {id, error: {message, kind}};
// progress while planning: {id, progress: {stage, detail}}.
//
// Large things stay here: the plan text and the session's graph. A plan
// request answers with what the first report shows (the session's overview,
// the curves and each final step's baseline step as typed arrays, the final
// order's names as one newline-joined string: cheap to clone); the plan itself, without its per-method orders,
// follows on request (details) for the secondary views.
'use strict';

let core = null;     // the Embind module (wasm/api.js documents its API)
let session = null;  // openPlanSession(): the last planning run
let planText = '';   // its schedplan/1 text, for export
let bufferTable = null;  // [[buffer, producer]] of the planned graph, read on the first buffer search
const BASELINE = 0;  // the session's order indices
const FINAL = 1;
const orderIndex = (order) => (order === 'baseline' ? BASELINE : FINAL);

// Refuses what cannot be JSON before reading all of it, with the loader's
// own message: a schedgraph/1 file is a JSON object, so a first non-space
// character that starts no JSON value is refused here (50 MB of garbage in
// milliseconds); anything else goes to the loader.
const JSON_VALUE_START = /[{["\-0-9tfn]/;
function checkStartsLikeJson(head, complete) {
  let line = 1;
  let column = 1;
  for (const ch of head) {
    if (ch === '\n') {
      line += 1;
      column = 1;
    } else if (ch === ' ' || ch === '\t' || ch === '\r') {
      column += 1;
    } else {
      if (JSON_VALUE_START.test(ch)) return;
      const e = new Error(`not valid JSON: line ${line}, column ${column}: unexpected character '${ch}'`);
      e.kind = 'input';
      throw e;
    }
  }
  if (complete) {
    const e = new Error(`not valid JSON: line ${line}, column ${column}: empty input: expected a JSON value`);
    e.kind = 'input';
    throw e;
  }
}

// The graph's bytes (a Uint8Array): a file is read as bytes, never decoded
// to a JS string, since the core copies bytes into its heap in one go.
async function readSource(source, progress) {
  const HEAD = 65536;
  if (typeof source === 'string') {
    checkStartsLikeJson(source.slice(0, HEAD), source.length <= HEAD);
    return new TextEncoder().encode(source);
  }
  checkStartsLikeJson(await source.slice(0, HEAD).text(), source.size <= HEAD);
  progress('reading', `${(source.size / 1048576).toFixed(1)} MiB`);
  return new Uint8Array(await source.arrayBuffer());
}

// What the page shows while each of the core's stages runs.
const STAGE_LABELS = {
  load: 'parsing and checking the graph',
  front_end: 'dependencies, dead code and fusion',
  memory: 'memory methods',
  pricing: 'pricing the nodes',
  comms: 'comm passes',
  simulation: 'simulation',
  predict: 'prediction',
  compare: 'compared comm passes',
  ranks: 'several ranks',
  views: 'memory curves',
};

// Milliseconds spent in each stage of a request, in order: the page shows
// them (and the browser bench prints them).
class StageClock {
  constructor(first) {
    this.stages = [];
    this.name = first;
    this.since = performance.now();
  }

  next(name) {
    const now = performance.now();
    this.stages.push([this.name, Math.round(now - this.since)]);
    this.name = name;
    this.since = now;
  }

  done() {
    this.next(null);
    return this.stages;
  }
}

// The front end's report as the page's fusion table shows it: the groups of
// more than one node up to `shown` (a 100k-node graph has tens of thousands;
// the exported plan has them all) and their count, the first dead nodes.
function frontEndForPage(fe, shown = 300) {
  const multi = fe.fused_groups.filter((g) => g.members.length > 1);
  const { fused_groups: _, eliminated, ...rest } = fe;
  return { ...rest, fused_groups_shown: multi.slice(0, shown), fused_group_count: multi.length,
    eliminated_shown: eliminated.slice(0, 200), eliminated_count: eliminated.length };
}

// A small layered graph planned once after start-up: the engine first runs
// WebAssembly with its baseline compiler and optimizes hot functions only
// after they ran, so a warm-up makes the user's first big plan run optimized
// code (the optimized code lives in the shared compiled module, so neither
// the planning worker nor workers restarted by Cancel need one of their own).
function warmUpGraph(nodes) {
  const inputs = [{ name: 'in0', bytes: 4096, freeable: true }, { name: 'in1', bytes: 65536, freeable: false }];
  const list = [];
  for (let i = 0; i < nodes; i++) {
    const dep = (name, bytes) => ({ name, dep: 'memory', index: 'c0', size: [bytes / 4], bytes });
    const reads = [i > 0 ? dep(`b${i - 1}`, 4096) : dep('in0', 4096), i > 7 ? dep(`b${i - 7}`, 4096) : dep('in1', 65536)];
    list.push({ name: `n${i}`, kind: 'pointwise', group: [1024, 1], outputs: [{ name: `b${i}`, layout: 'fixed', dtype: 'f32', bytes: 4096 }],
      reads, writes: [dep(`b${i}`, 4096)] });
  }
  return JSON.stringify({ format: 'schedgraph/1', name: 'warm-up', inputs, outputs: [`b${nodes - 1}`], nodes: list });
}

const handlers = {
  async init({ base, wasmModule }) {
    importScripts(new URL('schedlab_core.js', base).href);
    const settings = { locateFile: (file) => new URL(file, base).href };
    // The page compiles the module once; a restarted worker only instantiates it.
    if (wasmModule) {
      settings.instantiateWasm = (imports, receive) => {
        WebAssembly.instantiate(wasmModule, imports).then((instance) => receive(instance, wasmModule));
        return {};
      };
    }
    core = await self.createSchedlab(settings);
    return { memoryMethods: core.memoryMethods(), commPasses: core.commPasses(), controls: core.planControls() };
  },

  // Plans a small graph through the front end (it fuses most of it away),
  // and as given, so that the memory methods see every node too. Run by a
  // worker of its own (planner.js), so it never delays a real plan.
  warmUp() {
    const graph = warmUpGraph(3000);
    for (const options of ['', '{"fuse": false}']) {
      try {
        core.plan(graph, options);
      } catch { /* only a warm-up */ }
    }
    return true;
  },

  // Plans a graph (a Blob, or text) and returns what the page renders, with
  // the milliseconds of each stage (`stages`).
  async plan({ source, options }, progress) {
    const clock = new StageClock('read');
    const bytes = await readSource(source, progress);
    if (!session) session = core.openPlanSession();
    planText = '';  // the last plan's, gone with it
    bufferTable = null;
    progress('planning', `${(bytes.length / 1048576).toFixed(1)} MiB of JSON`);
    clock.next('copy');
    session.run(bytes, options ? JSON.stringify(options) : '', (stage) => {
      clock.next(stage);
      progress('planning', STAGE_LABELS[stage] || stage);
    });
    clock.next('overview');
    const plan = session.overview();
    const methodPeakNode = plan.method_peak_node;
    delete plan.method_peak_node;
    clock.next('curves');
    const baseline = session.curve(BASELINE);
    const final = session.curve(FINAL);
    const orderText = session.namesText(FINAL);
    const baselineSteps = session.baselineSteps();
    const baselinePeakNode = session.nameAt(BASELINE, baseline.peak_step);
    const summary = session.summary();
    const stages = clock.done();
    const planMs = stages.filter(([name]) => !['read', 'copy', 'overview', 'curves'].includes(name)).reduce((a, [, ms]) => a + ms, 0);
    return {
      plan,
      methodPeakNode,
      summary,
      baseline,
      final,
      orderText,
      baselineSteps,
      baselinePeakNode,
      planMs,
      stages,
      transfer: [baseline.curve.buffer, final.curve.buffer, baselineSteps.buffer],
    };
  },

  // The whole plan for the views after the first report (fusion table, comm
  // tables, timeline), without what the page never shows: the per-method
  // orders, the curve, the order (namesText), the per-node runtimes, and all
  // but the first fused groups.
  details() {
    if (!session) throw new Error('no graph planned yet');
    if (!planText) planText = session.planText();
    const plan = JSON.parse(planText);
    for (const m of Object.values(plan.memory.methods)) delete m.order;
    delete plan.memory.curve;
    delete plan.order;
    delete plan.runtime;
    if (plan.front_end) plan.front_end = frontEndForPage(plan.front_end);
    return plan;
  },

  planText() {
    if (!session) throw new Error('no graph planned yet');
    if (!planText) planText = session.planText();
    return planText;
  },

  // Per node of the planned graph, the calibrated model's time (the plan's
  // runtime.calibrated_us): what a measured file's kernels are put beside.
  nodeTimes() {
    if (!session) throw new Error('no graph planned yet');
    if (!planText) planText = session.planText();
    const { runtime } = JSON.parse(planText);
    return { nodes: runtime.nodes, calibrated_us: runtime.calibrated_us };
  },

  passSteps() {
    if (!session) throw new Error('no graph planned yet');
    return session.passSteps();
  },

  checkOptions({ options }) {
    core.checkOptions(JSON.stringify(options));
    return true;
  },

  // The Chrome trace of the last plan (as `plan --trace` writes it).
  trace() {
    if (!session) throw new Error('no graph planned yet');
    return session.trace();
  },

  // The timeline's data: the final order's slices and, when comm passes ran,
  // the order before them, as flat arrays.
  timeline({ withBefore }) {
    if (!session) throw new Error('no graph planned yet');
    const lanes = (traceText) => {
      const events = JSON.parse(traceText).traceEvents;
      const out = { name: [], kernel: [], lane: [], ts: [], dur: [], flows: [], exposed: {}, memory: { ts: [], bytes: [] } };
      const laneOf = { compute: 0, comm: 1, exposed: 2 };
      const startOf = new Map();
      for (const e of events) {
        if (e.ph === 'C' && e.name === 'memory' && e.args) {
          out.memory.ts.push(e.ts);
          out.memory.bytes.push(e.args.bytes);
          continue;
        }
        if (e.ph !== 'X') continue;
        out.name.push(e.name);
        out.kernel.push((e.args && e.args.kernel) || '');
        out.lane.push(laneOf[e.cat] ?? 0);
        out.ts.push(e.ts);
        out.dur.push(e.dur);
        if (e.cat !== 'exposed') startOf.set(e.name, e.ts);
        if (e.cat === 'comm' && e.args) {
          out.exposed[e.name] = e.args.exposed_us || 0;
          if (e.args.waited_by) out.flows.push({ from: e.name, to: e.args.waited_by, fromTs: e.ts + e.dur });
        }
      }
      for (const f of out.flows) f.toTs = startOf.get(f.to);
      return out;
    };
    return { after: lanes(session.trace()), before: withBefore ? lanes(session.traceBeforeComm()) : null };
  },

  // Buffers alive at `step` of the baseline or the final order, largest first.
  live({ order, step }) {
    if (!session) throw new Error('no graph planned yet');
    return session.liveAt(orderIndex(order), step);
  },

  // Lifetimes of the buffers alive in steps [from, to] of an order.
  lifetimes({ order, from, to }) {
    if (!session) throw new Error('no graph planned yet');
    return session.lifetimes(orderIndex(order), from, to);
  },

  // Memory as executed over the order the compiled call runs in, event by event.
  executedAsRun() {
    if (!session) throw new Error('no graph planned yet');
    return session.executedAsRun();
  },

  // `schedlab fuse --explain A B` on the input graph.
  explain({ a, b }) {
    if (!session) throw new Error('no graph planned yet');
    return session.explain(a, b);
  },

  // Producers of the buffers whose names contain `query`.
  findBuffers({ query }) {
    if (!session) throw new Error('no graph planned yet');
    if (!bufferTable) bufferTable = session.bufferProducers();
    const out = [];
    for (const [buffer, producer] of bufferTable) if (producer && buffer.includes(query)) out.push(producer);
    return out;
  },

  // Node names of the input graph (for the why-not-fused pickers).
  inputNames() {
    if (!session) throw new Error('no graph planned yet');
    return session.inputNames().join('\n');
  },
};

self.onmessage = async ({ data }) => {
  const { id, type } = data;
  const progress = (stage, detail) => self.postMessage({ id, progress: { stage, detail } });
  try {
    if (type !== 'init' && !core) throw new Error('the WASM module is not loaded');
    const result = await handlers[type](data, progress);
    const transfer = (result && result.transfer) || [];
    if (result && result.transfer) delete result.transfer;
    self.postMessage({ id, result }, transfer);
  } catch (e) {
    self.postMessage({ id, error: { message: e && e.message ? e.message : String(e), kind: (e && e.kind) || 'internal' } });
  }
};
