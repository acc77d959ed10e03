// The playground page: load a graph (file, drop, paste, example, ?graph=URL),
// plan it in the worker, render the report. All planning is core's (through
// the WASM module); this file only presents what the plan JSON says.
import { formatMs, formatUs, h, humanBytes, percentChange } from './format.js';
import { MemoryChart } from './memory-chart.js';
import { renderOrder } from './order-view.js';
import { Planner } from './planner.js';
import { renderFusion } from './fusion-view.js';
import { renderTimeline } from './timeline.js';

const $ = (id) => document.getElementById(id);

const state = {
  planner: new Planner(),
  graph: null,   // {text, label}
  result: null,  // the worker's plan result
  runId: 0,      // the latest plan request; older replies are dropped
  chart: null,
  optionsReady: null,  // resolves once the option checkboxes exist
};

// ---- loading -------------------------------------------------------------

// defaults: plan with the CLI's default options (as ?graph=URL does), not the panel's.
function loadGraph(text, label, { defaults = false } = {}) {
  state.graph = { text, label };
  $('plan-button').disabled = false;
  return runPlan({ defaults });
}

async function loadFromUrl(url, label, { defaults = false } = {}) {
  setStatus(`fetching ${label}…`);
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    showError(`${label}: cannot fetch (${e.message})`);
    return;
  }
  if (!response.ok) {
    showError(`${label}: HTTP ${response.status} ${response.statusText}`);
    return;
  }
  await loadGraph(await response.text(), label, { defaults });
}

async function loadFile(file) {
  if (!file) return;
  await loadGraph(await file.text(), file.name);
}

async function setUpExamples() {
  const select = $('example-select');
  try {
    const response = await fetch('examples/index.json');
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    for (const ex of await response.json()) select.append(h('option', { value: ex.file }, ex.label));
  } catch {
    select.disabled = true;
    select.title = 'no bundled examples (build the site with scripts/build-web.sh)';
  }
  select.addEventListener('change', () => {
    if (!select.value) return;
    loadFromUrl(`examples/${select.value}`, select.value);
  });
}

function setUpDropAndPaste() {
  $('file-input').addEventListener('change', (e) => loadFile(e.target.files[0]));
  const overlay = $('drop-overlay');
  let depth = 0;
  window.addEventListener('dragenter', (e) => {
    if (!e.dataTransfer.types.includes('Files')) return;
    depth += 1;
    overlay.hidden = false;
  });
  window.addEventListener('dragleave', () => {
    depth = Math.max(0, depth - 1);
    if (!depth) overlay.hidden = true;
  });
  window.addEventListener('dragover', (e) => e.preventDefault());
  window.addEventListener('drop', (e) => {
    e.preventDefault();
    depth = 0;
    overlay.hidden = true;
    loadFile(e.dataTransfer.files[0]);
  });
  const dialog = $('paste-dialog');
  $('paste-button').addEventListener('click', () => dialog.showModal());
  dialog.addEventListener('close', () => {
    if (dialog.returnValue === 'plan' && $('paste-text').value.trim()) loadGraph($('paste-text').value, 'pasted graph');
  });
}

// ---- options -------------------------------------------------------------

function renderOptions({ memoryMethods, commPasses }) {
  $('memory-methods').replaceChildren(...memoryMethods.map((m) =>
    h('label', { class: 'check', title: m.summary },
      h('input', { type: 'checkbox', name: 'memory-method', value: m.name, checked: m.default }),
      h('span', { class: 'check-name' }, m.name),
      h('span', { class: 'check-summary' }, m.summary))));
  if (commPasses && commPasses.length) {
    $('comm-options').hidden = false;
    $('comm-passes').replaceChildren(...commPasses.map((p) =>
      h('label', { class: 'check', title: p.summary },
        h('input', { type: 'checkbox', name: 'comm-pass', value: p.name, checked: p.default }),
        h('span', { class: 'check-name' }, p.name),
        h('span', { class: 'check-summary' }, p.summary))));
  }
}

function chosenOptions() {
  const checked = (name) => [...document.querySelectorAll(`input[name="${name}"]:checked`)].map((i) => i.value);
  const options = { memory_methods: checked('memory-method') };
  if (!$('comm-options').hidden) options.comm_passes = checked('comm-pass');
  options.fuse = $('fuse-option').checked;
  return options;
}

// ---- planning ------------------------------------------------------------

