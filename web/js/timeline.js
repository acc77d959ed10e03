// The compute / communication timeline of the two-stream simulation, drawn
// on a canvas from the worker's lanes (core's Chrome trace: "compute" and
// "comm" slices, "exposed" where compute waited for a collective). When comm
// passes ran, the order before them is stacked above the final one on the
// same time axis. A line runs from each collective to the node that waited
// on it.
//
// Zoom with the wheel, +/- or the buttons (around the pointer or the
// centre), pan by dragging or with the arrow keys, 0 resets. Slices wide
// enough carry their kernel's name (else the node's). A click selects a
// slice: its details show below and its flows are drawn; the search box
// finds a node or kernel by name. At scale (over FLOW_LIMIT flows in view)
// only the selected or marked slice's flows are drawn, so hundreds of
// collectives never paint a band over the compute lane.
import { formatUs, h, humanBytes, percentChange } from './format.js';
import { longestIncreasingRun } from './order-view.js';

const LANE_H = 24;
const LANES = ['compute', 'comm', 'exposed'];
const LANE_LABELS = { compute: 'compute', comm: 'comm', exposed: 'exposed comm' };
const LEFT = 104;
const AXIS_H = 24;
const GROUP_GAP = 22;
const FLOW_LIMIT = 60;
const MEMORY_H = 30;  // the memory lane: bytes live over time (the trace's counter track)

function niceStep(range, count) {
  const raw = range / count;
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  return [1, 2, 5, 10].map((m) => m * mag).find((v) => v >= raw);
}

// First index in the lane whose slice ends at or after t (slices sorted by start).
function firstEndingAfter(lane, t) {
  let lo = 0;
  let hi = lane.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (lane[mid].ts + lane[mid].dur < t) lo = mid + 1;
    else hi = mid;
  }
  return Math.max(0, lo - 64);  // slices overlap a little on the comm lane
}

function groupLanes(data) {
  const lanes = { compute: [], comm: [], exposed: [] };
  for (let i = 0; i < data.name.length; i++) {
    lanes[LANES[data.lane[i]]].push({ name: data.name[i], kernel: data.kernel[i], ts: data.ts[i], dur: data.dur[i] });
  }
  for (const l of Object.values(lanes)) l.sort((a, b) => a.ts - b.ts);
  const start = new Map();
  for (const e of lanes.compute) start.set(e.name, e.ts);
  for (const e of lanes.comm) start.set(e.name, e.ts);
  let end = 1;
  for (let i = 0; i < data.ts.length; i++) end = Math.max(end, data.ts[i] + data.dur[i]);
  return { lanes, flows: data.flows, exposed: data.exposed, memory: data.memory || null, start, end };
}

