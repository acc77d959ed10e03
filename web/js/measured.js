// What users measured, read in the page (no server) to put beside the
// prediction:
//   - schedmeasured/1 files (`python -m schedlab_export --measure`): kernels
//     per node, peak allocated and reserved memory, wall and kernel time;
//   - Chrome traces: the measured traces python/dist writes (compute, comm
//     and exposed lanes named after the graph's nodes, one file per rank) and
//     raw torch.profiler traces (kernels on CUDA streams, NCCL kernels as
//     communication);
//   - python/dist's per-rank results (rankN.json: the step's profile);
//   - torch.cuda.memory._snapshot() pickles (segments, device_traces): the
//     allocated and reserved curves, replayed from the trace backwards from
//     the segments' final state, as memory_viz does.
// readMeasurement() names what it expected when a file is none of these.
// breakdown() is the one HTA-style breakdown both sides go through: the
// simulated trace's lanes and the measured ones.
import { unpickle } from './pickle.js';

const EXPECTED = 'expected a schedmeasured/1 file, a Chrome trace ("traceEvents"), a python/dist rank JSON or a torch.cuda.memory._snapshot() pickle';

export class MeasuredError extends Error {}

function fail(name, why) {
  throw new MeasuredError(`${name}: ${why}`);
}

// bytes: Uint8Array of the file. -> {kind: 'measured' | 'trace' | 'rank' | 'snapshot', name, ...}
export function readMeasurement(bytes, name) {
  if (!bytes.length) fail(name, `empty file: ${EXPECTED}`);
  if (bytes[0] === 0x80) {
    let snapshot;
    try {
      snapshot = unpickle(bytes);
    } catch (e) {
      fail(name, `${e.message}: ${EXPECTED}`);
    }
    return readSnapshot(snapshot, name);
  }
  let doc;
  try {
    doc = JSON.parse(new TextDecoder('utf-8').decode(bytes));
  } catch (e) {
    fail(name, `not JSON and not a pickle (${e.message}): ${EXPECTED}`);
  }
  if (Array.isArray(doc)) return readTrace({ traceEvents: doc }, name);
  if (!doc || typeof doc !== 'object') fail(name, EXPECTED);
  if (doc.format === 'schedmeasured/1') return readMeasured(doc, name);
  if (doc.format === 'schedgraph/1') fail(name, 'this is a graph (schedgraph/1): open it with "Open file…"; ' + EXPECTED);
  if (doc.format !== undefined) fail(name, `format "${doc.format}": ${EXPECTED}`);
  if (Array.isArray(doc.traceEvents)) return readTrace(doc, name);
  if (doc.step !== undefined && doc.rank !== undefined && doc.profile) return readRank(doc, name);
  fail(name, `no "format", "traceEvents" or "profile": ${EXPECTED}`);
  return null;
}

function num(v, name, field) {
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(name, `${field}: expected a number`);
  return v;
}

function readMeasured(doc, name) {
  const memory = doc.memory && typeof doc.memory === 'object' ? doc.memory : fail(name, 'memory: expected an object (schedmeasured/1: peak_allocated_bytes, peak_reserved_bytes)');
  const kernels = Array.isArray(doc.kernels) ? doc.kernels : fail(name, 'kernels: expected an array (schedmeasured/1)');
  const perNode = new Map();
  const perClass = new Map();
  kernels.forEach((k, i) => {
    const us = num(k.duration_us, name, `kernels[${i}].duration_us`);
    if (k.node) perNode.set(k.node, (perNode.get(k.node) || 0) + us);
    perClass.set(k.class || 'unknown', (perClass.get(k.class || 'unknown') || 0) + us);
  });
  return {
    kind: 'measured', name, graph: doc.graph || '', device: (doc.env && (doc.env.device_kind || doc.env.device)) || '',
    peakAllocated: num(memory.peak_allocated_bytes, name, 'memory.peak_allocated_bytes'),
    peakReserved: num(memory.peak_reserved_bytes, name, 'memory.peak_reserved_bytes'),
    kernelTimeUs: num(doc.kernel_time_us, name, 'kernel_time_us'),
    wallTimeUs: typeof doc.wall_time_us === 'number' ? doc.wall_time_us : null,
    wallCudagraphsUs: typeof doc.wall_time_us_cudagraphs === 'number' ? doc.wall_time_us_cudagraphs : null,
    perNode, perClass,
  };
}

