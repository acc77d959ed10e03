// The "Measured beside predicted" card: each opened measurement (measured.js)
// against the plan on screen, every figure with its difference:
//   - a schedmeasured/1 file: peak allocated and reserved memory, kernel and
//     wall time, then per node predicted against measured kernel time, and
//     kernel time by class on each side;
//   - Chrome traces and python/dist rank files (one per rank): the HTA-style
//     breakdown of the simulated step and of each rank side by side, and per
//     collective the predicted against the measured exposed time;
//   - a memory snapshot: the measured allocated and reserved curves with the
//     predicted peaks drawn over them, and per buffer the predicted against
//     the measured lifetime and size (measured.js mapSnapshotAllocations), with
//     what could not be mapped.
import { formatUs, h, humanBytes } from './format.js';
import { mapSnapshotAllocations, perStepCurves, predictedAllocations } from './measured.js';
import { MemoryChart } from './memory-chart.js';

const ROWS_SHOWN = 40;

function diffPct(predicted, measured) {
  if (predicted === null || predicted === undefined || measured === null || measured === undefined) return '—';
  if (!measured) return predicted ? '+∞' : '±0%';
  const p = ((predicted - measured) / measured) * 100;
  if (Math.abs(p) < 0.05) return '±0%';
  return `${p > 0 ? '+' : '−'}${Math.abs(p).toFixed(1)}%`;
}

// full: all rows in view (the breakdown's few metrics), else a short scroller.
function table(testid, head, rows, caption, { full = false } = {}) {
  return h('div', { class: full ? 'table-scroll' : 'table-scroll short' },
    h('table', { 'data-testid': testid },
      caption ? h('caption', { class: 'muted' }, caption) : '',
      h('thead', {}, h('tr', {}, head.map((c, i) => h('th', { class: i ? 'num' : '' }, c)))),
      h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c, i) => h('td', { class: i ? 'num' : 'name' }, c)))))));
}

function compareRow(label, predicted, measured, fmt) {
  return [label, predicted === null || predicted === undefined ? '—' : fmt(predicted), measured === null || measured === undefined ? '—' : fmt(measured),
    predicted === null || predicted === undefined || measured === null || measured === undefined ? '—' : fmt(predicted - measured), diffPct(predicted, measured)];
}

function measuredFile(m, plan, nodeTimes) {
  const p = plan.predicted || {};
  const totals = [
    compareRow('peak allocated (memory as executed)', p.peak_bytes, m.peakAllocated, humanBytes),
    compareRow('peak reserved', p.reserved_bytes, m.peakReserved, humanBytes),
    compareRow('kernel time', p.kernel_time_us, m.kernelTimeUs, formatUs),
    compareRow('wall time (default mode)', p.wall_time_us, m.wallTimeUs, formatUs),
    compareRow('wall time (CUDA graphs)', p.wall_time_us_cudagraphs, m.wallCudagraphsUs, formatUs),
  ];
  const parts = [
    h('h3', {}, `${m.name}${m.device ? ` · measured on ${m.device}` : ''} · predicted on ${p.hardware || plan.options.hardware}`),
    m.graph && plan.graph && m.graph !== plan.graph
      ? h('p', { class: 'flag', 'data-testid': 'measured-mismatch' }, `measured graph "${m.graph}", planned graph "${plan.graph}": the figures may not belong together`) : '',
    table('measured-totals', ['figure', 'predicted', 'measured', 'difference', 'predicted vs measured'], totals),
  ];
  if (nodeTimes) {
    const rows = [];
    nodeTimes.nodes.forEach((node, i) => {
      const measured = m.perNode.get(node);
      if (measured === undefined) return;
      rows.push({ node, predicted: nodeTimes.calibrated_us[i], measured });
    });
    rows.sort((a, b) => Math.abs(b.predicted - b.measured) - Math.abs(a.predicted - a.measured));
    parts.push(
      h('h4', {}, `Per node: predicted against measured kernel time (${rows.length} nodes with kernels, largest differences first)`),
      table('measured-nodes', ['node', 'predicted', 'measured', 'difference', 'predicted vs measured'],
        rows.slice(0, ROWS_SHOWN).map((r) => compareRow(r.node, r.predicted, r.measured, formatUs))),
      rows.length > ROWS_SHOWN ? h('p', { class: 'muted' }, `… ${rows.length - ROWS_SHOWN} more nodes`) : '');
  }
  parts.push(classTables(p.kernel_time_us_by_class, m.perClass));
  return parts;
}

