// The playground page: load a graph (file, drop, paste, example,
// ?graph=URL), plan it in the worker, render the report. All planning is
// core's (through the WASM module); this file only presents what the plan
// says and wires the views together: hovering or pinning a step in the
// memory chart shows it in the live list, the stacked lifetimes, the order
// table and the timeline.
import { formatMs, formatUs, h, humanBytes, percentChange } from './format.js';
import { MemoryChart } from './memory-chart.js';
import { OrderView } from './order-view.js';
import { OptionsPanel } from './options-panel.js';
import { Planner } from './planner.js';
import { renderFusion } from './fusion-view.js';
import { renderCommTables, Timeline } from './timeline.js';
import { describeBuffer, renderLifetimes } from './lifetime-view.js';

const $ = (id) => document.getElementById(id);
const LIFETIME_WINDOW = 24;  // steps each side of the pinned step

const state = {
  planner: new Planner(),
  panel: null,
  graph: null,   // {source: Blob | string, label, url (when it has one)}
  result: null,  // the worker's plan result (+ names)
  runId: 0,      // the latest plan request; older replies are dropped
  busy: false,
  chart: null,
  orderView: null,
  timeline: null,
  kept: null,    // a plan kept for comparison
  pinned: null,
  initialStep: null,
};

// ---- loading ------------------------------------------------------------------

// Names the current source in the source menu; its entries stay pickable
// again (the current-source entry is what the menu shows).
function showSource(label) {
  const current = $('current-source');
  current.textContent = label ? `▸ ${label}` : 'Examples…';
  $('example-select').value = '';
}

function loadGraph(source, label, { url = null } = {}) {
  state.graph = { source, label, url };
  showSource(label);
  $('plan-button').disabled = false;
  return runPlan();
}

