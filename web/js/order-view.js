// The final order against the baseline: one row per step with its baseline
// step and shift. "Moved" nodes are the fewest whose relocation explains the
// new order: every node outside a longest run that keeps its baseline
// relative order (a longest increasing subsequence of baseline steps). One
// node hoisted ten steps is one moved node, not ten shifted ones.
//
// The list is virtual: only the rows in view (and a few around) exist in the
// DOM, so 100k rows scroll like 100. Search filters by node name, or by a
// buffer name (rows of the nodes that produce matching buffers).
import { h } from './format.js';

const ROW_H = 26;
const OVERSCAN = 12;

// Marks the members of one longest strictly increasing subsequence of `xs`
// (patience sorting with back links, O(n log n)).
export function longestIncreasingRun(xs) {
  const tails = [];  // tails[k]: index in xs of the smallest tail of a run of length k+1
  const prev = new Int32Array(xs.length).fill(-1);
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (xs[tails[mid]] < x) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[i] = tails[lo - 1];
    tails[lo] = i;
  }
  const inRun = new Uint8Array(xs.length);
  for (let i = tails.length ? tails[tails.length - 1] : -1; i >= 0; i = prev[i]) inRun[i] = 1;
  return inRun;
}

export class OrderView {
  // names: the final order's node names; baselineSteps: for each of its
  // steps, the step of the same node in the planned graph's baseline. findBuffers(query) -> Promise<Set of node names> (producers of
  // matching buffers). onHover(step | null), onSelect(step).
  constructor(container, names, baselineSteps, { findBuffers = null, onHover = null, onSelect = null } = {}) {
    this.container = container;
    this.names = names;
    this.onHover = onHover;
    this.onSelect = onSelect;
    this.findBuffers = findBuffers;
    this.from = baselineSteps;
    this.kept = longestIncreasingRun(this.from);
    let moved = 0;
    for (let i = 0; i < names.length; i++) moved += !this.kept[i];
    this.moved = moved;
    this.onlyMoved = moved > 0 && names.length > 400;
    this.query = '';
    this.highlighted = null;

    const toggle = h('input', { type: 'checkbox', checked: this.onlyMoved, 'data-testid': 'only-moved' });
    toggle.addEventListener('change', () => {
      this.onlyMoved = toggle.checked;
      this.filter();
    });
    this.search = h('input', { type: 'search', class: 'order-search', placeholder: 'search node or buffer', 'aria-label': 'search the order by node or buffer name', 'data-testid': 'order-search' });
    let searchTimer = 0;
    this.search.addEventListener('input', () => {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(() => this.filter(), 120);
    });
    this.count = h('span', { class: 'muted order-count', 'aria-live': 'off' });
    this.spacer = h('div', { class: 'order-spacer' });
    this.rowsBox = h('div', { class: 'order-rows', role: 'rowgroup' });
    this.scroller = h('div', { class: 'order-scroll', tabindex: 0, role: 'table', 'aria-label': 'final order', 'data-testid': 'order-scroll' },
      h('div', { class: 'order-row order-header', role: 'row' },
        h('span', { class: 'num', role: 'columnheader' }, 'step'), h('span', { role: 'columnheader' }, 'node'),
        h('span', { class: 'num', role: 'columnheader' }, 'baseline'), h('span', { class: 'num', role: 'columnheader' }, 'shift')),
      this.spacer, this.rowsBox);
    this.scroller.addEventListener('scroll', () => this.render());
    this.scroller.addEventListener('keydown', (e) => this.onKey(e));
    this.rowsBox.addEventListener('pointerover', (e) => {
      const row = e.target.closest('.order-row[data-step]');
      if (row && this.onHover) this.onHover(Number(row.dataset.step));
    });
    this.rowsBox.addEventListener('pointerleave', () => this.onHover && this.onHover(null));
    this.rowsBox.addEventListener('click', (e) => {
      const row = e.target.closest('.order-row[data-step]');
      if (row && this.onSelect) this.onSelect(Number(row.dataset.step));
    });
    container.replaceChildren(
      h('div', { class: 'order-head' },
        h('span', {}, `${moved} of ${names.length} nodes moved against the baseline (the rest keep their relative order)`),
        h('div', { class: 'order-tools' }, this.search, h('label', { class: 'inline' }, toggle, ' only moved nodes'), this.count)),
      this.scroller);
    this.filter();
  }

