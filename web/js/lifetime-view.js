// Stacked lifetimes around a step (memory_viz's blocks): every band core's
// held_bands gives for a window of steps (a buffer over its life; a
// multi-output kernel's items each over their own life, held by their
// container) stacked in allocation order, so a freed buffer lets those above
// it drop. The bands sum to the memory curve at every step: bands past the
// drawing limit are one grey "smaller buffers" band, never left out. Colour
// says what the buffer is (input, activation, output, collective buffer);
// hovering or focusing a band tells its producer, kernel, dtype, shape, last
// user and life.
import { byteScale, h, humanBytes } from './format.js';

const SVG = 'http://www.w3.org/2000/svg';
const MAX_BANDS = 400;
const M = { left: 64, right: 10, top: 8, bottom: 26 };
export const CATEGORIES = ['input', 'activation', 'output', 'collective'];

function s(tag, attrs = {}, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

export function describeBuffer(b) {
  if (b.aggregate) return [`${b.count} smaller buffers · ${humanBytes(b.bytes)} at most`, 'drawn as one band so the stack still sums to the live total'];
  const shape = b.shape && b.shape.length ? `[${b.shape.join(', ')}]` : '';
  const life = b.never_freed ? 'allocated again by this multi-output container for an item another container owns: never freed'
    : `live steps ${b.start}–${b.to_end ? 'end (graph output)' : b.end}${b.last_user ? ` · last user ${b.last_user}` : ''}`;
  return [
    `${b.buffer} · ${humanBytes(b.bytes)} · ${b.category}`,
    b.producer ? `made by ${b.producer}${b.kernel ? ` (kernel ${b.kernel})` : ''}` : 'graph input',
    b.owner ? `an output of a multi-output kernel: held in ${b.owner} from its step` : '',
    `${b.dtype || ''} ${shape}`.trim() || 'no dtype or shape in the graph',
    b.data_dependent ? `data-dependent size: counted at Inductor's hint; ${humanBytes(b.hint_bytes)} as executed` : '',
    life,
  ].filter(Boolean);
}

// The stack's total at step t: what the curve says is live there.
export function stackedTotal(lifetimes, t) {
  let total = 0;
  for (const b of lifetimes) if (b.start <= t && t <= b.end) total += b.bytes;
  return total;
}

// lifetimes: the worker's list for steps [from, to]; step: the one marked.
export function renderLifetimes(container, lifetimes, { from, to, step, detail }) {
  const width = Math.max(280, container.clientWidth);
  const height = 240;
  let bands = [...lifetimes].sort((a, b) => a.start - b.start || b.bytes - a.bytes);
  let dropped = [];
  if (bands.length > MAX_BANDS) {
    const keep = new Set([...bands].sort((a, b) => b.bytes - a.bytes).slice(0, MAX_BANDS - 1));
    dropped = bands.filter((b) => !keep.has(b));
    bands = bands.filter((b) => keep.has(b));
  }
  const steps = to - from + 1;
  if (dropped.length) {
    // One band on top, as high at each step as the smaller buffers held there.
    const held = new Float64Array(steps);
    for (const b of dropped) for (let t = Math.max(from, b.start); t <= Math.min(to, b.end); t++) held[t - from] += b.bytes;
    bands.push({ aggregate: true, held, buffer: 'smaller buffers', count: dropped.length, bytes: Math.max(...held), start: from, end: to, category: 'other' });
  }
  // Stack per step, in allocation order.
  const base = bands.map(() => new Float64Array(steps).fill(-1));
  let maxTotal = 1;
  for (let t = from; t <= to; t++) {
    let acc = 0;
    bands.forEach((b, i) => {
      const bytes = b.aggregate ? b.held[t - from] : b.bytes;
      if (b.start <= t && t <= b.end && bytes > 0) {
        base[i][t - from] = acc;
        acc += bytes;
      }
    });
    if (t === step) container.dataset.stackTotal = acc;
    maxTotal = Math.max(maxTotal, acc);
  }
  const plotW = width - M.left - M.right;
  const plotH = height - M.top - M.bottom;
  const x = (t) => M.left + ((t - from) / steps) * plotW;
  const y = (bytes) => M.top + plotH - (bytes / maxTotal) * plotH;
  const svg = s('svg', { class: 'lifetimes', viewBox: `0 0 ${width} ${height}`, width, height, role: 'group',
    'aria-label': `buffers alive in steps ${from} to ${to}, stacked in allocation order` });
  const { unit, div } = byteScale(maxTotal);
  for (const f of [0, 0.5, 1]) {
    svg.append(s('line', { class: 'grid', x1: M.left, x2: width - M.right, y1: y(maxTotal * f), y2: y(maxTotal * f) }));
    svg.append(s('text', { class: 'tick', x: M.left - 6, y: y(maxTotal * f) + 4, 'text-anchor': 'end' }, `${+((maxTotal * f) / div).toFixed(1)} ${unit}`));
  }
  bands.forEach((b, i) => {
    // One path per band: runs of steps at the same height become one rectangle.
    let d = '';
    for (let k = 0; k < steps; k++) {
      const b0 = base[i][k];
      if (b0 < 0) continue;
      const top = b.aggregate ? b.held[k] : b.bytes;
      let k2 = k;
      while (k2 + 1 < steps && base[i][k2 + 1] === b0 && (!b.aggregate || b.held[k2 + 1] === top)) k2++;
      const x0 = x(from + k);
      const x1 = x(from + k2 + 1);
      d += `M${x0.toFixed(1)},${y(b0 + top).toFixed(1)}H${x1.toFixed(1)}V${y(b0).toFixed(1)}H${x0.toFixed(1)}Z`;
      k = k2;
    }
    if (!d) return;
    const path = s('path', { class: `band ${b.category}${b.owner ? ' item' : ''}${b.data_dependent ? ' data-dependent' : ''}`, d,
      tabindex: i < 40 ? 0 : -1, 'data-buffer': b.buffer });
    path.append(s('title', {}, describeBuffer(b).join('\n')));
    const show = () => detail(b);
    path.addEventListener('pointerenter', show);
    path.addEventListener('focus', show);
    svg.append(path);
  });
  svg.append(s('line', { class: 'pin', x1: x(step) + plotW / steps / 2, x2: x(step) + plotW / steps / 2, y1: M.top, y2: M.top + plotH }));
  const tickEvery = Math.max(1, Math.ceil(steps / Math.max(2, Math.floor(plotW / 60))));
  for (let t = from; t <= to; t += tickEvery) {
    svg.append(s('text', { class: 'tick', x: x(t) + plotW / steps / 2, y: height - 8, 'text-anchor': 'middle' }, t));
  }
  container.replaceChildren(
    h('div', { class: 'chart-legend' }, CATEGORIES.map((c) => h('span', { class: `legend-item band-${c}` }, c))),
    svg,
    dropped.length ? h('p', { class: 'muted' }, `${dropped.length} smaller buffers drawn as one grey band`) : '');
  container.dataset.bands = bands.length;
  container.dataset.step = step;
}
