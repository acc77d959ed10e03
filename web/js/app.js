// The playground page: load a graph (file, drop, paste, example,
// ?graph=URL), plan it in the worker, render the report. All planning is
// core's (through the WASM module); this file only presents what the plan
// says and wires the views together: hovering or pinning a step in the
// memory chart shows it in the live list, the stacked lifetimes, the order
// table and the timeline.
import { fitWords, formatMs, formatUs, h, humanBytes, percentChange } from './format.js';
import { MemoryChart } from './memory-chart.js';
import { OrderView } from './order-view.js';
import { OptionsPanel } from './options-panel.js';
import { Planner } from './planner.js';
import { renderFusion } from './fusion-view.js';
import { renderCommTables, Timeline } from './timeline.js';
import { describeBuffer, renderLifetimes } from './lifetime-view.js';
import { breakdown, readMeasurement } from './measured.js';
import { renderMeasured, stepNote } from './measured-view.js';

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
  measured: [],     // measurements opened beside the plan (measured.js)
  simulatedLanes: null,  // the plan's simulated lanes (for the breakdown and the timeline)
};

// ---- loading ------------------------------------------------------------------

// Names the current source in the source menu; its entries stay pickable
// again (the current-source entry is what the menu shows).
function showSource(label) {
  const current = $('current-source');
  current.textContent = label ? `▸ ${label}` : 'Examples…';
  $('example-select').value = '';
}

function loadGraph(source, label, { url = null, description = '' } = {}) {
  state.graph = { source, label, url, description };
  showSource(label);
  $('plan-button').disabled = false;
  return runPlan();
}

