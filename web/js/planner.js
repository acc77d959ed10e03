// Client side of worker.js: one worker per Planner, promise-based requests.
// Used by the playground (app.js) and the widget (../schedlab-view.js).

// The folder holding worker.js, schedlab_core.js and schedlab_core.wasm.
const SITE_BASE = new URL('../', import.meta.url).href;

export class Planner {
  constructor(base = SITE_BASE) {
    // A blob trampoline lets a page on another origin embed the widget: the
    // worker then loads its scripts by absolute URL.
    const workerUrl = new URL('js/worker.js', base).href;
    const blob = new Blob([`importScripts(${JSON.stringify(workerUrl)});`], { type: 'text/javascript' });
    this.worker = new Worker(URL.createObjectURL(blob));
    this.pending = new Map();
    this.nextId = 1;
    this.worker.onmessage = ({ data }) => this.receive(data);
    this.worker.onerror = (e) => this.failAll(e.message || 'the planning worker failed to start');
    this.ready = this.request('init', { base });
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

  failAll(message) {
    for (const p of this.pending.values()) p.reject(new Error(message));
    this.pending.clear();
  }

  request(type, payload = {}, onProgress = null) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      this.worker.postMessage({ id, type, ...payload });
    });
  }

  // -> {memoryMethods: [{name, summary, default}]}
  capabilities() {
    return this.ready;
  }

  // -> {planText, plan, summary: {input, planned}, baseline: {peak, peak_step, curve, order}, final: {peak, peak_step, curve}, planMs}
  async plan(graphText, options, onProgress) {
    await this.ready;
    return this.request('plan', { graphText, options }, onProgress);
  }

  // -> the Chrome trace text of the last plan's simulation.
  async trace() {
    await this.ready;
    return this.request('trace');
  }

  // -> [{buffer, bytes, producer}] alive at `step` of 'baseline' or 'chosen'.
  async live(order, step) {
    await this.ready;
    return this.request('live', { order, step });
  }

  terminate() {
    this.worker.terminate();
    this.failAll('planner stopped');
  }
}