function classTables(predictedByClass, measuredByClass) {
  const predicted = Object.entries(predictedByClass || {}).sort((a, b) => b[1] - a[1]);
  const measured = [...measuredByClass.entries()].sort((a, b) => b[1] - a[1]);
  return h('div', { class: 'class-tables' },
    table('class-predicted', ['kernel class (predicted)', 'time'], predicted.map(([c, us]) => [c, formatUs(us)])),
    table('class-measured', ['kernel class (measured)', 'time'], measured.map(([c, us]) => [c, formatUs(us)])));
}

// Which of a raw profile's steps is shown ('' for a one-step trace).
export const stepNote = (r) => (r.stepsProfiled > 1 ? ` · step ${r.stepShown + 1} of ${r.stepsProfiled} profiled (the median span)` : '');

// HTA's breakdown: the simulated step beside each measured rank.
function breakdownTable(simulated, sides) {
  const metrics = [
    ['step (first kernel to last)', (b) => formatUs(b.spanUs)],
    ['compute busy', (b) => formatUs(b.computeUs)],
    ['communication busy', (b) => formatUs(b.commUs)],
    ['overlap (comm under compute)', (b) => (b.overlapPct === null ? '—' : `${formatUs(b.overlapUs)} · ${b.overlapPct.toFixed(1)} %`)],
    ['exposed communication', (b) => formatUs(b.exposedCommUs)],
    ['compute idle', (b) => formatUs(b.computeIdleUs)],
    ['idle: GPU waits for the host (host-bound)', (b) => (b.hostBoundUs === null ? '—' : formatUs(b.hostBoundUs))],
  ];
  const all = [['simulated (final order)', simulated], ...sides];
  return table('breakdown', ['', ...all.map(([name]) => name)], metrics.map(([label, f]) => [label, ...all.map(([, b]) => (b ? f(b) : '—'))]), '', { full: true });
}

function rankBreakdown(r) {
  // python/dist's own summary of the profiled steps: no idle split.
  const overlap = r.commBusyUs - r.exposedCommUs;
  return { spanUs: r.spanUs, computeUs: r.computeBusyUs, commUs: r.commBusyUs, overlapUs: overlap,
    overlapPct: r.commBusyUs > 0 ? (100 * overlap) / r.commBusyUs : null, exposedCommUs: r.exposedCommUs,
    computeIdleUs: r.spanUs - r.computeBusyUs, idleUs: null, hostBoundUs: null };
}

function collectiveTable(plan, ranks) {
  const simulated = (plan.simulation && plan.simulation.collectives) || [];
  const measuredExposed = ranks.map((r) => {
    const byName = new Map();
    if (r.kind === 'trace') {
      for (const s of r.slices) if (s.lane === 1 && s.exposed_us !== undefined && !byName.has(s.name)) byName.set(s.name, s.exposed_us);
    } else {
      for (const c of r.collectives) if (c.name && !byName.has(c.name)) byName.set(c.name, c.exposed_us);
    }
    return byName;
  });
  const rows = simulated.map((c) => {
    const cells = [c.collective, formatUs(c.exposed_us)];
    for (const byName of measuredExposed) {
      const m = byName.get(c.collective);
      cells.push(m === undefined ? 'not in this file' : `${formatUs(m)} (${formatUs(c.exposed_us - m)}, ${diffPct(c.exposed_us, m)})`);
    }
    return cells;
  });
  return table('measured-collectives', ['collective', 'predicted exposed', ...ranks.map((r) => `rank ${r.rank}: measured (difference)`)], rows.slice(0, 200),
    'Per collective: predicted against measured exposed time (matched by the graph\'s node name)');
}

const steps = (a, b) => (a === b ? `step ${a}` : `steps ${a}–${b}`);

