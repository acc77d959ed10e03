// The chosen order against the baseline: one row per step with its baseline
// step and shift. "Moved" nodes are the fewest whose relocation explains the
// new order: every node outside a longest run that keeps its baseline
// relative order (a longest increasing subsequence of baseline steps). One
// node hoisted ten steps is one moved node, not ten shifted ones. Large
// graphs render the first rows and a button for the rest.
import { h } from './format.js';

const FIRST_ROWS = 400;

// Marks the members of one longest strictly increasing subsequence of `xs`
// (patience sorting with back links, O(n log n)).
function longestIncreasingRun(xs) {
  const tails = [];  // tails[k]: index in xs of the smallest tail of a run of length k+1
  const prev = new Int32Array(xs.length).fill(-1);
  xs.forEach((x, i) => {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (xs[tails[mid]] < x) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[i] = tails[lo - 1];
    tails[lo] = i;
  });
  const inRun = new Uint8Array(xs.length);
  for (let i = tails.length ? tails[tails.length - 1] : -1; i >= 0; i = prev[i]) inRun[i] = 1;
  return inRun;
}

export function renderOrder(container, chosenOrder, baselineOrder) {
  const baselineStep = new Map(baselineOrder.map((name, i) => [name, i]));
  const from = chosenOrder.map((name) => baselineStep.get(name));
  const kept = longestIncreasingRun(from);
  const rows = chosenOrder.map((name, step) => ({ name, step, from: from[step], moved: !kept[step] }));
  const moved = rows.filter((r) => r.moved).length;
  let onlyMoved = moved > 0 && rows.length > FIRST_ROWS;
  let showAll = false;

  const table = h('table', { class: 'order-table' });
  const footer = h('div', { class: 'order-footer' });
  const toggle = h('input', { type: 'checkbox', id: 'only-moved', checked: onlyMoved });
  toggle.addEventListener('change', () => {
    onlyMoved = toggle.checked;
    draw();
  });

  function draw() {
    const visible = onlyMoved ? rows.filter((r) => r.moved) : rows;
    const shown = showAll ? visible : visible.slice(0, FIRST_ROWS);
    const body = h('tbody', {},
      shown.map((r) => {
        const shift = r.step - r.from;
        return h('tr', { class: r.moved ? 'moved' : '' },
          h('td', { class: 'num' }, r.step),
          h('td', { class: 'name' }, r.name),
          h('td', { class: 'num' }, r.from),
          h('td', { class: 'num shift' }, shift ? (shift > 0 ? `+${shift}` : `−${-shift}`) : ''));
      }));
    table.replaceChildren(
      h('thead', {}, h('tr', {}, h('th', { class: 'num' }, 'step'), h('th', {}, 'node'), h('th', { class: 'num' }, 'baseline step'), h('th', { class: 'num' }, 'shift'))),
      body);
    footer.replaceChildren();
    if (shown.length < visible.length) {
      footer.append(h('button', { type: 'button', onclick: () => { showAll = true; draw(); } },
        `Show all ${visible.length} rows`));
    }
  }

  const scroller = h('div', { class: 'table-scroll' }, table);
  container.replaceChildren(
    h('div', { class: 'order-head' },
      h('span', {}, `${moved} of ${rows.length} nodes moved against the baseline (the rest keep their relative order)`),
      h('label', { class: 'inline' }, toggle, ' only moved nodes')),
    scroller,
    footer);
  draw();
  // Start with the first moved node in view.
  const first = table.querySelector('tr.moved');
  if (first) scroller.scrollTop = Math.max(0, first.offsetTop - 60);
}