// A kernel name's class, for traces (measured files name it themselves),
// by the name rules of python/schedlab_export/measure.py's kernel class,
// so both sides of the class tables share names (nvjet: cuBLAS's Hopper GEMMs).
const TRITON_CLASSES = { poi: 'triton_pointwise', red: 'triton_reduction', per: 'triton_persistent_reduction', tem: 'triton_template', for: 'triton_pointwise' };
export function kernelClass(kernel) {
  const k = kernel.toLowerCase();
  if (k.startsWith('nccl')) return 'collective';
  if (k.startsWith('triton_')) return TRITON_CLASSES[k.split('_')[1]] || 'triton_pointwise';
  if (k.startsWith('memcpy') || k.startsWith('memset')) return 'copy';
  if (/gemm|nvjet|xmma|cublas|matmul/.test(k) || (k.includes('cutlass') && !k.includes('conv'))) return 'gemm';
  if (/flash|fmha|attention|sdpa/.test(k)) return 'attention';
  if (/conv|wgrad|dgrad/.test(k)) return 'convolution';
  return 'other';
}

// Lanes as the timeline draws them (the worker's flat format) from slices
// [{name, kernel, lane: 0 compute | 1 comm | 2 exposed, ts, dur, exposed_us}].
function flatLanes(slices) {
  const out = { name: [], kernel: [], lane: [], ts: [], dur: [], flows: [], exposed: {} };
  for (const s of slices) {
    out.name.push(s.name);
    out.kernel.push(s.kernel || '');
    out.lane.push(s.lane);
    out.ts.push(s.ts);
    out.dur.push(s.dur);
    if (s.lane === 1) out.exposed[s.name] = s.exposed_us || 0;
  }
  return out;
}

function readTrace(doc, name) {
  const events = doc.traceEvents;
  const slices = [];
  const other = doc.otherData || {};
  const lanes = { compute: 0, comm: 1, exposed: 2 };
  let stepsProfiled = 1;
  let stepShown = 0;
  const measuredLanes = events.some((e) => e && e.ph === 'X' && (e.cat === 'compute' || e.cat === 'comm'));
  if (measuredLanes) {
    // python/dist's measured trace (or schedlab's own simulated one).
    for (const e of events) {
      if (!e || e.ph !== 'X' || !(e.cat in lanes)) continue;
      slices.push({ name: String(e.name), kernel: (e.args && e.args.kernel) || '', lane: lanes[e.cat], ts: Number(e.ts), dur: Number(e.dur) || 0,
        exposed_us: e.args && e.args.exposed_us });
    }
  } else {
    // torch.profiler: GPU kernels on streams; NCCL kernels are communication.
    const raw = rawSteps(events);
    if (!raw.steps.length) fail(name, `a Chrome trace without GPU kernels (no "kernel" events, no compute/comm lanes): ${EXPECTED}`);
    stepsProfiled = raw.steps.length;
    stepShown = raw.shown;
    slices.push(...raw.steps[raw.shown]);
    // The exposed parts of each NCCL kernel: where no compute kernel runs
    // (python/dist/trace_analysis.py's rule).
    const origin = Math.min(...slices.map((s) => s.ts));
    for (const s of slices) s.ts -= origin;
    const compute = mergeIntervals(slices.filter((s) => s.lane === 0).map((s) => [s.ts, s.ts + s.dur]));
    for (const s of slices.filter((x) => x.lane === 1)) {
      const gaps = uncovered(s.ts, s.ts + s.dur, compute);
      s.exposed_us = gaps.reduce((a, [x, y]) => a + y - x, 0);
      for (const [x, y] of gaps) slices.push({ name: `exposed ${s.name}`, kernel: '', lane: 2, ts: x, dur: y - x });
    }
  }
  if (!slices.length) fail(name, `a Chrome trace without slices: ${EXPECTED}`);
  const rank = other.rank !== undefined ? other.rank : rankFromName(name);
  const perClass = new Map();
  for (const s of slices) {
    if (s.lane === 2) continue;
    const c = s.lane === 1 ? 'collective' : kernelClass(s.kernel || s.name);
    perClass.set(c, (perClass.get(c) || 0) + s.dur);
  }
  return { kind: 'trace', name, rank, lanes: flatLanes(slices), slices, perClass, breakdown: breakdown(slices), generator: other.generator || (measuredLanes ? 'lanes' : 'torch.profiler'),
    stepsProfiled, stepShown };
}