export class Timeline {
  // timeline: {after, before} from the worker (before: null without comm passes).
  constructor(container, timeline, { onHover = null } = {}) {
    this.container = container;
    this.onHover = onHover;
    this.groups = [];
    if (timeline.before) this.groups.push({ title: 'before comm passes', ...groupLanes(timeline.before) });
    this.groups.push({ title: timeline.before ? 'after comm passes (final order)' : 'final order', ...groupLanes(timeline.after) });
    this.end = Math.max(...this.groups.map((g) => g.end));
    this.view = [0, this.end];
    this.marked = null;
    const button = (label, title, onclick) => h('button', { type: 'button', title, 'aria-label': title, onclick }, label);
    this.canvas = h('canvas', { class: 'timeline-canvas', tabindex: 0, role: 'img', 'data-testid': 'timeline-canvas',
      'aria-label': 'timeline: + and - zoom, arrow keys pan, 0 resets' });
    this.tip = h('div', { class: 'chart-tip', hidden: true });
    this.box = h('div', { class: 'timeline-box' }, this.canvas, this.tip);
    this.selected = null;
    this.details = h('div', { class: 'timeline-details muted', 'data-testid': 'timeline-details' },
      'Click a slice for its details.');
    this.search = h('input', { type: 'search', placeholder: 'find a node or kernel', 'aria-label': 'find a node or kernel on the timeline',
      'data-testid': 'timeline-search' });
    this.search.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        this.find(this.search.value.trim());
      }
    });
    container.replaceChildren(
      h('div', { class: 'chart-toolbar' },
        button('−', 'zoom out', () => this.zoom(1.6)), button('+', 'zoom in', () => this.zoom(1 / 1.6)),
        button('reset', 'show the whole step', () => this.setView(0, this.end)), this.search),
      h('div', { class: 'chart-legend' },
        ...[['compute', 'compute kernel'], ['comm', 'collective'], ['exposed', 'compute waiting on a collective'], ['flow', 'collective → its wait']]
          .map(([cls, text]) => h('span', { class: `legend-item ${cls}` }, text))),
      this.box, this.details);
    this.canvas.addEventListener('click', (e) => {
      if (this.dragged) return;
      const hit = this.sliceAt(e);
      this.select(hit ? hit.slice.name : null, hit ? hit.group : null);
    });
    this.canvas.addEventListener('wheel', (e) => {
      e.preventDefault();
      this.zoom(e.deltaY > 0 ? 1.25 : 0.8, this.timeAt(e.clientX));
    }, { passive: false });
    this.canvas.addEventListener('pointerdown', (e) => {
      this.dragged = false;
      this.drag = { x: e.clientX, view: [...this.view] };
      this.canvas.setPointerCapture(e.pointerId);
    });
    this.canvas.addEventListener('pointermove', (e) => {
      if (this.drag) {
        const perPx = (this.drag.view[1] - this.drag.view[0]) / this.plotW;
        const dt = (e.clientX - this.drag.x) * perPx;
        if (Math.abs(e.clientX - this.drag.x) > 3) this.dragged = true;
        this.setView(this.drag.view[0] - dt, this.drag.view[1] - dt);
        return;
      }
      this.hover(e);
    });
    this.canvas.addEventListener('pointerup', () => { this.drag = null; });
    this.canvas.addEventListener('pointerleave', () => { this.tip.hidden = true; });
    this.canvas.addEventListener('keydown', (e) => {
      const span = this.view[1] - this.view[0];
      const keys = {
        '+': () => this.zoom(1 / 1.6), '=': () => this.zoom(1 / 1.6), '-': () => this.zoom(1.6), 0: () => this.setView(0, this.end),
        ArrowLeft: () => this.setView(this.view[0] - span / 8, this.view[1] - span / 8),
        ArrowRight: () => this.setView(this.view[0] + span / 8, this.view[1] + span / 8),
      };
      if (keys[e.key]) {
        e.preventDefault();
        keys[e.key]();
      }
    });
    this.resizeObserver = new ResizeObserver(() => this.draw());
    this.resizeObserver.observe(container);
  }

  get plotW() {
    return Math.max(10, this.width - LEFT - 12);
  }

  timeAt(clientX) {
    const box = this.canvas.getBoundingClientRect();
    return this.view[0] + ((clientX - box.left - LEFT) / this.plotW) * (this.view[1] - this.view[0]);
  }

  setView(t0, t1) {
    const span = Math.min(this.end, Math.max(this.end * 1e-6, 0.01, t1 - t0));
    const lo = Math.max(0, Math.min(this.end - span, t0));
    this.view = [lo, lo + span];
    this.draw();
  }

  zoom(factor, around = null) {
    const [t0, t1] = this.view;
    const c = around === null ? (t0 + t1) / 2 : around;
    this.setView(c - (c - t0) * factor, c - (c - t0) * factor + (t1 - t0) * factor);
  }

  // Measured lanes under the simulated ones, one group per rank (lanes in
  // the worker's flat format: measured.js readTrace); replaces earlier ones.
  setMeasured(list) {
    this.groups = this.groups.filter((g) => !g.measured);
    for (const { title, data } of list) this.groups.push({ title, measured: true, ...groupLanes(data) });
    this.end = Math.max(...this.groups.map((g) => g.end));
    this.container.dataset.measuredGroups = list.length;
    this.setView(0, this.end);
  }

  // Marks a node's start (hovering a step elsewhere); null clears.
  mark(name) {
    this.marked = name;
    this.draw();
  }

  // Zooms so that one node fills a good part of the view.
  zoomTo(name) {
    for (const g of this.groups) {
      const t = g.start.get(name);
      if (t !== undefined) {
        const e = [...g.lanes.compute, ...g.lanes.comm].find((x) => x.name === name);
        const span = Math.max(e ? e.dur * 8 : 0, this.end / 1000);
        this.setView(t - span / 2, t + span / 2);
        return;
      }
    }
  }

  groupTop(i) {
    return i * (GROUP_GAP + LANES.length * LANE_H + MEMORY_H) + GROUP_GAP;
  }

  // The slice under the pointer: {slice, group, lane} or null.
  sliceAt(e) {
    const box = this.canvas.getBoundingClientRect();
    const y = e.clientY - box.top;
    const t = this.timeAt(e.clientX);
    for (let g = 0; g < this.groups.length; g++) {
      const top = this.groupTop(g);
      const laneIdx = Math.floor((y - top) / LANE_H);
      if (laneIdx < 0 || laneIdx >= LANES.length) continue;
      const lane = this.groups[g].lanes[LANES[laneIdx]];
      const tol = (2 * (this.view[1] - this.view[0])) / this.plotW;
      for (let i = firstEndingAfter(lane, t - tol); i < lane.length && lane[i].ts <= t + tol; i++) {
        const s = lane[i];
        if (s.ts - tol <= t && t <= s.ts + s.dur + tol) return { slice: s, group: this.groups[g], lane: LANES[laneIdx] };
      }
    }
    return null;
  }

  // Selects a slice by node name (null clears): its details below the
  // canvas, its flows drawn.
  select(name, group = null) {
    this.selected = name;
    if (!name) {
      this.details.replaceChildren('Click a slice for its details.');
      this.draw();
      return;
    }
    const rows = [];
    for (const g of group ? [group] : this.groups) {
      for (const laneName of ['compute', 'comm']) {
        const s = g.lanes[laneName].find((x) => x.name === name);
        if (!s) continue;
        const waits = g.flows.filter((f) => f.from === name).map((f) => f.to);
        const waitsOn = g.flows.filter((f) => f.to === name).map((f) => f.from);
        rows.push(h('div', {}, h('strong', {}, `${g.title}: `), `${name} on ${laneName}`, s.kernel ? ` · kernel ${s.kernel}` : '',
          ` · starts ${formatUs(s.ts)} · runs ${formatUs(s.dur)}`,
          g.exposed[name] !== undefined ? ` · exposed ${formatUs(g.exposed[name])}` : '',
          waits.length ? ` · waited on by ${waits.join(', ')}` : '', waitsOn.length ? ` · waits on ${waitsOn.join(', ')}` : ''));
      }
    }
    this.details.replaceChildren(...(rows.length ? rows : [`${name}: not on the timeline`]));
    this.container.dataset.selected = name;
    if (this.onHover) this.onHover(name);
    this.draw();
  }

  // Finds the node named `query`, else the first slice whose node or
  // kernel name contains it.
  find(query) {
    if (!query) return false;
    const q = query.toLowerCase();
    const tests = [(x) => x.name.toLowerCase() === q, (x) => x.name.toLowerCase().includes(q) || (x.kernel || '').toLowerCase().includes(q)];
    for (const matches of tests) {
      for (const g of this.groups) {
        for (const laneName of ['compute', 'comm']) {
          const s = g.lanes[laneName].find(matches);
          if (s) {
            this.zoomTo(s.name);
            this.select(s.name, g);
            return true;
          }
        }
      }
    }
    this.details.replaceChildren(`no node or kernel matches "${query}"`);
    return false;
  }

  hover(e) {
    const hit = this.sliceAt(e);
    if (!hit) {
      this.tip.hidden = true;
      return;
    }
    const box = this.canvas.getBoundingClientRect();
    const s = hit.slice;
    const exposed = hit.group.exposed[s.name];
    this.tip.replaceChildren(
      h('div', { class: 'tip-head' }, s.name),
      s.kernel ? h('div', {}, `kernel ${s.kernel}`) : '',
      h('div', {}, `${formatUs(s.dur)} at ${formatUs(s.ts)}`),
      exposed !== undefined ? h('div', {}, `exposed ${formatUs(exposed)}`) : '');
    this.tip.hidden = false;
    const x = e.clientX - box.left;
    this.tip.style.left = `${x + 220 > this.width ? Math.max(0, x - 212) : x + 12}px`;
    this.tip.style.top = `${e.clientY - box.top + 12}px`;
    if (this.onHover) this.onHover(s.name);
  }

  draw() {
    this.width = Math.max(300, this.container.clientWidth);
    const height = this.groups.length * (GROUP_GAP + LANES.length * LANE_H + MEMORY_H) + AXIS_H + 4;
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(this.width * dpr);
    this.canvas.height = Math.round(height * dpr);
    this.canvas.style.width = `${this.width}px`;
    this.canvas.style.height = `${height}px`;
    this.container.dataset.viewFrom = this.view[0];
    this.container.dataset.viewTo = this.view[1];
    const ctx = this.canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, this.width, height);
    const css = getComputedStyle(this.container);
    const color = (name, fallback) => css.getPropertyValue(name).trim() || fallback;
    const fill = { compute: color('--accent', '#2563eb'), comm: color('--comm', '#b45309'), exposed: color('--exposed', '#dc2626') };
    const ink = color('--ink', '#1f2430');
    const muted = color('--muted', '#5b6375');
    const [t0, t1] = this.view;
    const plotW = this.plotW;
    const x = (t) => LEFT + ((t - t0) / (t1 - t0)) * plotW;
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    let drawn = 0;
    this.groups.forEach((group, gi) => {
      const top = this.groupTop(gi);
      ctx.fillStyle = ink;
      ctx.font = '600 12px system-ui, sans-serif';
      ctx.fillText(group.title, 4, top - 10);
      ctx.font = '11px system-ui, sans-serif';
      LANES.forEach((laneName, li) => {
        const y = top + li * LANE_H;
        ctx.fillStyle = muted;
        ctx.fillText(LANE_LABELS[laneName], 4, y + LANE_H / 2);
        const lane = group.lanes[laneName];
        ctx.save();
        ctx.beginPath();
        ctx.rect(LEFT, y, plotW, LANE_H);
        ctx.clip();
        let lastPx = -1;
        for (let i = firstEndingAfter(lane, t0); i < lane.length && lane[i].ts <= t1; i++) {
          const s = lane[i];
          const x0 = x(s.ts);
          const x1 = x(s.ts + s.dur);
          if (x1 < LEFT) continue;
          const w = Math.max(1, x1 - x0);
          if (w < 1.5 && Math.floor(x0) === lastPx) continue;  // many slices in one pixel: drawn once
          lastPx = Math.floor(x0);
          ctx.fillStyle = fill[laneName];
          ctx.fillRect(x0, y + 3, w, LANE_H - 6);
          drawn += 1;
          if (w > 36) {
            ctx.fillStyle = '#fff';
            const label = s.kernel || s.name;
            const maxChars = Math.floor((w - 6) / 6);
            ctx.fillText(label.length > maxChars ? `${label.slice(0, Math.max(1, maxChars - 1))}…` : label, Math.max(x0, LEFT) + 3, y + LANE_H / 2);
          }
          if (w > 2 && laneName === 'compute') {
            ctx.fillStyle = 'rgba(255,255,255,.7)';
            ctx.fillRect(x1 - 0.5, y + 3, 0.5, LANE_H - 6);
          }
        }
        ctx.restore();
      });
      // Memory on the time axis: bytes live, as a step line scaled to this group's peak.
      {
        const y0 = top + LANES.length * LANE_H;
        ctx.fillStyle = muted;
        ctx.fillText(group.memory ? 'memory' : '', 4, y0 + MEMORY_H / 2);
        if (group.memory && group.memory.ts.length) {
          const m = group.memory;
          let peak = 1;
          for (const b of m.bytes) peak = Math.max(peak, b);
          ctx.save();
          ctx.beginPath();
          ctx.rect(LEFT, y0, plotW, MEMORY_H);
          ctx.clip();
          ctx.strokeStyle = color('--kept', '#0f766e');
          ctx.beginPath();
          const yOf = (b) => y0 + MEMORY_H - 3 - (b / peak) * (MEMORY_H - 6);
          ctx.moveTo(x(m.ts[0]), yOf(m.bytes[0]));
          for (let i = 1; i < m.ts.length; i++) {
            ctx.lineTo(x(m.ts[i]), yOf(m.bytes[i - 1]));
            ctx.lineTo(x(m.ts[i]), yOf(m.bytes[i]));
          }
          ctx.stroke();
          ctx.fillStyle = muted;
          ctx.fillText(humanBytes(peak), LEFT + plotW - 70, y0 + 8);
          ctx.restore();
        }
      }
      // Flows: from each collective's end down/up to the start of its waiter.
      ctx.save();
      ctx.beginPath();
      ctx.rect(LEFT, top, plotW, LANES.length * LANE_H);
      ctx.clip();
      ctx.strokeStyle = color('--flow', '#7c3aed');
      ctx.lineWidth = 1;
      const inView = (f) => f.toTs !== undefined && Math.max(f.fromTs, f.toTs) >= t0 && Math.min(f.fromTs, f.toTs) <= t1;
      const focus = [this.selected, this.marked].filter(Boolean);
      const all = group.flows.filter(inView);
      const flows = all.length <= FLOW_LIMIT ? all : all.filter((f) => focus.includes(f.from) || focus.includes(f.to));
      this.container.dataset.flowsDrawn = flows.length;
      for (const f of flows) {
        const ya = top + LANE_H + LANE_H / 2;
        const yb = top + LANE_H / 2;
        ctx.beginPath();
        ctx.moveTo(x(f.fromTs), ya);
        ctx.lineTo(x(f.toTs), yb);
        ctx.stroke();
        ctx.beginPath();
        ctx.arc(x(f.toTs), yb, 2.5, 0, 2 * Math.PI);
        ctx.fillStyle = ctx.strokeStyle;
        ctx.fill();
      }
      if (this.marked !== null && group.start.has(this.marked)) {
        const mx = x(group.start.get(this.marked));
        if (mx >= LEFT && mx <= LEFT + plotW) {
          ctx.strokeStyle = ink;
          ctx.setLineDash([3, 2]);
          ctx.beginPath();
          ctx.moveTo(mx, top);
          ctx.lineTo(mx, top + LANES.length * LANE_H);
          ctx.stroke();
          ctx.setLineDash([]);
        }
      }
      ctx.restore();
    });
    // Time axis.
    const axisY = this.groups.length * (GROUP_GAP + LANES.length * LANE_H + MEMORY_H) + 6;
    ctx.strokeStyle = '#b8bec9';
    ctx.beginPath();
    ctx.moveTo(LEFT, axisY);
    ctx.lineTo(LEFT + plotW, axisY);
    ctx.stroke();
    const step = niceStep(t1 - t0, Math.max(2, Math.floor(plotW / 110)));
    ctx.fillStyle = muted;
    ctx.textAlign = 'center';
    for (let t = Math.ceil(t0 / step) * step; t <= t1 * 1.0001; t += step) {
      ctx.beginPath();
      ctx.moveTo(x(t), axisY);
      ctx.lineTo(x(t), axisY + 4);
      ctx.stroke();
      ctx.fillText(formatUs(t), Math.min(x(t), this.width - 30), axisY + 14);
    }
    ctx.textAlign = 'start';
    this.container.dataset.drawn = drawn;
  }

  destroy() {
    this.resizeObserver.disconnect();
  }
}

