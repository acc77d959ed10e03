// The memory curve: bytes live after each step, one line per order (baseline,
// final, and a kept plan to compare with), peaks marked. Plain SVG, shared by
// the playground and the widget.
//
// Working in it: the wheel or +/- zooms around the pointer, dragging pans,
// a click pins a step, arrow keys move the pinned step (Shift: 10 steps),
// Home/End go to the ends, 0 resets the view. Hovering only moves the guide
// and the tooltip (no redraw), so it stays fast at 100k steps; the chart
// redraws only when the view changes.
import { byteScale, humanBytes } from './format.js';

const SVG = 'http://www.w3.org/2000/svg';
const LABEL_LINE = 14;
const MARGIN = { top: 12 + 2 * LABEL_LINE, right: 16, bottom: 34, left: 64 };

function s(tag, attrs = {}, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

// 1, 2, 5 × 10^k steps giving about `count` ticks from `lo` up to the first
// tick at or above `hi` (so the axis always covers the data).
export function niceTicks(hi, count, lo = 0) {
  const range = hi - lo;
  if (range <= 0) return [lo];
  const raw = range / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((v) => v >= raw);
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; ticks.length < 1000; t += step) {
    ticks.push(t);
    if (t >= hi * 0.9999) break;
  }
  return ticks;
}

// Points of curve[lo..hi] at most ~2 per pixel: each bucket keeps its
// maximum, so peaks survive.
function envelope(curve, lo, hi, maxPoints) {
  const n = hi - lo + 1;
  const out = [];
  if (n <= maxPoints) {
    for (let i = lo; i <= hi; i++) out.push([i, curve[i]]);
    return out;
  }
  const per = n / maxPoints;
  for (let b = 0; b < maxPoints; b++) {
    const from = lo + Math.floor(b * per);
    const to = Math.min(hi + 1, lo + Math.floor((b + 1) * per));
    let best = from;
    for (let i = from; i < to; i++) if (curve[i] > curve[best]) best = i;
    out.push([best, curve[best]]);
  }
  return out;
}

