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
  const memory = doc.memory || fail(name, 'memory: missing (schedmeasured/1)');
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

// A kernel name's class, for raw profiler traces (measured files name it themselves).
export function kernelClass(kernel) {
  const k = kernel.toLowerCase();
  if (k.startsWith('nccl')) return 'collective';
  if (k.startsWith('triton_per') || k.startsWith('triton_red')) return 'triton_reduction';
  if (k.startsWith('triton')) return 'triton_pointwise';
  if (/gemm|cutlass|xmma|cublas|matmul|sm\d+_xmma/.test(k)) return 'gemm';
  if (/flash|fmha|attention|sdpa/.test(k)) return 'attention';
  if (/conv|cudnn|implicit_gemm|wgrad|dgrad/.test(k)) return 'convolution';
  if (/memcpy|memset|copy/.test(k)) return 'copy';
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
    for (const e of events) {
      if (!e || e.ph !== 'X' || !['kernel', 'gpu_memcpy', 'gpu_memset'].includes(e.cat)) continue;
      const kernel = String(e.name || '?');
      slices.push({ name: kernel, kernel, lane: kernel.toLowerCase().startsWith('nccl') ? 1 : 0, ts: Number(e.ts), dur: Number(e.dur) || 0 });
    }
    if (!slices.length) fail(name, `a Chrome trace without GPU kernels (no "kernel" events, no compute/comm lanes): ${EXPECTED}`);
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
  return { kind: 'trace', name, rank, lanes: flatLanes(slices), slices, perClass, breakdown: breakdown(slices), generator: other.generator || (measuredLanes ? 'lanes' : 'torch.profiler') };
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
    ooms: events.filter((e) => e.action === 'oom').length };
}