// Per buffer: memory as executed over the order the compiled call ran in
// (the worker's executedAsRun) against the snapshot's allocations.
function snapshotBuffers(s, executed) {
  if (!s.allocations.length) {
    return [h('p', { class: 'flag', 'data-testid': 'snapshot-no-trace' },
      `${s.name} holds no allocator trace (device_traces is empty), so no buffer can be set beside its allocation: record one with torch.cuda.memory._record_memory_history() before the call, as python/zoo/memory_snapshot.py does.`)];
  }
  const predicted = predictedAllocations(executed.events);
  const map = mapSnapshotAllocations(predicted, s.allocations, executed.steps);
  const label = (a) => (a.workspaceOf ? `workspace of ${a.workspaceOf}` : a.buffers.join(' → '));
  const rows = map.pairs.map((p) => {
    const b = p.predicted;
    const a = p.allocation;
    // Both start where the mapping put them; the ends differ by the
    // predicted end's distance from the steps the measured free fits.
    const measuredHeld = p.measuredEndFrom === null;
    const diff = b.end === null || measuredHeld ? (b.end === null && measuredHeld ? 0 : null)
      : b.end - Math.min(Math.max(b.end, p.measuredEndFrom), p.measuredEndTo);
    const us = !measuredHeld && a.freeUs !== null && a.allocUs !== null ? ` · ${formatUs(a.freeUs - a.allocUs)}` : '';
    const measuredEnd = p.measuredEndFrom === p.measuredEndTo ? `${p.measuredEndFrom}` : `${p.measuredEndFrom}…${p.measuredEndTo}`;
    return { b, diff, cells: [
      label(b), humanBytes(b.bytes), humanBytes(a.size), humanBytes(b.bytes - a.size),
      b.end === null ? `step ${b.start} to the end` : steps(b.start, b.end),
      measuredHeld ? `step ${p.measuredStart} to the end` : `${String(p.measuredStart) === measuredEnd ? `step ${measuredEnd}` : `steps ${p.measuredStart}–${measuredEnd}`}${us}`,
      diff === null ? 'one side held to the end' : diff === 0 ? '±0 steps' : `${diff > 0 ? '+' : '−'}${Math.abs(diff)} step${Math.abs(diff) === 1 ? '' : 's'}`,
    ] };
  });
  const weight = (r) => (r.diff === null ? Infinity : Math.abs(r.diff)) * r.b.bytes;
  rows.sort((x, y) => weight(y) - weight(x) || y.b.bytes - x.b.bytes);
  const same = rows.filter((r) => r.diff === 0).length;
  const listed = (items, f) => items.slice(0, 8).map(f).join(', ') + (items.length > 8 ? `, … ${items.length - 8} more` : '');
  const notMapped = [];
  if (map.unmappedPredicted.length) {
    notMapped.push(`${map.unmappedPredicted.length} predicted allocations with no measured one of their size in order (a size known only at run time, or an allocation the GPU did not make): ${listed(map.unmappedPredicted, (a) => `${label(a)} ${humanBytes(a.bytes)}`)}`);
  }
  if (map.unmappedAllocations.length) {
    notMapped.push(`${map.unmappedAllocations.length} measured allocations no predicted one explains (library workspaces, copies outside the graph): ${listed(map.unmappedAllocations, (a) => `${humanBytes(a.size)} at event ${a.alloc}`)}`);
  }
  if (map.notTried.predicted || map.notTried.allocations) {
    notMapped.push(`past the mapping's size limit, not tried: ${map.notTried.predicted} predicted, ${map.notTried.allocations} measured allocations`);
  }
  const curves = perStepCurves(executed.events, executed.steps, s, map);
  const stepBox = h('div', { class: 'chart', 'data-testid': 'snapshot-steps-chart' });
  const peakOf = (curve) => curve.reduce((best, v, i) => (v > best.peak ? { peak: v, peakStep: i } : best), { peak: 0, peakStep: 0 });
  const names = [];  // the node at each step that has events (the tooltip's)
  for (const [, , node, step] of executed.events) names[step] = node;
  requestAnimationFrame(() => {
    const chart = new MemoryChart(stepBox, { height: 220, stepLabel: (i) => names[i] || '' });
    chart.setSeries([
      { name: 'predicted (memory as executed)', curve: curves.predicted, ...peakOf(curves.predicted), className: 'kept' },
      { name: 'measured allocated', curve: curves.allocated, ...peakOf(curves.allocated), className: 'chosen' },
      { name: 'measured reserved', curve: curves.reserved, ...peakOf(curves.reserved), className: 'baseline' },
    ]);
    stepBox.dataset.predictedPeak = peakOf(curves.predicted).peak;
    stepBox.dataset.allocatedPeak = peakOf(curves.allocated).peak;
  });
  return [
    h('h4', {}, 'Per step of the order that ran: predicted against measured memory, above what was allocated when the call began'),
    h('p', { class: 'hint' }, 'Memory as executed\'s allocations (workspaces included) less its frees, and the snapshot\'s allocated and reserved bytes, each allocator event at the step of the last mapped allocation before it; each step shows the most it reached. Reserved: what the cache had to add (none when an earlier call left it warm).'),
    stepBox,
    h('h4', {}, `Per buffer: predicted against measured lifetime and size (${map.pairs.length} of ${predicted.length} predicted allocations mapped to ${map.pairs.length} of ${s.allocations.length} measured ones; ${same} with the predicted lifetime)`),
    h('p', { class: 'hint', 'data-testid': 'snapshot-mapping', 'data-mapped': map.pairs.length, 'data-predicted': predicted.length,
      'data-allocations': s.allocations.length, 'data-same-lifetime': same,
      'data-unmapped-predicted': map.unmappedPredicted.length, 'data-unmapped-allocations': map.unmappedAllocations.length },
    `Memory as executed over the order the compiled call runs in (Inductor's own, ${executed.steps} steps), allocation by allocation, matched to the snapshot's by size (exact, or rounded up to 512 bytes) and order. `
      + 'A → B: B takes A\'s storage over (in place or from the reuse pool). A measured free is placed after the kernel of a step between the mapped allocations around it (4…6: a node that allocates nothing leaves a range). Differences are predicted less measured.'),
    table('snapshot-buffers', ['buffer (→ reused by)', 'predicted size', 'measured size', 'difference', 'predicted lifetime', 'measured lifetime', 'difference'],
      rows.slice(0, ROWS_SHOWN).map((r) => r.cells)),
    rows.length > ROWS_SHOWN ? h('p', { class: 'muted' }, `… ${rows.length - ROWS_SHOWN} more allocations`) : '',
    notMapped.length ? h('ul', { class: 'flag', 'data-testid': 'snapshot-unmapped' }, notMapped.map((line) => h('li', {}, `Not mapped: ${line}`))) : '',
  ];
}