function setStatus(text, busy = false) {
  $('status').replaceChildren(busy ? h('div', { class: 'progress' }, h('div', { class: 'bar' })) : '', text);
}

async function runPlan({ defaults = false } = {}) {
  if (!state.graph) return;
  const runId = ++state.runId;
  const started = performance.now();
  clearError();
  setStatus('starting…', true);
  $('plan-button').disabled = true;
  try {
    await state.optionsReady;
    const result = await state.planner.plan(state.graph.text, defaults ? null : chosenOptions(), ({ stage, detail }) => {
      if (runId === state.runId) setStatus(`${stage}: ${detail}`, true);
    });
    if (runId !== state.runId) return;
    result.totalMs = performance.now() - started;
    state.result = result;
    clearError();
    renderReport(result);
    setStatus(`planned in ${formatMs(result.planMs)} (core) · ${formatMs(result.totalMs)} in all`);
  } catch (e) {
    if (runId !== state.runId) return;
    state.result = null;
    showError(`${state.graph.label}: ${e.message}`);
  } finally {
    if (runId === state.runId) $('plan-button').disabled = false;
  }
}

// ---- errors --------------------------------------------------------------

function showError(message) {
  $('error-slot').replaceChildren(
    h('div', { class: 'error', role: 'alert' },
      h('strong', {}, 'Cannot plan this graph'),
      h('pre', { 'data-testid': 'error' }, message)));
  $('report').hidden = true;
  $('empty').hidden = true;
  setStatus('');
  $('export-plan').disabled = true;
  $('export-trace').disabled = true;
}

function clearError() {
  $('error-slot').replaceChildren();
}

// ---- report --------------------------------------------------------------

function renderReport(result) {
  $('empty').hidden = true;
  $('report').hidden = false;
  renderSummary(result);
  renderMemory(result);
  renderOrder($('order'), result.plan.order, result.baseline.order);
  $('export-plan').disabled = false;
  $('export-trace').disabled = false;
  // The timeline needs the trace (large on big graphs): fetched only when
  // the graph has collectives to show.
  const collectives = result.plan.simulation ? result.plan.simulation.collectives.length : 0;
  $('timeline-card').hidden = !collectives;
  if (collectives) {
    const runId = state.runId;
    state.planner.trace().then(
      (trace) => { if (runId === state.runId) renderTimeline($('timeline'), trace); },
      (e) => { if (runId === state.runId) $('timeline').replaceChildren(h('p', { class: 'error' }, `no timeline: ${e.message}`)); });
  }
  $('fusion-card').hidden = !result.plan.front_end;
  if (result.plan.front_end) renderFusion($('fusion'), result.plan.front_end);
}

function renderSummary({ plan, summary, baseline, planMs }) {
  const mem = plan.memory;
  const rows = mem.method_order.map((name) => {
    const m = mem.methods[name];
    const chosen = name === mem.chosen;
    if (m.error) return h('tr', { class: 'failed' }, h('td', {}, name), h('td', { colspan: 3 }, `failed: ${m.error}`));
    return h('tr', { class: chosen ? 'chosen' : '' },
      h('td', {}, name, chosen ? h('span', { class: 'badge' }, 'chosen') : ''),
      h('td', { class: 'num' }, humanBytes(m.peak)),
      h('td', { class: 'num' }, percentChange(baseline.peak, m.peak)),
      h('td', { class: 'num muted' }, m.peak.toLocaleString('en-US')));
  });
  $('summary').replaceChildren(
    h('div', { class: 'stats' },
      stat('Peak memory (chosen)', humanBytes(mem.peak),
        h('span', {}, h('span', { 'data-testid': 'peak-bytes' }, String(mem.peak)), ' bytes · ', mem.chosen, ' · ',
          `${percentChange(baseline.peak, mem.peak)} vs baseline`)),
      stat('Baseline peak', humanBytes(baseline.peak), `at step ${baseline.peak_step} of ${plan.nodes}`),
      stat('Graph', plan.graph || '(unnamed)', graphDetail(summary, plan)),
      simulationStat(plan),
      stat('Planning', formatMs(planMs), 'WASM core in a worker')),
    h('table', { class: 'methods' },
      h('thead', {}, h('tr', {}, h('th', {}, 'method'), h('th', { class: 'num' }, 'peak'), h('th', { class: 'num' }, 'vs baseline'), h('th', { class: 'num' }, 'bytes'))),
      h('tbody', {}, rows)));
}

