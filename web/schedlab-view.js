// <schedlab-view>: the embeddable widget. One script tag and one element:
//
//   <script type="module" src="https://…/schedlab-view.js"></script>
//   <schedlab-view src="graph.json" passes="lpmf,bfs"></schedlab-view>
//
// src: a schedgraph/1 URL (relative to the page). passes: optional comma list
// of memory methods and comm passes (default: the CLI's defaults). height:
// optional chart height in px. device-memory: optional device memory
// ("80GiB"): the widget answers "will it fit?" with the margin. It renders the summary (the final order's
// peak, peak per method, the chosen one, the calibrated prediction when the
// plan has one) and the memory curve, planned by the WASM core in a worker
// shared by every widget on the page. docs.html shows it embedded; the
// page may be on another origin than the widget's files, which must then be
// served with CORS (scripts/serve-web.js does).
import { fitWords, h, humanBytes, percentChange } from './js/format.js';
import { MemoryChart } from './js/memory-chart.js';
import { Planner } from './js/planner.js';

const STYLE_URL = new URL('style.css', import.meta.url).href;
let sharedPlanner = null;
const planner = () => (sharedPlanner ||= new Planner());

// Splits `passes` into core options by the registries' names.
function optionsFromPasses(passes, { memoryMethods, commPasses = [] }) {
  if (!passes || !passes.trim()) return {};
  const memory = new Set(memoryMethods.map((m) => m.name));
  const comm = new Set(commPasses.map((p) => p.name));
  const options = { memory_methods: [], comm_passes: [] };
  for (const name of passes.split(',').map((s) => s.trim()).filter(Boolean)) {
    if (memory.has(name)) options.memory_methods.push(name);
    else if (comm.has(name)) options.comm_passes.push(name);
    else throw new Error(`passes: unknown name "${name}" (memory methods: ${[...memory].join(', ')}${comm.size ? `; comm passes: ${[...comm].join(', ')}` : ''})`);
  }
  if (!options.memory_methods.length) delete options.memory_methods;
  return options;
}

class SchedlabView extends HTMLElement {
  static get observedAttributes() {
    return ['src', 'passes', 'device-memory'];
  }

  constructor() {
    super();
    this.attachShadow({ mode: 'open' });
    this.body = h('div', { class: 'widget' }, h('div', { class: 'muted' }, 'loading…'));
    this.shadowRoot.append(h('link', { rel: 'stylesheet', href: STYLE_URL }), this.body);
    this.renderId = 0;
  }

  connectedCallback() {
    this.render();
  }

  attributeChangedCallback() {
    if (this.isConnected) this.render();
  }

  async render() {
    const id = ++this.renderId;
    const src = this.getAttribute('src');
    try {
      if (!src) throw new Error('missing src="graph.json"');
      const url = new URL(src, document.baseURI).href;
      const [response, caps] = await Promise.all([fetch(url), planner().capabilities()]);
      if (!response.ok) throw new Error(`${src}: HTTP ${response.status}`);
      const options = optionsFromPasses(this.getAttribute('passes'), caps);
      const device = (this.getAttribute('device-memory') || '').trim();
      if (device) Object.assign(options, { device_memory: /^\d+$/.test(device) ? Number(device) : device });
      const result = await planner().plan(await response.blob(), Object.keys(options).length ? options : null);
      if (id === this.renderId) this.show(result);
    } catch (e) {
      if (id !== this.renderId) return;
      this.body.replaceChildren(h('div', { class: 'error' }, h('strong', {}, 'schedlab: '), h('span', { 'data-testid': 'error' }, e.message)));
    }
  }

  show({ plan, baseline, final, orderText }) {
    const names = orderText.split('\n');
    const mem = plan.memory;
    const peak = plan.final ? plan.final.peak_bytes : final.peak;
    const methods = mem.method_order.map((name) => {
      const m = mem.methods[name];
      return h('span', { class: `widget-method${name === mem.chosen ? ' chosen' : ''}` },
        m.error ? `${name}: failed` : `${name} ${humanBytes(m.peak)}`);
    });
    const p = plan.predicted;
    const chartBox = h('div', { class: 'chart' });
    this.body.replaceChildren(
      h('div', { class: 'widget-head' },
        h('div', {},
          h('div', { class: 'stat-label' }, `${plan.graph || 'graph'} · ${plan.nodes} nodes · scheduler's peak, what Inductor decides by (${mem.chosen}${plan.comm ? ' + comm passes' : ''})`),
          h('div', { class: 'stat-value' }, humanBytes(peak),
            h('span', { class: 'widget-delta' }, `${percentChange(baseline.peak, peak)} vs baseline`)),
          h('div', { class: 'stat-detail' }, h('span', { 'data-testid': 'peak-bytes' }, String(peak)), ' bytes',
            p && p.peak_bytes !== undefined ? ` · memory as executed (what the GPU allocates) ${humanBytes(p.peak_bytes)}, reserved ${humanBytes(p.reserved_bytes)} (${p.hardware || plan.options.hardware})` : ''),
          plan.data_dependent && plan.data_dependent.buffers
            ? h('div', { class: 'stat-detail', 'data-testid': 'data-dependent' }, `⚠ ${plan.data_dependent.buffers} data-dependent sizes: both figures depend on the data`) : '',
          plan.device_fit ? h('div', { class: `stat-detail fit-${plan.device_fit.verdict}`, 'data-testid': 'device-fit', 'data-verdict': plan.device_fit.verdict },
            `will it fit in ${humanBytes(plan.device_fit.device_bytes)}: ${fitWords(plan.device_fit).verdict}, ${fitWords(plan.device_fit).margin}`) : ''),
        h('div', { class: 'widget-methods' }, methods)),
      chartBox);
    if (this.chart) this.chart.destroy();
    this.chart = new MemoryChart(chartBox, {
      height: Number(this.getAttribute('height')) || 220,
      stepLabel: (step) => (step < names.length ? names[step] : 'end'),
    });
    this.chart.setSeries([
      { name: 'baseline order', curve: baseline.curve, peak: baseline.peak, peakStep: baseline.peak_step, className: 'baseline' },
      { name: `final: ${mem.chosen}`, curve: final.curve, peak: final.peak, peakStep: final.peak_step, className: 'chosen' },
    ]);
  }

  disconnectedCallback() {
    if (this.chart) this.chart.destroy();
  }
}

customElements.define('schedlab-view', SchedlabView);
