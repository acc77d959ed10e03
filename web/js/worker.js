// The planning worker: owns the WASM module so that planning never blocks the
// page. Started by planner.js through a small blob trampoline, so the module's
// base URL comes with the first message ({type: 'init', base}).
//
// Requests: {id, type, ...}; replies: {id, result} or {id, error: {message, kind}};
// progress while planning: {id, progress: {stage, detail}}.
'use strict';

let core = null;     // the Embind module (wasm/api.js documents its API)
let session = null;  // openPlanSession(): the last planning run, for `live` requests
const BASELINE = 0;  // the session's order indices
const FINAL = 1;

const handlers = {
  async init({ base }) {
    importScripts(new URL('schedlab_core.js', base).href);
    core = await self.createSchedlab({ locateFile: (file) => new URL(file, base).href });
    return { memoryMethods: core.memoryMethods(), commPasses: core.commPasses() };
  },

  // Plans a graph: the plan text (byte for byte the CLI's), and the curves of
  // the planned graph's baseline and of the final order. The session stays
  // for later `live` and `trace` requests.
  plan({ graphText, options }, progress) {
    if (!session) session = core.openPlanSession();
    progress('planning', `${(graphText.length / 1048576).toFixed(1)} MiB of JSON`);
    const t0 = performance.now();
    const planText = session.run(graphText, options ? JSON.stringify(options) : '');
    const planMs = performance.now() - t0;
    progress('rendering', 'memory curves');
    const plan = JSON.parse(planText);
    const baseline = session.curve(BASELINE);
    baseline.order = session.names(BASELINE);
    const final = session.curve(FINAL);
    return { planText, plan, summary: session.summary(), baseline, final, planMs };
  },

  // The Chrome trace of the last plan's simulation (as `plan --trace` writes it).
  trace() {
    if (!session) throw new Error('no graph planned yet');
    return session.trace();
  },

  // Buffers alive at `step` of the baseline or the chosen order, largest first.
  live({ order, step }) {
    if (!session) throw new Error('no graph planned yet');
    return session.liveAt(order === 'baseline' ? BASELINE : FINAL, step);
  },
};

self.onmessage = async ({ data }) => {
  const { id, type } = data;
  const progress = (stage, detail) => self.postMessage({ id, progress: { stage, detail } });
  try {
    if (type !== 'init' && !core) throw new Error('the WASM module is not loaded');
    const result = await handlers[type](data, progress);
    self.postMessage({ id, result });
  } catch (e) {
    self.postMessage({ id, error: { message: e && e.message ? e.message : String(e), kind: (e && e.kind) || 'internal' } });
  }
};