// A raw torch.profiler trace's GPU kernels split into the steps it profiled,
// as python/dist/trace_analysis.py split_steps does: by the CPU time of each
// kernel's launch within the `schedlab_step` annotations when the trace has
// both (torch.profiler's `ProfilerStep#N` where there is no `schedlab_step`),
// else at idle gaps over 1 ms (a runner sleeps between profiled steps).
// The C++ twin: core/io/trace_reader.cpp (`plan --measured-trace`). -> {steps: [[slice]], shown: the step of the median span (the one
// the page puts beside the simulated step)}.
const STEP_MARK = 'schedlab_step';
const PROFILER_STEP_MARK = 'ProfilerStep#';
const STEP_GAP_US = 1000;
function rawSteps(events) {
  const kernels = [];
  const launchedAt = new Map();
  const marks = [];
  const profilerMarks = [];
  for (const e of events) {
    if (!e || e.ph !== 'X') continue;
    const args = e.args || {};
    if (['kernel', 'gpu_memcpy', 'gpu_memset'].includes(e.cat)) {
      const kernel = String(e.name || '?');
      kernels.push({ name: kernel, kernel, lane: kernel.toLowerCase().startsWith('nccl') ? 1 : 0, ts: Number(e.ts), dur: Number(e.dur) || 0,
        correlation: args.correlation });
    } else if ((e.cat === 'cuda_runtime' || e.cat === 'cuda_driver') && args.correlation !== undefined) {
      launchedAt.set(args.correlation, Number(e.ts));
    } else if (e.cat === 'user_annotation' && String(e.name || '').startsWith(STEP_MARK)) {
      marks.push([Number(e.ts), Number(e.ts) + (Number(e.dur) || 0)]);
    } else if ((e.cat === 'user_annotation' || e.cat === 'cpu_op') && String(e.name || '').startsWith(PROFILER_STEP_MARK)) {
      profilerMarks.push([Number(e.ts), Number(e.ts) + (Number(e.dur) || 0)]);
    }
  }
  if (!marks.length) marks.push(...profilerMarks);  // torch.profiler's own step marks where the runner set none
  kernels.sort((a, b) => a.ts - b.ts || a.ts + a.dur - (b.ts + b.dur));
  marks.sort((a, b) => a[0] - b[0]);
  let steps = [];
  const launch = (k) => (k.correlation === undefined ? undefined : launchedAt.get(k.correlation));
  if (marks.length && kernels.some((k) => launch(k) !== undefined)) {
    steps = marks.map(([a, b]) => kernels.filter((k) => launch(k) !== undefined && a <= launch(k) && launch(k) <= b)).filter((g) => g.length);
  } else {
    let lastEnd = null;
    for (const k of kernels) {
      if (lastEnd === null || k.ts - lastEnd > STEP_GAP_US) steps.push([]);
      steps[steps.length - 1].push(k);
      lastEnd = lastEnd === null ? k.ts + k.dur : Math.max(lastEnd, k.ts + k.dur);
    }
  }
  const span = (g) => Math.max(...g.map((k) => k.ts + k.dur)) - Math.min(...g.map((k) => k.ts));
  const bySpan = steps.map((g, i) => [span(g), i]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const shown = bySpan.length ? bySpan[(bySpan.length - 1) >> 1][1] : 0;
  return { steps: steps.map((g) => g.map(({ correlation: _, ...k }) => k)), shown };
}

function rankFromName(name) {
  const m = /rank[_-]?(\d+)/i.exec(name);
  return m ? Number(m[1]) : 0;
}

function readRank(doc, name) {
  const p = doc.profile;
  return { kind: 'rank', name, rank: doc.rank, step: doc.step, schedule: doc.schedule,
    stepUs: doc.step_us && doc.step_us.median, spanUs: p.span_us, computeBusyUs: p.compute_busy_us, commBusyUs: p.comm_busy_us,
    exposedCommUs: p.exposed_comm_us, collectives: p.collectives || [], memory: doc.memory || {} };
}

// ---- intervals ----------------------------------------------------------------------

export function mergeIntervals(intervals) {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  const out = [];
  for (const [a, b] of sorted) {
    if (out.length && a <= out[out.length - 1][1]) out[out.length - 1][1] = Math.max(out[out.length - 1][1], b);
    else out.push([a, b]);
  }
  return out;
}

function uncovered(a, b, merged) {
  const out = [];
  let cursor = a;
  for (const [s, e] of merged) {
    if (e <= cursor) continue;
    if (s >= b) break;
    if (s > cursor) out.push([cursor, Math.min(s, b)]);
    cursor = Math.max(cursor, e);
    if (cursor >= b) break;
  }
  if (cursor < b) out.push([cursor, b]);
  return out;
}

const total = (merged) => merged.reduce((a, [x, y]) => a + y - x, 0);

// Holistic Trace Analysis's temporal breakdown of one step, from its slices
// (compute lane 0, comm lane 1; exposed lane 2 is derived, not read):
// compute busy, comm busy, their overlap and its share of the comm time,
// exposed comm (comm while no compute runs), compute idle (the step less the
// compute: exposed comm plus idle) and idle: no kernel runs at all, the GPU
// waiting for the host to launch (host-bound time; in the simulation the
// host and launch gaps, in a measurement the same gaps as observed).
export function breakdown(slices) {
  const compute = mergeIntervals(slices.filter((s) => s.lane === 0 && s.dur > 0).map((s) => [s.ts, s.ts + s.dur]));
  const comm = mergeIntervals(slices.filter((s) => s.lane === 1 && s.dur > 0).map((s) => [s.ts, s.ts + s.dur]));
  const all = mergeIntervals([...compute, ...comm]);
  const start = all.length ? all[0][0] : 0;
  const end = all.length ? all[all.length - 1][1] : 0;
  const span = end - start;
  const computeUs = total(compute);
  const commUs = total(comm);
  const busy = total(all);
  const overlapUs = Math.max(0, computeUs + commUs - busy);  // rounding: never below 0
  return {
    spanUs: span, computeUs, commUs, overlapUs, exposedCommUs: commUs - overlapUs, idleUs: span - busy, hostBoundUs: span - busy,
    overlapPct: commUs > 0 ? (100 * overlapUs) / commUs : null,
    computeIdleUs: span - computeUs,
  };
}

// ---- memory snapshots -------------------------------------------------------------

function readSnapshot(s, name) {
  if (!s || typeof s !== 'object' || !Array.isArray(s.segments)) fail(name, `a pickle without "segments": ${EXPECTED}`);
  const traces = Array.isArray(s.device_traces) ? s.device_traces : [];
  let allocatedEnd = 0;
  let reservedEnd = 0;
  s.segments.forEach((seg, i) => {
    reservedEnd += num(Number(seg.total_size), name, `segments[${i}].total_size`);
    for (const b of seg.blocks || []) if (b.state === 'active_allocated') allocatedEnd += Number(b.size);
  });
  // The device with the most events (one GPU per process, usually device 0).
  let device = 0;
  traces.forEach((t, i) => { if ((t || []).length > (traces[device] || []).length) device = i; });
  const events = traces[device] || [];
  const allocDelta = new Float64Array(events.length);
  const reservedDelta = new Float64Array(events.length);
  events.forEach((e, i) => {
    const size = Number(e.size) || 0;
    switch (e.action) {
      case 'alloc': allocDelta[i] = size; break;
      case 'free_completed': allocDelta[i] = -size; break;
      case 'segment_alloc': case 'segment_map': reservedDelta[i] = size; break;
      case 'segment_free': case 'segment_unmap': reservedDelta[i] = -size; break;
      default: break;
    }
  });
  const sum = (a) => a.reduce((x, y) => x + y, 0);
  // The trace ends in the segments' state: start from there, backwards.
  let allocated = allocatedEnd - sum(allocDelta);
  let reserved = reservedEnd - sum(reservedDelta);
  const allocatedCurve = new Float64Array(events.length + 1);
  const reservedCurve = new Float64Array(events.length + 1);
  allocatedCurve[0] = allocated;
  reservedCurve[0] = reserved;
  events.forEach((e, i) => {
    allocated += allocDelta[i];
    reserved += reservedDelta[i];
    allocatedCurve[i + 1] = allocated;
    reservedCurve[i + 1] = reserved;
  });
  const max = (a) => a.reduce((x, y) => Math.max(x, y), 0);
  return { kind: 'snapshot', name, device, events: events.length, segments: s.segments.length,
    allocatedCurve, reservedCurve, peakAllocated: max(allocatedCurve), peakReserved: max(reservedCurve),
    ooms: events.filter((e) => e.action === 'oom').length, allocations: allocationsOf(events) };
}

// The trace's allocations in the order made: {size, alloc, free (event
// indices; free null while still allocated at the end), allocUs, freeUs
// (the events' time_us, null where the snapshot has none)}. A block's free
// is the next free_completed at its address.
function allocationsOf(events) {
  const out = [];
  const open = new Map();
  const time = (e) => (typeof e.time_us === 'number' ? e.time_us : null);
  events.forEach((e, i) => {
    if (e.action === 'alloc') {
      const a = { size: Number(e.size) || 0, alloc: i, free: null, allocUs: time(e), freeUs: null };
      open.set(e.addr, a);
      out.push(a);
    } else if (e.action === 'free_completed' && open.has(e.addr)) {
      const a = open.get(e.addr);
      open.delete(e.addr);
      a.free = i;
      a.freeUs = time(e);
    }
  });
  return out;
}

// ---- buffers against allocations ----------------------------------------------------

// The caching allocator rounds a request up to 512 bytes; a trace may hold
// either size.
const ROUND = 512;
const sameSize = (bytes, size) => bytes === size || Math.ceil(bytes / ROUND) * ROUND === size;
// The mapping's table is |buffers| × |allocations| bytes: past this, only
// the first buffers and allocations are tried (and the rest said so).
const MAX_CELLS = 4e6;

// Memory as executed's events (the worker's executedAsRun: [kind, buffer,
// node, step, bytes | donor]) as the allocations they make, in the order
// made: {buffers (the first allocates, the rest take its storage over in
// place or from the reuse pool), node, bytes, start, end (steps; end null
// while held to the end)}. A workspace (buffer "") is freed by the next
// workspace free.
export function predictedAllocations(events) {
  const out = [];
  const held = new Map();  // buffer -> its allocation
  const workspaces = [];
  for (const [kind, buffer, node, step, arg] of events) {
    if (kind === 'a') {
      const a = { buffers: buffer ? [buffer] : [], workspaceOf: buffer ? null : node, node, bytes: arg, start: step, end: null };
      out.push(a);
      if (buffer) held.set(buffer, a);
      else workspaces.push(a);
    } else if (kind === 'r') {
      const a = held.get(arg);
      if (!a) continue;
      held.delete(arg);
      a.buffers.push(buffer);
      held.set(buffer, a);
    } else {
      const a = buffer ? held.get(buffer) : workspaces.pop();
      if (!a) continue;
      held.delete(buffer);
      a.end = step;
    }
  }
  return out;
}

// Maps predicted allocations (predictedAllocations, in the order made) to
// a snapshot's allocations (readSnapshot), by size and order: the longest
// sequence of pairs in both orders whose sizes agree (a longest common
// subsequence, so one allocation either side lacks does not shift every
// later pair). A measured free is placed between steps: after the kernel
// of a step from the last mapped allocation before it up to the step
// before the next one's (steps: the order's length).
// -> {pairs: [{predicted, allocation, measuredStart, measuredEndFrom,
// measuredEndTo (null: still allocated at the end)}],
// unmappedPredicted, unmappedAllocations, notTried: {predicted, allocations}}.
export function mapSnapshotAllocations(predicted, allocations, steps) {
  let np = predicted.length;
  let na = allocations.length;
  while (np * na > MAX_CELLS) {
    if (np >= na) np = Math.floor(MAX_CELLS / na);
    else na = Math.floor(MAX_CELLS / np);
  }
  // lcs[i][j]: the longest mapping of predicted[i..] to allocations[j..].
  const w = na + 1;
  const lcs = new Uint32Array((np + 1) * w);
  for (let i = np - 1; i >= 0; i--) {
    for (let j = na - 1; j >= 0; j--) {
      lcs[i * w + j] = sameSize(predicted[i].bytes, allocations[j].size)
        ? lcs[(i + 1) * w + j + 1] + 1
        : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
    }
  }
  const pairs = [];
  const unmappedPredicted = [];
  const mappedAlloc = new Uint8Array(na);
  let i = 0;
  let j = 0;
  while (i < np && j < na) {
    if (sameSize(predicted[i].bytes, allocations[j].size)) {
      pairs.push({ predicted: predicted[i], allocation: allocations[j] });
      mappedAlloc[j] = 1;
      i += 1;
      j += 1;
    } else if (lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
      unmappedPredicted.push(predicted[i]);
      i += 1;
    } else {
      j += 1;
    }
  }
  for (; i < np; i++) unmappedPredicted.push(predicted[i]);
  const unmappedAllocations = allocations.slice(0, na).filter((_, k) => !mappedAlloc[k]);
  // A free after the allocations of step a and before those of step b
  // came after one of the kernels of steps a .. b-1 (a node that allocates
  // nothing leaves more than one).
  const anchors = pairs.map((p) => [p.allocation.alloc, p.predicted.start]);
  const stepsAround = (event) => {
    let lo = 0;
    let hi = anchors.length - 1;
    let last = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (anchors[mid][0] <= event) {
        last = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    const from = last < 0 ? 0 : anchors[last][1];
    let next = last + 1;
    while (next < anchors.length && anchors[next][1] <= from) next += 1;
    return [from, next < anchors.length ? anchors[next][1] - 1 : steps - 1];
  };
  for (const p of pairs) {
    p.measuredStart = p.predicted.start;
    [p.measuredEndFrom, p.measuredEndTo] = p.allocation.free === null ? [null, null] : stepsAround(p.allocation.free);
  }
  return { pairs, unmappedPredicted, unmappedAllocations, anchors,
    notTried: { predicted: predicted.length - np, allocations: allocations.length - na } };
}

// Both sides per step of the order that ran, above what was allocated when
// the call began: memory as executed's allocated bytes (its events:
// allocations, workspaces included, less frees) and the snapshot's
// allocated and reserved bytes, each event placed at the step of the last
// mapped allocation at or before it (map: mapSnapshotAllocations). Each
// step holds the most its events reached (a step without events keeps the
// level before it). -> {predicted, allocated, reserved}: Float64Arrays of
// `steps` values.
export function perStepCurves(events, steps, snapshot, map) {
  // [[step, level after the event]] in event order -> the most per step.
  const perStep = (points) => {
    const out = new Float64Array(steps);
    let at = 0;
    let level = 0;
    for (const [step, value] of points) {
      for (; at < step; at++) out[at + 1] = level;
      level = value;
      out[step] = Math.max(out[step], value);
    }
    for (; at + 1 < steps; at++) out[at + 1] = level;
    return out;
  };
  let level = 0;
  const predicted = perStep(events.map(([kind, , , step, bytes]) => {
    if (kind === 'a') level += bytes;
    else if (kind === 'f') level -= bytes;
    return [step, level];
  }));
  const stepOfEvent = [];
  for (let e = 0, k = 0, step = 0; e + 1 < snapshot.allocatedCurve.length; e++) {
    while (k < map.anchors.length && map.anchors[k][0] <= e) step = map.anchors[k++][1];
    stepOfEvent.push(step);
  }
  const measured = (curve) => perStep(stepOfEvent.map((step, e) => [step, curve[e + 1] - curve[0]]));
  return { predicted, allocated: measured(snapshot.allocatedCurve), reserved: measured(snapshot.reservedCurve) };
}
