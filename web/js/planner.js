// Client side of worker.js: one planning worker per Planner (and, at start, a
// short-lived warm-up worker), promise-based requests.
// Used by the playground (app.js) and the widget (../schedlab-view.js).
// cancel() ends a running plan at once: the worker is terminated and a new
// one started from the module compiled once, so the next request does not
// wait for the old one.

// The folder holding worker.js, schedlab_core.js and schedlab_core.wasm.
const SITE_BASE = new URL('../', import.meta.url).href;

export class Planner {
  constructor(base = SITE_BASE) {
    this.base = base;
    this.pending = new Map();
    this.nextId = 1;
    // Compiled off the main thread by the engine; every worker instantiates it.
    this.wasmModule = WebAssembly.compileStreaming
      ? WebAssembly.compileStreaming(fetch(new URL('schedlab_core.wasm', base).href)).catch(() => null)
      : Promise.resolve(null);
    this.start();
    this.warmUp();
  }

  // A worker for this page's module (its scripts loaded by absolute URL).
  spawn() {
    // A blob trampoline lets a page on another origin embed the widget: the
    // worker then loads its scripts by absolute URL.
    const workerUrl = new URL('js/worker.js', this.base).href;
    const blob = new Blob([`importScripts(${JSON.stringify(workerUrl)});`], { type: 'text/javascript' });
    return new Worker(URL.createObjectURL(blob));
  }

  start() {
    const worker = this.spawn();
    this.worker = worker;
    worker.onmessage = ({ data }) => this.receive(data);
    worker.onerror = (e) => this.failAll(e.message || 'the planning worker failed to start');
    this.ready = this.wasmModule.then((wasmModule) => this.request('init', { base: this.base, wasmModule }));
  }

  // Plans a small graph once in a short-lived worker of its own, so that the
  // engine optimizes the module's hot code (shared by every worker) while
  // the planning worker stays free for the user's first graph.
  warmUp() {
    const worker = this.spawn();
    const done = () => worker.terminate();
    worker.onmessage = ({ data }) => { if (data.id === 2 || data.error) done(); };
    worker.onerror = done;
    this.wasmModule.then((wasmModule) => {
      if (!wasmModule) return done();  // no shared module: nothing to warm
      worker.postMessage({ id: 1, type: 'init', base: this.base, wasmModule });
      worker.postMessage({ id: 2, type: 'warmUp' });
    });
  }

  receive({ id, result, error, progress }) {
    const p = this.pending.get(id);
    if (!p) return;
    if (progress) {
      if (p.onProgress) p.onProgress(progress);
      return;
    }
    this.pending.delete(id);
    if (error) {
      const e = new Error(error.message);
      e.kind = error.kind;
      p.reject(e);
    } else {
      p.resolve(result);
    }
  }

  failAll(message, kind = 'internal') {
    for (const p of this.pending.values()) {
      const e = new Error(message);
      e.kind = kind;
      p.reject(e);
    }
    this.pending.clear();
  }

  request(type, payload = {}, onProgress = null) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      this.worker.postMessage({ id, type, ...payload });
    });
  }

  // -> {memoryMethods, commPasses, controls: {hardware, default_hardware, comm_knobs}}
  capabilities() {
    return this.ready;
  }

  // Stops whatever the worker is doing (its requests reject with kind
  // 'cancelled') and starts a fresh one.
  cancel() {
    this.worker.terminate();
    this.failAll('cancelled', 'cancelled');
    this.start();
    return this.ready;
  }

  // source: a Blob (file, fetched graph) or the graph's text.
  // -> {plan (the session's overview: what the first report shows, under
  //     the plan's keys), methodPeakNode, summary: {input, planned},
  //     baseline/final: {peak, peak_step, curve: Float64Array},
  //     orderText (the final order's names joined by '\n'), baselineSteps
  //     (Int32Array: each final step's baseline step), baselinePeakNode, planMs,
  //     stages: [[stage, ms]]}
  async plan(source, options, onProgress) {
    await this.ready;
    return this.request('plan', { source, options }, onProgress);
  }

  // -> the last plan's schedplan/1 object for the views after the first
  //    report (without per-method orders, curve, order, runtimes; front_end
  //    with its first fused groups: worker.js).
  async details() {
    await this.ready;
    return this.request('details');
  }

  // -> the schedplan/1 text of the last plan (byte for byte the CLI's).
  async planText() {
    await this.ready;
    return this.request('planText');
  }

  // -> the Chrome trace text of the last plan (as `plan --trace`).
  async trace() {
    await this.ready;
    return this.request('trace');
  }

  // -> {after, before}: timeline lanes of the final order and of the order before the comm passes.
  async timeline(withBefore) {
    await this.ready;
    return this.request('timeline', { withBefore });
  }

  // -> [{buffer, bytes, producer}] alive at `step` of 'baseline' or 'chosen'.
  async live(order, step) {
    await this.ready;
    return this.request('live', { order, step });
  }

  // -> buffer lifetimes of an order in steps [from, to] (wasm/api.js).
  async lifetimes(order, from, to) {
    await this.ready;
    return this.request('lifetimes', { order, from, to });
  }

  // -> memory as executed over the order the compiled call runs in (wasm/api.js executedAsRun).
  async executedAsRun() {
    await this.ready;
    return this.request('executedAsRun');
  }

  // -> `fuse --explain A B` on the input graph.
  async explain(a, b) {
    await this.ready;
    return this.request('explain', { a, b });
  }

  // -> names of the nodes that produce a buffer whose name contains `query`.
  async findBuffers(query) {
    await this.ready;
    return this.request('findBuffers', { query });
  }

  // -> per comm pass: {pass, positions (each node's step before the pass),
  //    peak_before, peak_after, step_time_us, exposed_comm_us} (wasm/bindings.cpp).
  async passSteps() {
    await this.ready;
    return this.request('passSteps');
  }

  // -> {nodes, calibrated_us}: the calibrated time of each planned node.
  async nodeTimes() {
    await this.ready;
    return this.request('nodeTimes');
  }

  // Checks plan options without planning (a loaded profile file, before it
  // is selected): resolves, or rejects with core's message.
  async checkOptions(options) {
    await this.ready;
    return this.request('checkOptions', { options });
  }

  // -> the input graph's node names, joined by '\n'.
  async inputNames() {
    await this.ready;
    return this.request('inputNames');
  }

  terminate() {
    this.worker.terminate();
    this.failAll('planner stopped');
  }
}
