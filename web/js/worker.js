// The planning worker: owns the WASM module so that reading, parsing and
// planning never block the page. Started by planner.js through a small blob
// trampoline, so the module's base URL comes with the first message
// ({type: 'init', base, wasmModule}).
//
// Requests: {id, type, ...}; replies: {id, result} or {id, error: {message, kind}};
// progress while planning: {id, progress: {stage, detail}}.
//
// Large things stay here: the plan text and the session's graph. The page
// gets a plan without its per-method orders, the curves as typed arrays and
// the orders' names as one newline-joined string (cheap to clone).
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

async function readSource(source, progress) {
  const HEAD = 65536;
  if (typeof source === 'string') {
    checkStartsLikeJson(source.slice(0, HEAD), source.length <= HEAD);
    return source;
  }
  checkStartsLikeJson(await source.slice(0, HEAD).text(), source.size <= HEAD);
  progress('reading', `${(source.size / 1048576).toFixed(1)} MiB`);
  return source.text();
}

function joinNames(list) {
  return list.join('\n');
}

// A small layered graph planned once after start-up: the engine first runs
// WebAssembly with its baseline compiler and optimizes hot functions only
// after they ran, so a warm-up makes the user's first big plan run optimized
// code (the optimized code lives in the shared compiled module, so workers
// restarted by Cancel need no warm-up of their own).
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
  async init({ base, wasmModule, warmUp }) {
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
    if (warmUp) {
      setTimeout(() => {
        const graph = warmUpGraph(3000);
        // Through the front end (it fuses most of it away), and as given, so
        // that the memory methods see every node too.
        for (const options of ['', '{"fuse": false}']) {
          try {
            core.plan(graph, options);
          } catch { /* only a warm-up */ }
        }
      }, 0);
    }
    return { memoryMethods: core.memoryMethods(), commPasses: core.commPasses(), controls: core.planControls() };
  },

  // Plans a graph (a Blob, or text) and returns what the page renders.
  async plan({ source, options }, progress) {
    const text = await readSource(source, progress);
    if (!session) session = core.openPlanSession();
    progress('planning', `${(text.length / 1048576).toFixed(1)} MiB of JSON`);
    const t0 = performance.now();
    planText = session.run(text, options ? JSON.stringify(options) : '');
    bufferTable = null;
    const planMs = performance.now() - t0;
    progress('rendering', 'memory curves');
    const plan = JSON.parse(planText);
    // The node the memory method's own order runs at its peak (the page names it).
    const methodOrder = plan.memory.methods[plan.memory.chosen].order;
    const methodPeakNode = plan.memory.peak_step < methodOrder.length ? methodOrder[plan.memory.peak_step] : '';
    for (const m of Object.values(plan.memory.methods)) delete m.order;  // the page shows peaks, not 4 more orders
    delete plan.memory.curve;  // the page draws the session's curves below
    const baselineNames = session.names(BASELINE);
    const orderNames = plan.order;
    delete plan.order;
    const curve = (i) => {
      const c = session.curve(i);
      return { peak: c.peak, peak_step: c.peak_step, curve: Float64Array.from(c.curve) };
    };
    const baseline = curve(BASELINE);
    const final = curve(FINAL);
    delete plan.runtime;  // per-node arrays; the trace carries the times the page draws
    return {
      plan,
      methodPeakNode,
      summary: session.summary(),
      baseline,
      final,
      orderText: joinNames(orderNames),
      baselineText: joinNames(baselineNames),
      planMs,
      planBytes: planText.length,
      transfer: [baseline.curve.buffer, final.curve.buffer],
    };
  },

  planText() {
    if (!session) throw new Error('no graph planned yet');
    return planText;
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
      const out = { name: [], kernel: [], lane: [], ts: [], dur: [], flows: [], exposed: {} };
      const laneOf = { compute: 0, comm: 1, exposed: 2 };
      const startOf = new Map();
      for (const e of events) {
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