  async filter() {
    const q = this.search.value.trim();
    let producers = null;
    if (q && this.findBuffers) producers = await this.findBuffers(q);
    if (q !== this.search.value.trim()) return;  // a newer query is on its way
    const rows = [];
    for (let i = 0; i < this.names.length; i++) {
      if (this.onlyMoved && this.kept[i]) continue;
      if (q && !this.names[i].includes(q) && !(producers && producers.has(this.names[i]))) continue;
      rows.push(i);
    }
    this.rows = Int32Array.from(rows);
    this.count.textContent = `${rows.length} row${rows.length === 1 ? '' : 's'}`;
    this.spacer.style.height = `${rows.length * ROW_H}px`;
    this.scroller.dataset.rows = rows.length;
    this.pool = this.pool || [];
    this.render(true);
  }

  // Renders the rows in view only: a fixed pool of row elements stays in the
  // DOM and is refilled; rows whose step did not change are left alone.
  render(force = false) {
    const top = this.scroller.scrollTop;
    const viewH = this.scroller.clientHeight || 420;
    const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
    const last = Math.min(this.rows.length, Math.ceil((top + viewH) / ROW_H) + OVERSCAN);
    if (!force && this.window && this.window[0] === first && this.window[1] === last) return;
    this.window = [first, last];
    const needed = last - first;
    while (this.pool.length < needed) {
      const row = h('div', { class: 'order-row', role: 'row' },
        h('span', { class: 'num', role: 'cell' }), h('span', { class: 'name', role: 'cell' }), h('span', { class: 'num', role: 'cell' }),
        h('span', { class: 'num shift', role: 'cell' }));
      row.step = -1;
      this.pool.push(row);
      this.rowsBox.append(row);
    }
    for (let k = 0; k < this.pool.length; k++) {
      const row = this.pool[k];
      if (k >= needed) {
        if (!row.hidden) row.hidden = true;
        continue;
      }
      row.hidden = false;
      const step = this.rows[first + k];
      const className = `order-row${this.kept[step] ? '' : ' moved'}${step === this.highlighted ? ' highlighted' : ''}`;
      if (row.className !== className) row.className = className;
      if (row.pos !== first + k) {
        row.pos = first + k;
        row.style.transform = `translateY(${(first + k) * ROW_H}px)`;
      }
      if (row.step === step) continue;
      row.step = step;
      const shift = step - this.from[step];
      row.dataset.step = step;
      const [c0, c1, c2, c3] = row.children;
      c0.textContent = step;
      c1.textContent = this.names[step];
      c1.title = this.names[step];
      c2.textContent = this.from[step];
      c3.textContent = shift ? (shift > 0 ? `+${shift}` : `−${-shift}`) : '';
    }
    this.scroller.dataset.rendered = needed;
  }

  // Highlights a step's row (from the memory chart) and brings it into view
  // when the list shows it (a filter is never changed behind the user's back).
  highlight(step, { scroll = true } = {}) {
    this.highlighted = step;
    const k = step === null ? -1 : this.indexOf(step);
    if (k >= 0 && scroll) {
      const y = k * ROW_H;
      const viewH = this.scroller.clientHeight || 420;
      if (y < this.scroller.scrollTop + ROW_H || y > this.scroller.scrollTop + viewH - 2 * ROW_H) this.scroller.scrollTop = Math.max(0, y - viewH / 2);
    }
    this.render(true);
  }

  indexOf(step) {
    let lo = 0;
    let hi = this.rows.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.rows[mid] === step) return mid;
      if (this.rows[mid] < step) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  onKey(e) {
    const viewH = this.scroller.clientHeight || 420;
    const moves = { ArrowDown: ROW_H, ArrowUp: -ROW_H, PageDown: viewH - ROW_H, PageUp: -(viewH - ROW_H) };
    if (e.key in moves) {
      e.preventDefault();
      this.scroller.scrollTop += moves[e.key];
    } else if (e.key === 'Home') {
      e.preventDefault();
      this.scroller.scrollTop = 0;
    } else if (e.key === 'End') {
      e.preventDefault();
      this.scroller.scrollTop = this.rows.length * ROW_H;
    }
  }

  // Starts with the first moved node in view.
  scrollToFirstMoved() {
    for (let k = 0; k < this.rows.length; k++) {
      if (!this.kept[this.rows[k]]) {
        this.scroller.scrollTop = Math.max(0, k * ROW_H - 60);
        return;
      }
    }
  }
}
