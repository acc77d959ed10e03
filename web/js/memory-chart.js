// The memory curve: bytes live after each step, one line per order (baseline
// and chosen), peaks marked, a hover guide that reports the step. Plain SVG,
// redrawn on resize. Shared by the playground and the widget.
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

// 1, 2, 5 × 10^k steps giving about `count` ticks from 0 to the first tick at
// or above `max` (so the axis always covers the data).
function niceTicks(max, count) {
  if (max <= 0) return [0];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((v) => v >= raw);
  const ticks = [0];
  while (ticks[ticks.length - 1] < max * 0.9999) ticks.push(ticks.length * step);
  return ticks;
}

// At most ~2 points per pixel: each bucket keeps its maximum, so peaks survive.
function envelope(curve, maxPoints) {
  if (curve.length <= maxPoints) return curve.map((v, i) => [i, v]);
  const per = curve.length / maxPoints;
  const out = [];
  for (let b = 0; b < maxPoints; b++) {
    const lo = Math.floor(b * per);
    const hi = Math.min(curve.length, Math.floor((b + 1) * per));
    let best = lo;
    for (let i = lo; i < hi; i++) if (curve[i] > curve[best]) best = i;
    out.push([best, curve[best]]);
  }
  return out;
}

// series: [{name, curve, peak, peakStep, className}]; onHover(step | null).
export class MemoryChart {
  constructor(container, { height = 280, onHover = null, stepLabel = null } = {}) {
    this.container = container;
    this.height = height;
    this.onHover = onHover;
    this.stepLabel = stepLabel; // step -> text for the tooltip (e.g. the node name)
    this.series = [];
    this.resizeObserver = new ResizeObserver(() => this.draw());
    this.resizeObserver.observe(container);
  }

  setSeries(series) {
    this.series = series;
    this.draw();
  }

  draw() {
    const width = Math.max(320, this.container.clientWidth);
    const height = this.height;
    this.container.replaceChildren();
    if (!this.series.length) return;
    const svg = s('svg', { class: 'memory-chart', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img' });
    const steps = Math.max(...this.series.map((x) => x.curve.length)) - 1;
    const maxBytes = Math.max(1, ...this.series.map((x) => x.peak));
    const { unit, div } = byteScale(maxBytes);
    const yTicks = niceTicks(maxBytes / div, 5);
    const yMax = yTicks[yTicks.length - 1] * div || maxBytes;
    const plotW = width - MARGIN.left - MARGIN.right;
    const plotH = height - MARGIN.top - MARGIN.bottom;
    const x = (step) => MARGIN.left + (steps ? (step / steps) * plotW : 0);
    const y = (bytes) => MARGIN.top + plotH - (bytes / yMax) * plotH;

    // Axes and grid.
    for (const t of yTicks) {
      svg.append(s('line', { class: 'grid', x1: MARGIN.left, x2: width - MARGIN.right, y1: y(t * div), y2: y(t * div) }));
      svg.append(s('text', { class: 'tick', x: MARGIN.left - 8, y: y(t * div) + 4, 'text-anchor': 'end' }, `${+t.toFixed(2)} ${unit}`));
    }
    for (const t of niceTicks(steps, Math.max(2, Math.floor(plotW / 90))).filter((t) => t <= steps)) {
      svg.append(s('line', { class: 'axis', x1: x(t), x2: x(t), y1: MARGIN.top + plotH, y2: MARGIN.top + plotH + 4 }));
      svg.append(s('text', { class: 'tick', x: x(t), y: height - MARGIN.bottom + 18, 'text-anchor': 'middle' }, t));
    }
    svg.append(s('line', { class: 'axis', x1: MARGIN.left, x2: width - MARGIN.right, y1: MARGIN.top + plotH, y2: MARGIN.top + plotH }));
    svg.append(s('text', { class: 'axis-title', x: width - MARGIN.right, y: height - 4, 'text-anchor': 'end' }, 'step'));

    // One stepped line per series; peaks marked and labelled.
    const labels = [];
    this.series.forEach((ser) => {
      const pts = envelope(ser.curve, plotW * 2);
      let d = '';
      pts.forEach(([i, v], k) => {
        d += k === 0 ? `M${x(i)},${y(v)}` : `H${x(i)}V${y(v)}`;
      });
      svg.append(s('path', { class: `line ${ser.className}`, d }));
      const px = x(ser.peakStep);
      const py = y(ser.peak);
      svg.append(s('circle', { class: `peak ${ser.className}`, cx: px, cy: py, r: 4 }));
      labels.push({ ser, px, py });
    });
    // Peak labels: one line per series in the top margin, each joined to its
    // marker by a leader, so they never cover the curves or each other.
    labels.forEach(({ ser, px, py }, i) => {
      const ly = 12 + i * LABEL_LINE;
      const anchor = px > width - 160 ? 'end' : px < MARGIN.left + 160 ? 'start' : 'middle';
      svg.append(s('line', { class: `leader ${ser.className}`, x1: px, x2: px, y1: ly + 3, y2: py - 5 }));
      svg.append(s('text', { class: `peak-label ${ser.className}`, x: px, y: ly, 'text-anchor': anchor },
        `${ser.name}: peak ${humanBytes(ser.peak)} at step ${ser.peakStep}`));
    });

    // Hover guide and tooltip.
    const guide = s('line', { class: 'guide', y1: MARGIN.top, y2: MARGIN.top + plotH, visibility: 'hidden' });
    svg.append(guide);
    const tip = document.createElement('div');
    tip.className = 'chart-tip';
    tip.hidden = true;
    const overlay = s('rect', { class: 'overlay', x: MARGIN.left, y: MARGIN.top, width: plotW, height: plotH });
    svg.append(overlay);
    overlay.addEventListener('mousemove', (ev) => {
      const box = svg.getBoundingClientRect();
      const px = ((ev.clientX - box.left) / box.width) * width;
      const step = Math.max(0, Math.min(steps, Math.round(((px - MARGIN.left) / plotW) * steps)));
      guide.setAttribute('x1', x(step));
      guide.setAttribute('x2', x(step));
      guide.setAttribute('visibility', 'visible');
      const label = this.stepLabel ? this.stepLabel(step) : '';
      tip.replaceChildren();
      const head = document.createElement('div');
      head.className = 'tip-head';
      head.textContent = `step ${step}${label ? ` · ${label}` : ''}`;
      tip.append(head);
      for (const ser of this.series) {
        const row = document.createElement('div');
        row.className = `tip-row ${ser.className}`;
        row.textContent = `${ser.name}: ${humanBytes(ser.curve[Math.min(step, ser.curve.length - 1)])}`;
        tip.append(row);
      }
      tip.hidden = false;
      const tipLeft = x(step) + 12;
      tip.style.left = `${tipLeft > width - 220 ? x(step) - 212 : tipLeft}px`;
      tip.style.top = `${svg.getBoundingClientRect().top - this.container.getBoundingClientRect().top + MARGIN.top + 4}px`;
      if (this.onHover) this.onHover(step);
    });
    overlay.addEventListener('mouseleave', () => {
      guide.setAttribute('visibility', 'hidden');
      tip.hidden = true;
    });

    const legend = document.createElement('div');
    legend.className = 'chart-legend';
    for (const ser of this.series) {
      const item = document.createElement('span');
      item.className = `legend-item ${ser.className}`;
      item.textContent = ser.name;
      legend.append(item);
    }
    this.container.append(legend, svg, tip);
  }

  destroy() {
    this.resizeObserver.disconnect();
  }
}