function graphDetail({ input, planned }, plan) {
  const counts = `${planned.nodes} nodes · ${planned.buffers} buffers · ${planned.inputs} inputs`;
  return plan.front_end ? `${counts} · fused here from ${input.nodes} pre-fusion nodes` : counts;
}

// Step time and exposed communication of the two-stream simulation (and
// before the comm passes, when they ran).
function simulationStat(plan) {
  const sim = plan.simulation;
  if (!sim) return '';
  let detail = `exposed comm ${formatUs(sim.exposed_comm_us)} · ${sim.collectives.length} collectives`;
  if (plan.comm) {
    detail += ` · before comm passes: ${formatUs(plan.comm.step_time_before_us)}, exposed ${formatUs(plan.comm.exposed_comm_before_us)}`;
  }
  return stat('Step time (simulated)', formatUs(sim.step_time_us), detail);
}

function stat(label, value, detail) {
  return h('div', { class: 'stat' }, h('div', { class: 'stat-label' }, label), h('div', { class: 'stat-value', title: value }, value),
    h('div', { class: 'stat-detail' }, detail));
}

function renderMemory({ plan, baseline }) {
  if (!state.chart) {
    state.chart = new MemoryChart($('memory-chart'), {
      height: 300,
      onHover: (step) => showLive(step),
      stepLabel: (step) => (step < state.result.plan.order.length ? state.result.plan.order[step] : 'end'),
    });
  }
  // After comm passes the final order differs from the memory method's: its
  // curve (from the worker's memory view) is the one drawn and hovered.
  const last = state.result.final;
  const chosenName = `chosen: ${plan.memory.chosen}${plan.comm ? ' + comm passes' : ''}`;
  state.chart.setSeries([
    { name: 'baseline order', curve: baseline.curve, peak: baseline.peak, peakStep: baseline.peak_step, className: 'baseline' },
    { name: chosenName, curve: last.curve, peak: last.peak, peakStep: last.peak_step, className: 'chosen' },
  ]);
  showLive(last.peak_step);
}

let liveRequest = 0;
async function showLive(step) {
  const request = ++liveRequest;
  const { plan } = state.result;
  const buffers = await state.planner.live('chosen', step);
  if (request !== liveRequest) return;
  const total = buffers.reduce((a, b) => a + b.bytes, 0);
  const node = step < plan.order.length ? plan.order[step] : null;
  const top = buffers.slice(0, 14);
  const largest = top.length ? top[0].bytes : 0;
  const rest = buffers.slice(top.length);
  $('live-buffers').replaceChildren(
    h('div', { class: 'live-head' },
      h('div', {}, `Step ${step}${step === state.result.final.peak_step ? ' (peak)' : ''}`),
      h('div', { class: 'muted' }, node ? `running ${node}` : 'after the last node'),
      h('div', {}, `${humanBytes(total)} live in ${buffers.length} buffers`)),
    h('ol', { class: 'live-list' },
      top.map((b) => h('li', {},
        h('span', { class: 'live-name', title: b.producer ? `from ${b.producer}` : 'graph input' }, b.buffer),
        h('span', { class: 'live-bytes' }, humanBytes(b.bytes)),
        h('span', { class: 'live-bar', style: `width:${largest ? (100 * b.bytes) / largest : 0}%` })))),
    rest.length ? h('div', { class: 'muted' }, `… ${rest.length} more, ${humanBytes(rest.reduce((a, b) => a + b.bytes, 0))}`) : '');
}

// ---- export --------------------------------------------------------------

function download(text, filename) {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const a = h('a', { href: url, download: filename });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function baseName() {
  return (state.result.plan.graph || 'graph').replace(/[^\w.-]+/g, '_');
}

// ---- start ---------------------------------------------------------------

async function main() {
  setUpDropAndPaste();
  $('plan-button').addEventListener('click', () => runPlan());
  $('export-plan').addEventListener('click', () => download(state.result.planText, `${baseName()}.plan.json`));
  $('export-trace').addEventListener('click', async () => download(await state.planner.trace(), `${baseName()}.trace.json`));
  const examples = setUpExamples();
  state.optionsReady = state.planner.capabilities().then(renderOptions);
  try {
    await state.optionsReady;
  } catch (e) {
    showError(`cannot start the planner: ${e.message}`);
    return;
  }
  await examples;
  const graphUrl = new URLSearchParams(location.search).get('graph');
  if (graphUrl) {
    await loadFromUrl(graphUrl, graphUrl.split('/').pop(), { defaults: true });
  }
}

main();