function snapshotView(s, plan, executed) {
  const p = plan.predicted || {};
  const box = h('div', { class: 'chart', 'data-testid': 'snapshot-chart' });
  const parts = [
    h('h3', {}, `${s.name} · torch.cuda.memory._snapshot(): ${s.events} allocator events, ${s.segments} segments${s.ooms ? `, ${s.ooms} out-of-memory events` : ''}`),
    table('snapshot-peaks', ['figure', 'predicted', 'measured', 'difference', 'predicted vs measured'], [
      compareRow('peak reserved (absolute)', p.reserved_bytes, s.peakReserved, humanBytes),
      compareRow('peak allocated (absolute; predicted: over what was live before the call, plus freeable inputs)', p.peak_bytes, s.peakAllocated, humanBytes),
    ]),
    h('p', { class: 'hint' }, 'Measured allocated and reserved memory per allocator event (the snapshot\'s device trace); the predicted peaks as lines.'),
    box,
    ...(executed ? snapshotBuffers(s, executed) : []),
  ];
  requestAnimationFrame(() => {
    const n = s.allocatedCurve.length;
    const flat = (v) => new Float64Array(n).fill(v || 0);
    const peakOf = (curve) => {
      let peak = 0;
      let at = 0;
      curve.forEach((v, i) => { if (v > peak) { peak = v; at = i; } });
      return { peak, peakStep: at };
    };
    const chart = new MemoryChart(box, { height: 220, unit: 'allocator event' });
    chart.setSeries([
      { name: 'measured reserved', curve: s.reservedCurve, ...peakOf(s.reservedCurve), className: 'baseline' },
      { name: 'measured allocated', curve: s.allocatedCurve, ...peakOf(s.allocatedCurve), className: 'chosen' },
      { name: 'predicted reserved peak', curve: flat(p.reserved_bytes), peak: p.reserved_bytes || 0, peakStep: 0, className: 'kept', flat: true },
    ]);
  });
  return parts;
}

// items: what readMeasurement returned, in the order opened. simulated: the
// breakdown of the plan's simulated lanes (or null while it loads).
// executed: memory as executed over the order the compiled call runs in
// (or null while it loads).
export function renderMeasured(container, { plan, items, nodeTimes, simulated, executed }) {
  const parts = [];
  for (const m of items.filter((x) => x.kind === 'measured')) parts.push(...measuredFile(m, plan, nodeTimes));
  const ranks = items.filter((x) => x.kind === 'trace' || x.kind === 'rank').sort((a, b) => a.rank - b.rank);
  if (ranks.length) {
    parts.push(
      h('h3', {}, `Step breakdown (Holistic Trace Analysis's): simulated against ${ranks.length} measured rank${ranks.length > 1 ? 's' : ''}`),
      breakdownTable(simulated, ranks.map((r) => [[`rank ${r.rank}: `, h('span', { class: 'file-name' }, r.name), stepNote(r)], r.kind === 'trace' ? r.breakdown : rankBreakdown(r)])),
      collectiveTable(plan, ranks));
    const traced = ranks.filter((r) => r.kind === 'trace' && r.perClass.size);
    if (traced.length) parts.push(classTables((plan.predicted || {}).kernel_time_us_by_class, traced[0].perClass));
  }
  for (const s of items.filter((x) => x.kind === 'snapshot')) parts.push(...snapshotView(s, plan, executed));
  container.replaceChildren(...parts);
}