async function loadFromUrl(url, label) {
  if (state.busy) cancelPlan({ quiet: true });
  const runId = ++state.runId;
  setStatus(`fetching ${label}…`, true);
  let response;
  try {
    response = await fetch(url);
    if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`);
    const blob = await response.blob();
    if (runId !== state.runId) return;
    await loadGraph(blob, label, { url });
  } catch (e) {
    if (runId !== state.runId) return;
    showError(`${label}: cannot fetch (${e.message})`);
  }
}

function loadFile(file) {
  if (!file) return;
  // The worker reads the file: a big one never passes through this thread.
  loadGraph(file, file.name);
}

async function setUpExamples() {
  const select = $('example-select');
  try {
    const response = await fetch('examples/index.json');
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    for (const ex of await response.json()) select.append(h('option', { value: ex.file }, ex.label));
  } catch {
    select.title = 'no bundled examples (build the site with scripts/build-web.sh)';
  }
  select.addEventListener('change', () => {
    const file = select.value;
    if (!file) return;
    loadFromUrl(`examples/${file}`, file);
  });
}

function setUpLoaders() {
  const input = $('file-input');
  $('open-button').addEventListener('click', () => input.click());
  input.addEventListener('change', () => {
    const file = input.files[0];
    input.value = '';  // the same file picked again is a new change
    loadFile(file);
  });
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

// ---- planning -------------------------------------------------------------------

let statusTimer = 0;
function setStatus(text, busy = false) {
  clearInterval(statusTimer);
  const started = performance.now();
  const line = h('span', { class: 'status-text' }, text);
  $('status').replaceChildren(busy ? h('div', { class: 'progress', 'aria-hidden': 'true' }, h('div', { class: 'bar' })) : '', line);
  $('status').classList.toggle('busy', busy);
  if (busy) {
    const elapsed = h('span', { class: 'elapsed', 'aria-hidden': 'true' });
    $('status').append(elapsed);
    statusTimer = setInterval(() => { elapsed.textContent = ` · ${((performance.now() - started) / 1000).toFixed(1)} s`; }, 200);
  }
}

function setBusy(busy) {
  state.busy = busy;
  $('cancel-button').hidden = !busy;
  $('plan-button').disabled = busy || !state.graph;
}

function cancelPlan({ quiet = false } = {}) {
  state.runId += 1;
  state.planner.cancel();
  setBusy(false);
  // The worker's session went with it: the report shown can no longer answer.
  state.result = null;
  $('report').hidden = true;
  $('empty').hidden = false;
  setExports(false);
  if (!quiet) setStatus('cancelled');
}

async function runPlan() {
  if (!state.graph) return;
  if (state.busy) cancelPlan({ quiet: true });
  const runId = ++state.runId;
  const started = performance.now();
  clearError();
  setBusy(true);
  setStatus(`starting: ${state.graph.label}`, true);
  delete $('status').dataset.stages;
  try {
    const options = state.panel.options();
    const result = await state.planner.plan(state.graph.source, options, ({ stage, detail }) => {
      if (runId === state.runId) setStatus(`${stage}: ${detail}`, true);
    });
    if (runId !== state.runId) return;
    const received = performance.now();
    result.orderNames = result.orderText.split('\n');
    result.label = state.graph.label;
    state.result = result;
    await renderReport(result);
    if (runId !== state.runId) return;
    result.totalMs = performance.now() - started;
    setBusy(false);
    setStatus(`planned in ${formatMs(result.planMs)} (core) · ${formatMs(result.totalMs)} in all`);
    showStageTimes(result, received - started, performance.now() - received);
    setTimeout(updateUrl, 0);
    renderDetails(result);
  } catch (e) {
    if (runId !== state.runId || e.kind === 'cancelled') return;
    setBusy(false);
    state.result = null;
    showError(`${state.graph.label}: ${e.message}`);
  }
}

// Where the time of the last plan went, per stage (the worker's, then the
// messages to and from it, then this page's rendering): in the status line's
// tooltip and data-stages (the browser bench prints it).
function showStageTimes(result, untilReceivedMs, renderMs) {
  const workerMs = result.stages.reduce((a, [, ms]) => a + ms, 0);
  const stages = [...result.stages, ['messages', Math.max(0, Math.round(untilReceivedMs - workerMs))], ['render', Math.round(renderMs)]];
  const text = stages.map(([name, ms]) => `${name} ${ms} ms`).join(' · ');
  $('status').dataset.stages = text;
  $('status').title = text;
}

function updateUrl() {
  // The peak step is pinned on load anyway: only another step goes in the URL.
  const step = state.result && state.pinned !== state.result.final.peak_step ? state.pinned : null;
  const url = state.panel.urlFor(state.graph && state.graph.url, step);
  history.replaceState(null, '', url);
}

// ---- errors -----------------------------------------------------------------------

function showError(message) {
  $('error-slot').replaceChildren(
    h('div', { class: 'error', role: 'alert' },
      h('strong', {}, 'Cannot plan this graph'),
      h('pre', { 'data-testid': 'error' }, message)));
  $('report').hidden = true;
  $('empty').hidden = true;
  setStatus('');
  setExports(false);
}

function clearError() {
  $('error-slot').replaceChildren();
}

function setExports(on) {
  for (const id of ['export-plan', 'export-trace', 'share-button']) $(id).disabled = !on;
}

// ---- report -------------------------------------------------------------------------

// One frame between the report's parts, so that laying out a big report
// never blocks the page in one long task.
const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

async function renderReport(result) {
  const runId = state.runId;
  $('empty').hidden = true;
  $('report').hidden = false;
  // The previous plan's secondary views go until renderDetails has this one's.
  $('fusion-card').hidden = true;
  $('timeline-card').hidden = true;
  if (state.timeline) state.timeline.destroy();
  state.timeline = null;
  renderSummary(result);
  renderCompare();
  await nextFrame();
  if (runId !== state.runId) return;
  state.orderView = new OrderView($('order'), result.orderNames, result.baselineSteps, {
    findBuffers: async (q) => new Set(await state.planner.findBuffers(q)),
    onHover: (step) => {
      if (state.chart) state.chart.mark(step);
      if (state.timeline) state.timeline.mark(step === null ? null : result.orderNames[step]);
    },
    onSelect: (step) => state.chart.pin(step),
  });
  state.orderView.scrollToFirstMoved();
  await nextFrame();
  if (runId !== state.runId) return;
  renderMemory(result);
  setExports(true);
}

// After the first report: the whole plan (its text is written and parsed
// only now) for the fusion table, the comm tables and the timeline.
async function renderDetails(result) {
  const runId = state.runId;
  let plan;
  try {
    plan = await state.planner.details();
  } catch (e) {
    if (runId === state.runId && e.kind !== 'cancelled') showError(`${result.label}: ${e.message}`);
    return;
  }
  if (runId !== state.runId) return;
  result.plan = plan;
  renderTimelineCard(result);
  $('fusion-card').hidden = !result.plan.front_end;
  if (result.plan.front_end) {
    renderFusion($('fusion'), result.plan.front_end);
    $('why-result').hidden = true;
    state.planner.inputNames().then((text) => {
      if (runId !== state.runId) return;
      const names = text.split('\n');
      // Suggestions for graphs of a size a list can hold; any name can be typed.
      $('why-names').replaceChildren(...(names.length <= 2000 ? names : []).map((n) => h('option', { value: n })));
    }, () => {});
  }
}

// The timeline needs the trace (large on big graphs): fetched only when the
// graph has collectives to show.
function renderTimelineCard(result) {
  const collectives = result.plan.simulation ? result.plan.simulation.collectives.length : 0;
  $('timeline-card').hidden = !collectives;
  if (state.timeline) state.timeline.destroy();
  state.timeline = null;
  if (!collectives) return;
  renderCommTables($('comm-tables'), result.plan);
  const runId = state.runId;
  state.planner.timeline(Boolean(result.plan.comm)).then(
    (data) => {
      if (runId !== state.runId) return;
      state.timeline = new Timeline($('timeline'), data, {
        onHover: (name) => {
          const step = result.orderNames.indexOf(name);
          if (step >= 0) {
            state.chart.mark(step);
            state.orderView.highlight(step);
          }
        },
      });
      state.timeline.draw();
    },
    (e) => { if (runId === state.runId) $('timeline').replaceChildren(h('p', { class: 'error' }, `no timeline: ${e.message}`)); });
}

function stat(label, value, detail, testid) {
  return h('div', { class: 'stat', 'data-testid': testid }, h('div', { class: 'stat-label' }, label),
    h('div', { class: 'stat-value', title: value }, value), h('div', { class: 'stat-detail' }, detail));
}

function nodeAt(result, step) {
  return step < result.orderNames.length ? result.orderNames[step] : 'after the last node';
}

function renderSummary(result) {
  const { plan, summary, baseline } = result;
  const mem = plan.memory;
  const fin = plan.final || { peak_bytes: result.final.peak, peak_step: result.final.peak_step, peak_node: nodeAt(result, result.final.peak_step) };
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
  const methodPeak = plan.comm
    ? h('div', { 'data-testid': 'method-peak' },
      `memory method's order (${mem.chosen}, before comm passes): ${humanBytes(mem.peak)} at step ${mem.peak_step}${result.methodPeakNode ? ` (${result.methodPeakNode})` : ''}`)
    : '';
  $('summary').replaceChildren(
    h('div', { class: 'stats' },
      stat(plan.comm ? 'Peak memory (final order, after comm passes)' : 'Peak memory (final order)', humanBytes(fin.peak_bytes),
        h('span', {},
          h('span', { 'data-testid': 'peak-bytes' }, String(fin.peak_bytes)), ' bytes at step ', fin.peak_step,
          fin.peak_node ? ` (${fin.peak_node})` : '', ` · ${percentChange(baseline.peak, fin.peak_bytes)} vs baseline`,
          methodPeak), 'stat-peak'),
      stat('Baseline peak', humanBytes(baseline.peak), `at step ${baseline.peak_step} (${result.baselinePeakNode || 'after the last node'})`),
      stat('Graph', plan.graph || '(unnamed)', graphDetail(summary, plan)),
      simulationStat(plan),
      predictedStat(plan),
      stat('Planning', formatMs(result.planMs), `WASM core in a worker · hardware ${plan.options.hardware}`)),
    h('table', { class: 'methods' },
      h('caption', { class: 'muted' }, 'Memory methods (peak of each order, before comm passes)'),
      h('thead', {}, h('tr', {}, h('th', {}, 'method'), h('th', { class: 'num' }, 'peak'), h('th', { class: 'num' }, 'vs baseline'), h('th', { class: 'num' }, 'bytes'))),
      h('tbody', {}, rows)));
}

function graphDetail({ input, planned }, plan) {
  const counts = `${planned.nodes} nodes · ${planned.buffers} buffers · ${planned.inputs} inputs`;
  return plan.front_end ? `${counts} · fused here from ${input.nodes} pre-fusion nodes` : counts;
}

// Step time and exposed communication of the two-stream simulation (and
// before the comm passes, when they ran), with the compared comm passes'
// (plan.compare: each what the plan reports with those passes).
function simulationStat(plan) {
  const sim = plan.simulation;
  if (!sim) return '';
  const collectives = sim.collectives ? sim.collectives.length : sim.collective_count;  // plan or overview
  let detail = `exposed comm ${formatUs(sim.exposed_comm_us)} · ${collectives} collectives`;
  if (plan.comm) {
    detail += ` · before comm passes: ${formatUs(plan.comm.step_time_before_us)}, exposed ${formatUs(plan.comm.exposed_comm_before_us)}`;
  }
  const compared = (plan.compare || []).map((c) =>
    h('span', { class: 'compare-row' }, ` · ${c.label}: ${formatUs(c.step_time_us)}, exposed ${formatUs(c.exposed_comm_us)}`));
  return stat('Step time (simulated)', formatUs(sim.step_time_us),
    compared.length ? h('span', {}, detail, h('span', { 'data-testid': 'compare-rows' }, ...compared)) : detail);
}

// The calibrated figures (schedplan/1 `predicted`), with their source named.
function predictedStat(plan) {
  const p = plan.predicted;
  if (!p) return '';
  const parts = [];
  if (p.reserved_bytes !== undefined) parts.push(`reserved ${humanBytes(p.reserved_bytes)}`);
  if (p.kernel_time_us !== undefined) parts.push(`kernel time ${formatUs(p.kernel_time_us)}`);
  if (p.wall_time_us !== undefined) parts.push(`wall ${formatUs(p.wall_time_us)}`);
  if (p.wall_time_us_cudagraphs !== undefined) parts.push(`with CUDA graphs ${formatUs(p.wall_time_us_cudagraphs)}`);
  parts.push(`source: ${p.runtime_source || 'unknown'} on ${p.hardware || plan.options.hardware}`);
  return stat('Predicted on the GPU (as executed)', p.peak_bytes !== undefined ? humanBytes(p.peak_bytes) : '—', parts.join(' · '), 'predicted');
}

// ---- comparison -------------------------------------------------------------------------

function keepForComparison() {
  const r = state.result;
  if (!r) return;
  state.kept = {
    label: `${r.label} · ${r.plan.memory.chosen}${r.plan.comm ? ` + ${r.plan.options.comm_passes.join(', ')}` : ''}`,
    curve: r.final.curve,
    figures: figuresOf(r),
  };
  renderCompare();
  renderMemory(r, { keepView: true });
  setStatus(`kept "${state.kept.label}": plan another graph or other options to compare`);
}

function figuresOf(r) {
  const p = r.plan;
  const fin = p.final || { peak_bytes: r.final.peak, peak_step: r.final.peak_step };
  return [
    ['graph', p.graph || '(unnamed)'],
    ['nodes planned', String(p.nodes)],
    ['memory method', p.memory.chosen],
    ['comm passes', (p.options.comm_passes || []).join(', ') || 'none'],
    ['hardware', p.options.hardware],
    ['peak (final order)', `${humanBytes(fin.peak_bytes)} at step ${fin.peak_step}`],
    ['memory method\'s peak', humanBytes(p.memory.peak)],
    ['baseline peak', humanBytes(r.baseline.peak)],
    ['step time (simulated)', p.simulation ? formatUs(p.simulation.step_time_us) : '—'],
    ['exposed comm', p.simulation ? formatUs(p.simulation.exposed_comm_us) : '—'],
    ['predicted peak', p.predicted && p.predicted.peak_bytes !== undefined ? humanBytes(p.predicted.peak_bytes) : '—'],
  ];
}

function renderCompare() {
  const kept = state.kept;
  $('compare-card').hidden = !kept || !state.result;
  if (!kept || !state.result) return;
  const now = figuresOf(state.result);
  $('compare').replaceChildren(
    h('table', { class: 'compare', 'data-testid': 'compare' },
      h('thead', {}, h('tr', {}, h('th', {}, ''), h('th', {}, `kept: ${kept.label}`), h('th', {}, `this plan: ${state.result.label}`))),
      h('tbody', {}, now.map(([k, v], i) => h('tr', { class: kept.figures[i][1] !== v ? 'differs' : '' },
        h('th', {}, k), h('td', {}, kept.figures[i][1]), h('td', {}, v))))),
    h('button', { type: 'button', onclick: () => { state.kept = null; renderCompare(); renderMemory(state.result, { keepView: true }); } }, 'Stop comparing'));
}

// ---- memory -----------------------------------------------------------------------------

function renderMemory(result, { keepView = false } = {}) {
  const { plan, baseline } = result;
  if (!state.chart) {
    state.chart = new MemoryChart($('memory-chart'), {
      height: 300,
      onHover: (step) => onStepHover(step),
      onPin: (step) => onStepPin(step),
      stepLabel: (step) => nodeAt(state.result, step),
    });
  }
  const fin = result.final;
  const series = [
    { name: 'baseline order', curve: baseline.curve, peak: baseline.peak, peakStep: baseline.peak_step, className: 'baseline' },
    { name: `final: ${plan.memory.chosen}${plan.comm ? ' + comm passes' : ''}`, curve: fin.curve, peak: fin.peak, peakStep: fin.peak_step, className: 'chosen' },
  ];
  if (state.kept) {
    let peak = 0;
    let peakStep = 0;
    state.kept.curve.forEach((v, i) => { if (v > peak) { peak = v; peakStep = i; } });
    series.push({ name: `kept: ${state.kept.label}`, curve: state.kept.curve, peak, peakStep, className: 'kept' });
  }
  state.chart.setSeries(series, { keepView });
  if (!keepView) {
    const step = state.initialStep !== null ? state.initialStep : fin.peak_step;
    state.initialStep = null;
    state.chart.pin(step);
  }
}

// Hover: the live list follows at once; the worker is asked for one step at
// a time (the latest wins), so a fast pointer never queues requests.
const liveQuery = { busy: false, next: null };
function onStepHover(step) {
  if (!state.result) return;
  const shown = step === null ? state.pinned : step;
  if (state.orderView) state.orderView.highlight(shown);
  if (state.timeline) state.timeline.mark(shown === null ? null : state.result.orderNames[shown]);
  if (shown !== null) requestLive(shown);
}

function requestLive(step) {
  liveQuery.next = step;
  if (liveQuery.busy) return;
  liveQuery.busy = true;
  const runId = state.runId;
  const s = liveQuery.next;
  liveQuery.next = null;
  state.planner.live('chosen', s).then((buffers) => {
    if (runId === state.runId) showLive(s, buffers);
  }, () => {}).finally(() => {
    liveQuery.busy = false;
    if (liveQuery.next !== null) requestLive(liveQuery.next);
  });
}

let urlTimer = 0;
function onStepPin(step) {
  state.pinned = step;
  onStepHover(step);
  showLifetimes(step);
  clearTimeout(urlTimer);
  if (state.result && !state.busy) urlTimer = setTimeout(updateUrl, 100);
}

function showLive(step, buffers) {
  const total = buffers.reduce((a, b) => a + b.bytes, 0);
  const top = buffers.slice(0, 14);
  const largest = top.length ? top[0].bytes : 0;
  const rest = buffers.slice(top.length);
  $('live-buffers').replaceChildren(
    h('div', { class: 'live-head' },
      h('div', { 'data-testid': 'live-step' }, `Step ${step}${step === state.result.final.peak_step ? ' (peak)' : ''}${step === state.pinned ? ' · pinned' : ''}`),
      h('div', { class: 'muted' }, step < state.result.orderNames.length ? `running ${state.result.orderNames[step]}` : 'after the last node'),
      h('div', {}, `${humanBytes(total)} live in ${buffers.length} buffers`)),
    h('ol', { class: 'live-list' },
      top.map((b) => h('li', {},
        h('span', { class: 'live-name', title: b.producer ? `from ${b.producer}` : 'graph input' }, b.buffer),
        h('span', { class: 'live-bytes' }, humanBytes(b.bytes)),
        h('span', { class: 'live-bar', style: `width:${largest ? (100 * b.bytes) / largest : 0}%` })))),
    rest.length ? h('div', { class: 'muted' }, `… ${rest.length} more, ${humanBytes(rest.reduce((a, b) => a + b.bytes, 0))}`) : '');
}

let lifetimeRequest = 0;
async function showLifetimes(step) {
  const request = ++lifetimeRequest;
  const n = state.result.orderNames.length;
  const from = Math.max(0, step - LIFETIME_WINDOW);
  const to = Math.min(n - 1, step + LIFETIME_WINDOW);
  if (to < from) return;
  let lifetimes;
  try {
    lifetimes = await state.planner.lifetimes('chosen', from, to);
  } catch {
    return;
  }
  if (request !== lifetimeRequest || !state.result) return;
  renderLifetimes($('lifetimes'), lifetimes, {
    from, to, step: Math.min(step, to),
    detail: (b) => $('buffer-detail').replaceChildren(...describeBuffer(b).map((line, i) => h('div', { class: i ? '' : 'detail-head' }, line))),
  });
}

// ---- why not fused ---------------------------------------------------------------------

async function explainPair(e) {
  e.preventDefault();
  const a = $('why-a').value.trim();
  const b = $('why-b').value.trim();
  const out = $('why-result');
  // Shown only once it holds this pair's answer: unhidden earlier, it would
  // show the last pair's answer (or nothing) while the worker explains.
  try {
    const ex = await state.planner.explain(a, b);
    const lines = [];
    if (ex.eliminated_a || ex.eliminated_b) {
      lines.push(`${a} and ${b} do not fuse: ${ex.eliminated_a && ex.eliminated_b ? 'both are' : `${ex.eliminated_a ? a : b} is`} removed as dead code`);
    } else if (ex.fused) {
      lines.push(`${a} and ${b} fuse: both in ${ex.group_a}`);
    } else {
      lines.push(`${a} and ${b} do not fuse: they end in ${ex.group_a} and ${ex.group_b}`);
      if (!ex.refusals.length) lines.push(`  never a candidate pair (no shared buffer within ${ex.max_pairwise_attempts} nodes of each other's list)`);
      for (const r of ex.refusals) lines.push(`  round ${r.round}: ${r.node1} + ${r.node2} refused: ${r.reason}`);
      lines.push(`  now: ${ex.final_reason || 'legal, but never chosen'}`);
    }
    out.textContent = lines.join('\n');
    out.classList.remove('error');
  } catch (err) {
    out.textContent = err.message;
    out.classList.add('error');
  }
  out.hidden = false;
}

// ---- export -----------------------------------------------------------------------------

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

// ---- start ------------------------------------------------------------------------------

async function main() {
  setUpLoaders();
  $('plan-button').addEventListener('click', () => runPlan());
  $('cancel-button').addEventListener('click', () => cancelPlan());
  $('keep-button').addEventListener('click', keepForComparison);
  $('why-form').addEventListener('submit', explainPair);
  $('export-plan').addEventListener('click', async () => download(await state.planner.planText(), `${baseName()}.plan.json`));
  $('export-trace').addEventListener('click', async () => download(await state.planner.trace(), `${baseName()}.trace.json`));
  $('share-button').addEventListener('click', async () => {
    updateUrl();
    const link = location.href;
    try {
      await navigator.clipboard.writeText(link);
      setStatus('link copied');
    } catch {
      setStatus(`link: ${link}`);
    }
  });
  const examples = setUpExamples();
  let caps;
  try {
    caps = await state.planner.capabilities();
  } catch (e) {
    showError(`cannot start the planner: ${e.message}`);
    return;
  }
  state.panel = new OptionsPanel(caps, () => state.graph && runPlan());
  await examples;
  const params = new URLSearchParams(location.search);
  const problems = state.panel.applyUrl(params);
  if (problems.length) {
    showError(`page URL: ${problems.join('; ')}`);
    return;
  }
  if (params.has('step')) state.initialStep = Number(params.get('step'));
  const graphUrl = params.get('graph');
  if (graphUrl) await loadFromUrl(graphUrl, graphUrl.split('/').pop());
}

main();