// Exposed time per collective of the final order, largest first, and the
// comm passes' statistics (Inductor's ReorderInfo / SinkWaitInfo) per pass.
export function renderCommTables(container, plan, steps = []) {
  const colls = [...plan.simulation.collectives].sort((a, b) => b.exposed_us - a.exposed_us);
  const shown = colls.slice(0, 200);
  const parts = [h('div', {},
    h('h3', {}, `Collectives (${colls.length}), most exposed first`),
    h('div', { class: 'table-scroll short' },
      h('table', { 'data-testid': 'collectives' },
        h('thead', {}, h('tr', {}, h('th', {}, 'collective'), h('th', { class: 'num' }, 'issued'), h('th', { class: 'num' }, 'runs'),
          h('th', { class: 'num' }, 'exposed'), h('th', {}, 'waited by'))),
        h('tbody', {}, shown.map((c) => h('tr', {},
          h('td', { class: 'name' }, c.collective), h('td', { class: 'num' }, formatUs(c.issue_us)),
          h('td', { class: 'num' }, formatUs(c.end_us - c.start_us)), h('td', { class: 'num' }, formatUs(c.exposed_us)),
          h('td', { class: 'name' }, c.waited_by || '—')))))),
    colls.length > shown.length ? h('p', { class: 'muted' }, `… ${colls.length - shown.length} more`) : '')];
  if (plan.comm) {
    // Per pass: the nodes it moved (the fewest whose relocation explains its
    // order, as the order table counts them), the scheduler's peak and the
    // simulated step before and after it, in the step's own units; Inductor's
    // own bookkeeping (collectives handled, swaps, its runtime_us-based
    // improvement) beside, named as such.
    let stepBefore = plan.comm.step_time_before_us;
    let exposedBefore = plan.comm.exposed_comm_before_us;
    const rows = plan.comm.passes.map((p, i) => {
      const stats = p.stats || [];
      const sum = (k) => stats.reduce((a, s) => a + (Number(s[k]) || 0), 0);
      const limits = {};
      // By kind ("data dependency: op4 (…)" counts as "data dependency").
      for (const s of stats) {
        const kind = String(s.limiting_factor || 'None').split(':')[0];
        limits[kind] = (limits[kind] || 0) + 1;
      }
      const step = steps[i];
      let moved = '…';
      let peak = p.peak_before !== undefined ? `${humanBytes(p.peak_before)} → ${humanBytes(p.peak_after)}` : '…';
      let stepCell = '…';
      let exposedCell = '…';
      if (step) {
        const kept = longestIncreasingRun(step.positions);
        let n = 0;
        for (let k = 0; k < kept.length; k++) n += !kept[k];
        moved = `${n} of ${step.positions.length}`;
        peak = `${humanBytes(step.peak_before)} → ${humanBytes(step.peak_after)} (${percentChange(step.peak_before, step.peak_after) || '±0%'})`;
        stepCell = `${formatUs(stepBefore)} → ${formatUs(step.step_time_us)}`;
        exposedCell = `${formatUs(exposedBefore)} → ${formatUs(step.exposed_comm_us)}`;
        stepBefore = step.step_time_us;
        exposedBefore = step.exposed_comm_us;
      }
      return h('tr', {},
        h('td', { class: 'name' }, p.pass), h('td', { class: 'num', 'data-testid': 'nodes-moved' }, moved),
        h('td', { class: 'num' }, stepCell), h('td', { class: 'num' }, exposedCell), h('td', { class: 'num' }, peak),
        h('td', { class: 'num' }, stats.length ? `${stats.length} · ${sum('moves')} swaps · ${sum('grouped')} grouped · ${formatUs(sum('improvement_us'))}` : 'none reported'),
        h('td', { class: 'reason' }, Object.entries(limits).sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ×${n}`).join(', ') || '—'));
    });
    parts.push(h('div', {},
      h('h3', {}, 'Comm passes, in the order applied'),
      h('p', { class: 'hint' }, 'Step time and exposed communication are simulated with the hardware profile after each pass. '
        + 'Inductor\'s bookkeeping is its own: collectives it handled, swaps, and the improvement its runtime_us estimates expected.'),
      h('div', { class: 'table-scroll short' },
        h('table', { 'data-testid': 'pass-stats' },
          h('thead', {}, h('tr', {}, h('th', {}, 'pass'), h('th', { class: 'num' }, 'nodes moved'),
            h('th', { class: 'num' }, 'step time (simulated)'), h('th', { class: 'num' }, 'exposed comm'),
            h('th', { class: 'num' }, 'scheduler\'s peak'), h('th', { class: 'num' }, 'Inductor\'s bookkeeping: collectives · swaps · grouped · expected gain'),
            h('th', {}, 'limiting factor'))),
          h('tbody', {}, rows)))));
  }
  container.replaceChildren(...parts);
}