// series: [{name, curve, peak, peakStep, className, flat}] (flat: a level
// drawn for reference, with no peak marker or label).
// onHover(step | null), onPin(step): the page follows the chart.
export class MemoryChart {
  constructor(container, { height = 280, onHover = null, onPin = null, stepLabel = null, unit = 'step' } = {}) {
    this.container = container;
    this.height = height;
    this.onHover = onHover;
    this.onPin = onPin;
    this.stepLabel = stepLabel; // step -> text for the tooltip (e.g. the node name)
    this.unit = unit;           // what the x axis counts ('step'; a snapshot's 'allocator event')
    this.series = [];
    this.view = null;  // [from, to] steps shown
    this.pinned = null;
    this.marked = null;  // a step highlighted from outside (order table)
    container.classList.add('memory-chart-box');
    this.toolbar = document.createElement('div');
    this.toolbar.className = 'chart-toolbar';
    const button = (label, title, onclick) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = label;
      b.title = title;
      b.setAttribute('aria-label', title);
      b.addEventListener('click', onclick);
      return b;
    };
    this.toolbar.append(
      button('−', 'zoom out', () => this.zoom(1.6)),
      button('+', 'zoom in', () => this.zoom(1 / 1.6)),
      button('peak', 'zoom to the peak', () => this.zoomToStep(this.peakStep())),
      button('reset', 'show every step', () => this.reset()));
    this.legend = document.createElement('div');
    this.legend.className = 'chart-legend';
    this.plot = document.createElement('div');
    this.plot.className = 'chart-plot';
    this.plot.tabIndex = 0;
    this.plot.setAttribute('role', 'slider');
    this.plot.setAttribute('aria-label', 'memory per step: arrow keys move the pinned step, + and - zoom, 0 resets');
    this.tip = document.createElement('div');
    this.tip.className = 'chart-tip';
    this.tip.hidden = true;
    container.replaceChildren(this.toolbar, this.legend, this.plot, this.tip);
    this.plot.addEventListener('keydown', (e) => this.onKey(e));
    this.plot.addEventListener('wheel', (e) => this.onWheel(e), { passive: false });
    this.plot.addEventListener('pointerdown', (e) => this.onPointerDown(e));
    this.plot.addEventListener('pointermove', (e) => this.onPointerMove(e));
    this.plot.addEventListener('pointerup', (e) => this.onPointerUp(e));
    this.plot.addEventListener('pointerleave', () => this.hideHover());
    this.plot.addEventListener('pointerenter', () => { this.rect = null; });
    this.guideEl = document.createElement('div');
    this.guideEl.className = 'chart-guide';
    this.guideEl.hidden = true;
    container.append(this.guideEl);
    this.width = 0;
    this.resizeObserver = new ResizeObserver(() => {
      if (this.container.clientWidth !== this.width) this.draw();
    });
    this.resizeObserver.observe(container);
  }

  get steps() {
    return this.series.length ? Math.max(...this.series.map((x) => x.curve.length)) - 1 : 0;
  }

  peakStep() {
    const main = this.series.find((x) => x.className === 'chosen') || this.series[0];
    return main ? main.peakStep : 0;
  }

  setSeries(series, { keepView = false } = {}) {
    this.series = series;
    if (!keepView || !this.view) this.view = [0, this.steps];
    this.view = [Math.max(0, this.view[0]), Math.min(this.steps, this.view[1])];
    if (this.pinned !== null && this.pinned > this.steps) this.pinned = null;
    this.draw();
  }

  // ---- view -----------------------------------------------------------------

  setView(from, to) {
    const steps = this.steps;
    const span = Math.max(Math.min(steps, 4), Math.min(steps, to - from));
    let lo = Math.round(from);
    lo = Math.max(0, Math.min(steps - span, lo));
    this.view = [lo, Math.min(steps, lo + Math.round(span))];
    this.draw();
  }

  zoom(factor, around = null) {
    const [lo, hi] = this.view;
    const c = around === null ? (this.pinned !== null ? this.pinned : (lo + hi) / 2) : around;
    const span = (hi - lo) * factor;
    this.setView(c - (c - lo) * factor, c - (c - lo) * factor + span);
  }

  zoomToStep(step, halfWidth = 40) {
    this.setView(step - halfWidth, step + halfWidth);
    this.pin(step);
  }

  reset() {
    this.setView(0, this.steps);
  }

  // ---- pinning and marking ----------------------------------------------------

  pin(step, { notify = true } = {}) {
    this.pinned = Math.max(0, Math.min(this.steps, step));
    const [lo, hi] = this.view;
    if (this.pinned < lo || this.pinned > hi) {
      const span = hi - lo;
      this.setView(this.pinned - span / 2, this.pinned + span / 2);
    } else {
      this.placeMarkers();
    }
    this.plot.setAttribute('aria-valuenow', this.pinned);
    this.plot.setAttribute('aria-valuetext', `${this.unit} ${this.pinned}${this.stepLabel ? `, ${this.stepLabel(this.pinned)}` : ''}`);
    this.container.dataset.pinned = this.pinned;
    if (notify && this.onPin) this.onPin(this.pinned);
  }

  // A step highlighted from outside (hovering the order table).
  mark(step) {
    this.marked = step;
    this.placeMarkers();
  }

  // ---- input ------------------------------------------------------------------

  // The SVG's box, measured once per pointer entry (a forced layout per
  // pointer move was most of the hover's cost).
  svgRect() {
    if (!this.rect) this.rect = this.svg.getBoundingClientRect();
    return this.rect;
  }

  stepAt(clientX) {
    if (!this.geom) return 0;
    const box = this.svgRect();
    const px = ((clientX - box.left) / box.width) * this.geom.width;
    const { lo, hi, plotW } = this.geom;
    return Math.max(lo, Math.min(hi, Math.round(lo + ((px - MARGIN.left) / plotW) * (hi - lo))));
  }

  onKey(e) {
    const cur = this.pinned !== null ? this.pinned : this.peakStep();
    const by = e.shiftKey ? 10 : 1;
    const keys = {
      ArrowRight: () => this.pin(cur + by),
      ArrowLeft: () => this.pin(cur - by),
      Home: () => this.pin(0),
      End: () => this.pin(this.steps),
      '+': () => this.zoom(1 / 1.6),
      '=': () => this.zoom(1 / 1.6),
      '-': () => this.zoom(1.6),
      0: () => this.reset(),
    };
    const act = keys[e.key];
    if (!act) return;
    e.preventDefault();
    act();
  }

  onWheel(e) {
    if (!this.geom) return;
    e.preventDefault();
    this.zoom(e.deltaY > 0 ? 1.25 : 0.8, this.stepAt(e.clientX));
  }

  onPointerDown(e) {
    if (e.button !== 0 || !this.geom) return;
    this.drag = { x: e.clientX, view: [...this.view], moved: false };
    this.plot.setPointerCapture(e.pointerId);
  }

  onPointerMove(e) {
    if (this.drag) {
      const dx = e.clientX - this.drag.x;
      if (Math.abs(dx) > 3) this.drag.moved = true;
      if (this.drag.moved) {
        const box = this.svgRect();
        const perPx = (this.drag.view[1] - this.drag.view[0]) / ((this.geom.plotW * box.width) / this.geom.width);
        this.setView(this.drag.view[0] - dx * perPx, this.drag.view[1] - dx * perPx);
        return;
      }
    }
    // One hover per frame, for the latest position.
    this.pendingX = e.clientX;
    if (!this.hoverFrame) {
      this.hoverFrame = requestAnimationFrame(() => {
        this.hoverFrame = 0;
        this.hover(this.stepAt(this.pendingX));
      });
    }
  }

  onPointerUp(e) {
    const drag = this.drag;
    this.drag = null;
    if (drag && !drag.moved) this.pin(this.stepAt(e.clientX));
  }

  // ---- hover (no redraw) --------------------------------------------------------

  hover(step) {
    if (!this.geom) return;
    const { x, width } = this.geom;
    const box = this.svgRect();
    const scale = box.width / width || 1;
    const px = x(step) * scale;
    const plotTop = this.plot.offsetTop;
    Object.assign(this.guideEl.style, { left: `${px}px`, top: `${plotTop + MARGIN.top * scale}px`, height: `${this.geom.plotH * scale}px` });
    this.guideEl.hidden = false;
    const label = this.stepLabel ? this.stepLabel(step) : '';
    this.tipHead.textContent = `${this.unit} ${step}${label ? ` · ${label}` : ''}`;
    this.series.forEach((ser, i) => {
      this.tipRows[i].textContent = `${ser.name}: ${humanBytes(ser.curve[Math.min(step, ser.curve.length - 1)])}`;
    });
    this.tip.hidden = false;
    this.tip.style.left = `${px + 220 > box.width ? Math.max(0, px - 212) : px + 12}px`;
    this.tip.style.top = `${plotTop + MARGIN.top + 4}px`;
    this.container.dataset.hover = step;
    if (this.onHover) this.onHover(step);
  }

  hideHover() {
    if (!this.geom) return;
    this.guideEl.hidden = true;
    this.tip.hidden = true;
    delete this.container.dataset.hover;
    if (this.onHover) this.onHover(null);
  }

  placeMarkers() {
    if (!this.geom) return;
    const { x, lo, hi } = this.geom;
    for (const [el, step] of [[this.pinLine, this.pinned], [this.markLine, this.marked]]) {
      const visible = step !== null && step >= lo && step <= hi;
      el.setAttribute('visibility', visible ? 'visible' : 'hidden');
      if (visible) {
        el.setAttribute('x1', x(step));
        el.setAttribute('x2', x(step));
      }
    }
  }

  // ---- drawing -------------------------------------------------------------------

  draw() {
    this.width = this.container.clientWidth;
    const width = Math.max(280, this.width);
    const height = this.height;
    this.legend.replaceChildren(...this.series.map((ser) => {
      const item = document.createElement('span');
      item.className = `legend-item ${ser.className}`;
      item.textContent = ser.name;
      return item;
    }));
    if (!this.series.length) {
      this.plot.replaceChildren();
      this.geom = null;
      return;
    }
    const [lo, hi] = this.view;
    this.container.dataset.viewFrom = lo;
    this.container.dataset.viewTo = hi;
    const svg = s('svg', { class: 'memory-chart', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img',
      'aria-label': this.series.map((ser) => `${ser.name}: peak ${humanBytes(ser.peak)} at ${this.unit} ${ser.peakStep}`).join('; ') });
    const maxBytes = Math.max(1, ...this.series.map((x) => x.peak));
    const { unit, div } = byteScale(maxBytes);
    const yTicks = niceTicks(maxBytes / div, 5);
    const yMax = yTicks[yTicks.length - 1] * div || maxBytes;
    const plotW = width - MARGIN.left - MARGIN.right;
    const plotH = height - MARGIN.top - MARGIN.bottom;
    const x = (step) => MARGIN.left + (hi > lo ? ((step - lo) / (hi - lo)) * plotW : 0);
    const y = (bytes) => MARGIN.top + plotH - (bytes / yMax) * plotH;
    this.geom = { x, y, lo, hi, plotW, plotH, width };

    for (const t of yTicks) {
      svg.append(s('line', { class: 'grid', x1: MARGIN.left, x2: width - MARGIN.right, y1: y(t * div), y2: y(t * div) }));
      svg.append(s('text', { class: 'tick', x: MARGIN.left - 8, y: y(t * div) + 4, 'text-anchor': 'end' }, `${+t.toFixed(2)} ${unit}`));
    }
    for (const t of niceTicks(hi, Math.max(3, Math.floor(plotW / 80)), lo).filter((t) => t >= lo && t <= hi && Number.isInteger(t))) {
      svg.append(s('line', { class: 'axis', x1: x(t), x2: x(t), y1: MARGIN.top + plotH, y2: MARGIN.top + plotH + 4 }));
      svg.append(s('text', { class: 'tick', x: x(t), y: height - MARGIN.bottom + 18, 'text-anchor': 'middle' }, t));
    }
    svg.append(s('line', { class: 'axis', x1: MARGIN.left, x2: width - MARGIN.right, y1: MARGIN.top + plotH, y2: MARGIN.top + plotH }));
    svg.append(s('text', { class: 'axis-title', x: width - MARGIN.right, y: height - 4, 'text-anchor': 'end' },
      lo > 0 || hi < this.steps ? `${this.unit}s ${lo}–${hi} of ${this.steps}` : this.unit));
    const clip = `clip-${Math.random().toString(36).slice(2)}`;
    const defs = s('defs');
    const clipPath = s('clipPath', { id: clip });
    clipPath.append(s('rect', { x: MARGIN.left, y: 0, width: plotW, height: MARGIN.top + plotH }));
    defs.append(clipPath);
    svg.append(defs);

    const labels = [];
    for (const ser of this.series) {
      const last = ser.curve.length - 1;
      const pts = envelope(ser.curve, Math.min(lo, last), Math.min(hi, last), Math.max(2, Math.floor(plotW * 2)));
      let d = '';
      pts.forEach(([i, v], k) => {
        d += k === 0 ? `M${x(i).toFixed(1)},${y(v).toFixed(1)}` : `H${x(i).toFixed(1)}V${y(v).toFixed(1)}`;
      });
      svg.append(s('path', { class: `line ${ser.className}`, d, 'clip-path': `url(#${clip})` }));
      if (!ser.flat && ser.peakStep >= lo && ser.peakStep <= hi) {
        const px = x(ser.peakStep);
        const py = y(ser.peak);
        svg.append(s('circle', { class: `peak ${ser.className}`, cx: px, cy: py, r: 4 }));
        labels.push({ ser, px, py });
      }
    }
    // Peak labels: one line each in the top margin, joined to their marker by
    // a leader; measured once in the page and kept inside the chart. Each
    // takes the first of the margin's two lines where it meets no label
    // placed before it (series order: the first series first); a label
    // with no room on either is left out.
    this.plot.replaceChildren(svg);
    const rows = [[], []];  // [left, right] extents placed on each line
    labels.forEach(({ ser, px, py }) => {
      const text = s('text', { class: `peak-label ${ser.className}`, x: px, y: 12, 'text-anchor': 'middle' },
        `${ser.name}: peak ${humanBytes(ser.peak)} at ${this.unit} ${ser.peakStep}`);
      svg.append(text);
      const textW = text.getComputedTextLength() || 0;
      let left = px - textW / 2;
      if (textW > width - 8) {
        text.setAttribute('textLength', width - 8);
        text.setAttribute('lengthAdjust', 'spacingAndGlyphs');
        text.setAttribute('x', 4);
        text.setAttribute('text-anchor', 'start');
        left = 4;
      } else if (px + textW / 2 > width - 4) {
        text.setAttribute('x', width - 4);
        text.setAttribute('text-anchor', 'end');
        left = width - 4 - textW;
      } else if (px - textW / 2 < 4) {
        text.setAttribute('x', 4);
        text.setAttribute('text-anchor', 'start');
        left = 4;
      }
      const right = left + Math.min(textW, width - 8);
      const overlap = (row) => row.reduce((sum, [a, b]) => sum + Math.max(0, Math.min(b, right + 8) - Math.max(a, left - 8)), 0);
      const line = overlap(rows[0]) === 0 ? 0 : overlap(rows[1]) === 0 ? 1 : -1;
      if (line < 0) {
        text.remove();  // no room: the marker stays, the legend and the tooltip name it
        return;
      }
      rows[line].push([left, right]);
      const ly = 12 + line * LABEL_LINE;
      text.setAttribute('y', ly);
      svg.insertBefore(s('line', { class: `leader ${ser.className}`, x1: px, x2: px, y1: ly + 3, y2: py - 5 }), text);
    });

    this.pinLine = s('line', { class: 'pin', y1: MARGIN.top, y2: MARGIN.top + plotH, visibility: 'hidden' });
    this.markLine = s('line', { class: 'mark', y1: MARGIN.top, y2: MARGIN.top + plotH, visibility: 'hidden' });
    svg.append(this.markLine, this.pinLine, s('rect', { class: 'overlay', x: MARGIN.left, y: MARGIN.top, width: plotW, height: plotH }));
    this.svg = svg;
    this.rect = null;
    this.tipHead = document.createElement('div');
    this.tipHead.className = 'tip-head';
    this.tipRows = this.series.map((ser) => {
      const row = document.createElement('div');
      row.className = `tip-row ${ser.className}`;
      return row;
    });
    this.tip.replaceChildren(this.tipHead, ...this.tipRows);
    this.placeMarkers();
  }

  destroy() {
    this.resizeObserver.disconnect();
  }
}
