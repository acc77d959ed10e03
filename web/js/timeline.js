// The compute / communication timeline, drawn from the plan's Chrome trace
// (core's chrome_trace: complete events on the "compute" and "comm" lanes,
// and "exposed" events where compute waited for a collective).
import { formatUs } from './format.js';

const SVG = 'http://www.w3.org/2000/svg';
const LANES = [
  { key: 'compute', label: 'compute' },
  { key: 'exposed', label: 'exposed comm' },
  { key: 'comm', label: 'comm' },
];
const MARGIN = { left: 110, right: 16, top: 8, bottom: 30 };
const LANE_H = 26;

function s(tag, attrs = {}, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

function niceStep(range, count) {
  const raw = range / count;
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  return [1, 2, 5, 10].map((m) => m * mag).find((v) => v >= raw);
}

export function renderTimeline(container, traceText) {
  const events = JSON.parse(traceText).traceEvents.filter((e) => e.ph === 'X');
  const lane = (e) => (e.cat === 'exposed' ? 'exposed' : e.cat === 'comm' ? 'comm' : 'compute');
  const end = Math.max(1, ...events.map((e) => e.ts + e.dur));
  const width = Math.max(480, container.clientWidth);
  const height = MARGIN.top + LANES.length * LANE_H + MARGIN.bottom;
  const plotW = width - MARGIN.left - MARGIN.right;
  const x = (us) => MARGIN.left + (us / end) * plotW;
  const svg = s('svg', { class: 'timeline-chart', viewBox: `0 0 ${width} ${height}`, width, height });
  LANES.forEach((l, i) => {
    svg.append(s('text', { class: 'lane-label', x: MARGIN.left - 10, y: MARGIN.top + i * LANE_H + 17, 'text-anchor': 'end' }, l.label));
  });
  for (const e of events) {
    const i = LANES.findIndex((l) => l.key === lane(e));
    const rect = s('rect', {
      class: `span ${lane(e)}`, x: x(e.ts), y: MARGIN.top + i * LANE_H + 4,
      width: Math.max(0.75, x(e.ts + e.dur) - x(e.ts)), height: LANE_H - 8,
    });
    rect.append(s('title', {}, `${e.name}: ${formatUs(e.dur)} at ${formatUs(e.ts)}`));
    svg.append(rect);
  }
  const axisY = MARGIN.top + LANES.length * LANE_H;
  svg.append(s('line', { class: 'axis', x1: MARGIN.left, x2: width - MARGIN.right, y1: axisY, y2: axisY }));
  const step = niceStep(end, Math.max(2, Math.floor(plotW / 110)));
  for (let t = 0; t <= end * 1.0001; t += step) {
    svg.append(s('line', { class: 'axis', x1: x(t), x2: x(t), y1: axisY, y2: axisY + 4 }));
    const anchor = x(t) > width - MARGIN.right - 40 ? 'end' : 'middle';
    svg.append(s('text', { class: 'tick', x: x(t), y: axisY + 18, 'text-anchor': anchor }, formatUs(t)));
  }
  const legend = document.createElement('div');
  legend.className = 'chart-legend';
  for (const [cls, text] of [['compute', 'compute kernel'], ['comm', 'collective'], ['exposed', 'compute waiting on a collective']]) {
    const item = document.createElement('span');
    item.className = `legend-item ${cls}`;
    item.textContent = text;
    legend.append(item);
  }
  container.replaceChildren(legend, svg);
}