async function loadFromUrl(url, label, description = '') {
  if (state.busy) cancelPlan({ quiet: true });
  const runId = ++state.runId;
  setStatus(`fetching ${label}…`, true);
  let response;
  try {
    response = await fetch(url);
    if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`);
    const blob = await response.blob();
    if (runId !== state.runId) return;
    await loadGraph(blob, label, { url, description });
  } catch (e) {
    if (runId !== state.runId) return;
    showError(`${label}: cannot fetch (${e.message})`);
  }
}

// A measurement opened where a graph was expected (the file button, a
// drop): its head says so (a pickle's first byte, a measured file's format,
// a trace's events, a python/dist rank file's profile).
async function isMeasurement(file) {
  const head = new Uint8Array(await file.slice(0, 4096).arrayBuffer());
  if (head[0] === 0x80 || (head[0] === 0x1f && head[1] === 0x8b)) return true;
  const text = new TextDecoder().decode(head);
  return /"format"\s*:\s*"schedmeasured\/1"/.test(text) || /^\s*(\{\s*)?"traceEvents"/.test(text) || /^\s*\[\s*\{\s*"(ph|name|cat|ts)"/.test(text)
    || (/"rank"\s*:/.test(text) && /"schedule"\s*:/.test(text));
}

async function loadFile(file) {
  if (!file) return;
  if (await isMeasurement(file)) {
    openMeasurements([file]);
    return;
  }
  // The worker reads the file: a big one never passes through this thread.
  loadGraph(file, file.name);
}

// The example menu: each entry has a line saying what it shows (under the
// menu as it is walked, and above the report once it is open) and may open
// with options (the FSDP example with Inductor's reordering passes on).
// Arrow keys walk the menu without opening each entry; Enter (or a pick
// with the pointer) opens it.
const examples = new Map();
async function setUpExamples() {
  const select = $('example-select');
  try {
    const response = await fetch('examples/index.json');
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    for (const ex of await response.json()) {
      examples.set(ex.file, ex);
      select.append(h('option', { value: ex.file, title: ex.description || '' }, ex.label));
    }
  } catch {
    select.title = 'no bundled examples (build the site with scripts/build-web.sh)';
  }
  let walking = false;
  const describe = (file) => {
    const ex = examples.get(file);
    $('example-description').textContent = ex && ex.description ? `${ex.label}: ${ex.description} (Enter opens it)` : '';
  };
  select.addEventListener('keydown', (e) => {
    if (['ArrowUp', 'ArrowDown', 'Home', 'End', 'PageUp', 'PageDown'].includes(e.key)) walking = true;
    if (e.key === 'Enter' && select.value) {
      e.preventDefault();
      walking = false;
      openExample(select.value);
    }
  });
  select.addEventListener('change', () => {
    if (!select.value) return;
    if (walking) {
      walking = false;
      describe(select.value);
      return;
    }
    openExample(select.value);
  });
}

function openExample(file) {
  const ex = examples.get(file) || { file };
  if (ex.params && state.panel) state.panel.applyUrl(new URLSearchParams(ex.params));
  $('example-description').textContent = '';
  return loadFromUrl(`examples/${file}`, file, ex.description);
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
    const files = [...e.dataTransfer.files];
    if (files.length > 1) openMeasurements(files);
    else loadFile(files[0]);
  });
  const measureInput = $('measure-input');
  $('measure-button').addEventListener('click', () => measureInput.click());
  measureInput.addEventListener('change', () => {
    const files = [...measureInput.files];
    measureInput.value = '';
    if (files.length) openMeasurements(files);
  });
  $('measured-clear').addEventListener('click', () => {
    state.measured = [];
    renderMeasuredCard();
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
  clearStale();
  $('notice-slot').replaceChildren();
  state.simulatedLanes = null;
  delete $('measured').dataset.ready;
  setBusy(true);
  setStatus(`starting: ${state.graph.label}`, true);
  delete $('status').dataset.stages;
  try {
    const options = state.panel.options();
    state.plannedOptions = JSON.stringify(options);
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

// ---- measurements -------------------------------------------------------------------

// Reads measurements in the page and puts them beside the plan on screen. A
// file that is none of what measured.js reads gets one line naming it and
// what was expected; the report stays as it was.
// A file's bytes, gunzipped when gzip (python/dist keeps the raw profile as
// profile.rank0.json.gz).
async function fileBytes(file) {
  const head = new Uint8Array(await file.slice(0, 2).arrayBuffer());
  if (head[0] !== 0x1f || head[1] !== 0x8b) return new Uint8Array(await file.arrayBuffer());
  try {
    return new Uint8Array(await new Response(file.stream().pipeThrough(new DecompressionStream('gzip'))).arrayBuffer());
  } catch (e) {
    throw new Error(`${file.name}: not a valid gzip file (${e.message})`);
  }
}

async function openMeasurements(files) {
  const items = [];
  for (const file of files) {
    try {
      items.push(readMeasurement(await fileBytes(file), file.name));
    } catch (e) {
      showNotice(e.message);
      return;
    }
  }
  if (!state.result) {
    showNotice(`${files.map((f) => f.name).join(', ')}: a measurement; plan the graph it measured first (Open file… or an example), then open the measurement beside it`);
    return;
  }
  $('notice-slot').replaceChildren();
  // A new set of traces replaces the old ranks; other kinds replace their kind.
  const kinds = new Set(items.map((m) => (m.kind === 'rank' ? 'trace' : m.kind)));
  state.measured = [...state.measured.filter((m) => !kinds.has(m.kind === 'rank' ? 'trace' : m.kind)), ...items];
  renderMeasuredCard();
  $('measured-card').scrollIntoView({ block: 'start' });
}

async function renderMeasuredCard() {
  const result = state.result;
  const items = state.measured;
  $('measured-card').hidden = !items.length || !result;
  if (state.timeline) {
    const traces = items.filter((m) => m.kind === 'trace').sort((a, b) => a.rank - b.rank);
    state.timeline.setMeasured(traces.map((m) => ({ title: `measured rank ${m.rank} (${m.name}${stepNote(m)})`, data: m.lanes })));
    $('timeline').dataset.measuredRanks = traces.map((m) => m.rank).join(',');
  }
  if (!items.length || !result) return;
  const runId = state.runId;
  const plan = result.plan;
  const needsNodes = items.some((m) => m.kind === 'measured');
  const needsLanes = items.some((m) => m.kind === 'trace' || m.kind === 'rank');
  // A snapshot records the graph as compiled, so it is set beside memory as
  // executed over the order the compiled call runs in, not the plan's.
  const needsBuffers = items.some((m) => m.kind === 'snapshot');
  renderMeasured($('measured'), { plan, items, nodeTimes: null, simulated: null, executed: null });
  try {
    const [nodeTimes, lanes, executed] = await Promise.all([
      needsNodes ? state.planner.nodeTimes() : null,
      needsLanes ? (state.simulatedLanes || state.planner.timeline(false).then((t) => t.after)) : null,
      needsBuffers ? state.planner.executedAsRun() : null]);
    if (runId !== state.runId || items !== state.measured) return;
    if (lanes) state.simulatedLanes = lanes;
    const simulated = lanes ? breakdown(lanes.lane.map((lane, i) => ({ lane, ts: lanes.ts[i], dur: lanes.dur[i] }))) : null;
    renderMeasured($('measured'), { plan: state.result.plan, items, nodeTimes, simulated, executed });
    $('measured').dataset.ready = '1';
  } catch (e) {
    if (runId === state.runId) showNotice(`measurement: ${e.message}`);
  }
}

// ---- stale reports ----------------------------------------------------------------

// The options the report was planned with; a report whose options differ
// from the panel's says so, with a button to plan again.
function markStale() {
  if (!state.result || state.busy) return;
  const now = JSON.stringify(state.panel.options());
  const stale = now !== state.plannedOptions;
  $('report').classList.toggle('stale', stale);
  $('stale-slot').replaceChildren(stale
    ? h('div', { class: 'stale-banner', 'data-testid': 'stale' },
      h('span', {}, 'Options changed since this plan: the report below is for the previous options.'),
      h('button', { type: 'button', class: 'primary', onclick: () => runPlan() }, 'Plan again'))
    : '');
  if (stale) setStatus('options changed since this plan: Plan again to update the report');
}

function clearStale() {
  $('report').classList.remove('stale');
  $('stale-slot').replaceChildren();
}

// ---- errors -----------------------------------------------------------------------

// A message that leaves the report as it is (a bad profile file).
function showNotice(message) {
  $('notice-slot').replaceChildren(
    h('div', { class: 'error', role: 'alert', 'data-testid': 'notice' },
      h('pre', {}, message),
      h('button', { type: 'button', onclick: () => $('notice-slot').replaceChildren() }, 'Dismiss')));
}


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
  // What only the overview has (the page's views of the planned graph).
  plan.data_dependent = result.plan.data_dependent;
  result.plan = plan;
  renderTimelineCard(result);
  if (state.measured.length) renderMeasuredCard();
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
  const runId = state.runId;
  renderCommTables($('comm-tables'), result.plan, []);
  if (result.plan.comm) {
    state.planner.passSteps().then((steps) => {
      if (runId === state.runId) renderCommTables($('comm-tables'), result.plan, steps);
    }, () => {});
  }
  state.planner.timeline(Boolean(result.plan.comm)).then(
    (data) => {
      if (runId !== state.runId) return;
      state.simulatedLanes = data.after;
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
      if (state.measured.some((m) => m.kind === 'trace')) renderMeasuredCard();
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
    state.graph && state.graph.description ? h('p', { class: 'example-line', 'data-testid': 'example-line' }, state.graph.description) : '',
    h('p', { class: 'headline', 'data-testid': 'headline' }, headline(plan, fin)),
    dataDependentFlag(plan),
    h('div', { class: 'stats' },
      stat(`Scheduler's peak: what Inductor decides by${plan.comm ? ' (final order, after comm passes)' : ' (final order)'}`, humanBytes(fin.peak_bytes),
        h('span', {},
          h('span', { 'data-testid': 'peak-bytes' }, String(fin.peak_bytes)), ' bytes at step ', fin.peak_step,
          fin.peak_node ? ` (${fin.peak_node})` : '', ` · ${percentChange(baseline.peak, fin.peak_bytes)} vs baseline`,
          methodPeak), 'stat-peak'),
      predictedStat(plan),
      deviceFitStat(plan),
      stat('Baseline peak', humanBytes(baseline.peak), `at step ${baseline.peak_step} (${result.baselinePeakNode || 'after the last node'})`),
      stat('Graph', plan.graph || '(unnamed)', graphDetail(summary, plan)),
      simulationStat(plan),
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

// Which peak the page leads with, said in one line: the scheduler's (the
// figure Inductor's decisions follow) and memory as executed (what the
// caching allocator really holds) are different numbers, both shown.
function headline(plan, fin) {
  const p = plan.predicted;
  const executed = p && p.peak_bytes !== undefined
    ? `; memory as executed (what the GPU allocates) ${humanBytes(p.peak_bytes)}, reserved ${humanBytes(p.reserved_bytes)}` : '';
  return `Scheduler's peak (what Inductor decides by) ${humanBytes(fin.peak_bytes)}${executed}.`;
}

// Sizes that depend on data: Inductor's planner counts them at its hint
// (usually 0), memory as executed at the observed or fallback size.
function dataDependentFlag(plan) {
  const d = plan.data_dependent;
  if (!d || !d.buffers) return '';
  return h('p', { class: 'flag', 'data-testid': 'data-dependent' },
    `⚠ ${d.buffers} data-dependent buffer sizes: the scheduler's peak counts them at Inductor's hint (${humanBytes(d.scheduler_bytes)} in all), `
    + `memory as executed and "will it fit" at ${humanBytes(d.hint_bytes)}: both figures depend on the data`);
}

// "Will it fit?" (schedplan/1 `device_fit`), when a device memory is set.
function deviceFitStat(plan) {
  const f = plan.device_fit;
  if (!f) return '';
  const { verdict, margin } = fitWords(f);
  // The need: the smallest cap the caching allocator runs the step under
  // (with what it holds beside the step), plus what lives outside it.
  const low = f.allocator_need_low_bytes !== undefined && humanBytes(f.allocator_need_low_bytes) !== humanBytes(f.allocator_need_bytes)
    ? ` (${humanBytes(f.allocator_need_low_bytes)} if kernel workspaces shrink)` : '';
  const parts = [`need ${humanBytes(f.need_bytes)} = caching allocator ${humanBytes(f.allocator_need_bytes)}${low}`,
    ...f.fixed.filter((c) => c.bytes && !c.in_allocator).map((c) => `${c.name.replace(/_/g, ' ')} ${humanBytes(c.bytes)}`)];
  const value = h('span', { class: `fit-${f.verdict}` }, `${verdict} · ${margin}`);
  const detail = h('span', {}, `${parts.join(' + ')} · uncapped reserved peak ${humanBytes(f.reserved_peak_bytes)} · `
    + `stated margin ±${humanBytes(f.uncertainty_bytes)} on ${humanBytes(f.device_bytes)}`,
    f.data_dependent_buffers ? ` · depends on ${f.data_dependent_buffers} data-dependent sizes` : '',
    h('ul', { class: 'fit-costs' }, f.fixed.map((c) => h('li', {}, `${c.name}: ${humanBytes(c.bytes)} (${c.source})`))));
  const el = stat(`Will it fit in ${humanBytes(f.device_bytes)}?`, '', detail, 'device-fit');
  el.querySelector('.stat-value').replaceChildren(value);
  el.dataset.verdict = f.verdict;
  return el;
}

// Memory as executed (schedplan/1 `predicted`), with its source named.
function predictedStat(plan) {
  const p = plan.predicted;
  if (!p) return '';
  const parts = [];
  if (p.reserved_bytes !== undefined) parts.push(`reserved ${humanBytes(p.reserved_bytes)}`);
  if (p.kernel_time_us !== undefined) parts.push(`kernel time ${formatUs(p.kernel_time_us)}`);
  if (p.wall_time_us !== undefined) parts.push(`wall ${formatUs(p.wall_time_us)}`);
  if (p.wall_time_us_cudagraphs !== undefined) parts.push(`with CUDA graphs ${formatUs(p.wall_time_us_cudagraphs)}`);
  parts.push(`source: ${p.runtime_source || 'unknown'} on ${p.hardware || plan.options.hardware}`);
  const el = stat('Memory as executed: what the GPU allocates', p.peak_bytes !== undefined ? humanBytes(p.peak_bytes) : '—', parts.join(' · '), 'predicted');
  el.classList.add('peak-pair');
  return el;
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
    h('div', { class: 'live-head', 'data-testid': 'live-total', 'data-step': step, 'data-bytes': total },
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
  // The skip link: straight to the memory chart (a slider: arrows step it),
  // past the loaders and the options; without a report, to "Open file…".
  document.querySelector('.skip-link').addEventListener('click', (e) => {
    e.preventDefault();
    const plot = document.querySelector('#memory-chart .chart-plot');
    const target = plot && !$('report').hidden ? plot : $('open-button');
    target.focus();
    target.scrollIntoView({ block: 'center' });
  });
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
  const examplesLoaded = setUpExamples();
  let caps;
  try {
    caps = await state.planner.capabilities();
  } catch (e) {
    showError(`cannot start the planner: ${e.message}`);
    return;
  }
  state.panel = new OptionsPanel(caps, () => state.graph && runPlan(), {
    checkOptions: (options) => state.planner.checkOptions(options),
    onProfileError: (message) => showNotice(message),
  });
  // Options changed after a plan: the report is marked stale until planned again.
  const options = document.querySelector('.options');
  options.addEventListener('change', (e) => { if (e.target.id !== 'profile-input') markStale(); });
  options.addEventListener('click', (e) => { if (e.target.closest('.move')) markStale(); });
  await examplesLoaded;
  const params = new URLSearchParams(location.search);
  const problems = state.panel.applyUrl(params);
  if (problems.length) {
    showError(`page URL: ${problems.join('; ')}`);
    return;
  }
  if (params.has('step')) state.initialStep = Number(params.get('step'));
  const graphUrl = params.get('graph');
  if (graphUrl) {
    await loadFromUrl(graphUrl, graphUrl.split('/').pop(), (examples.get(graphUrl.replace(/^examples\//, '')) || {}).description);
  } else if (!params.has('example') || params.get('example') !== 'none') {
    // A first visit opens an example that shows a real saving (?example=none: none).
    const first = params.get('example') || [...examples.values()].find((ex) => ex.default)?.file;
    if (first && examples.has(first)) await openExample(first);
    else if (first) showError(`page URL: example: unknown example "${first}"`);
  }
}

main();
