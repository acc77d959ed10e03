// Formatting shared by the playground and the widget.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];

// Human units, as core's human_bytes(): "36.10 MiB", "812 B".
export function humanBytes(bytes) {
  const sign = bytes < 0 ? '-' : '';
  let v = Math.abs(bytes);
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u += 1;
  }
  return u === 0 ? `${sign}${v} B` : `${sign}${v.toFixed(2)} ${UNITS[u]}`;
}

// The unit a whole axis uses (so tick labels share one unit).
export function byteScale(maxBytes) {
  let u = 0;
  let div = 1;
  while (maxBytes / div >= 1024 && u < UNITS.length - 1) {
    div *= 1024;
    u += 1;
  }
  return { unit: UNITS[u], div };
}

export function percentChange(from, to) {
  if (!from) return '';
  const p = ((to - from) / from) * 100;
  if (Math.abs(p) < 0.05) return '±0%';
  return `${p > 0 ? '+' : '−'}${Math.abs(p).toFixed(1)}%`;
}

export function formatMs(ms) {
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}

// Microseconds in the unit that reads best, with 3 significant digits at most.
export function formatUs(us) {
  const digits = (v) => (v < 10 ? 2 : v < 100 ? 1 : 0);
  if (us >= 1e6) return `${(us / 1e6).toFixed(digits(us / 1e6))} s`;
  if (us >= 1000) return `${(us / 1000).toFixed(digits(us / 1000))} ms`;
  return `${us.toFixed(us === 0 ? 0 : digits(us))} µs`;
}

// A snake_case name as text with a line-break opportunity after each
// underscore (<wbr>), so a long pass or knob name wraps at its words in a
// narrow column instead of mid-word; its textContent stays the name.
export function breakableName(name) {
  const parts = [];
  name.split(/(?<=_)/).forEach((part, i) => {
    if (i) parts.push(document.createElement('wbr'));
    parts.push(part);
  });
  return parts;
}

// "Will it fit?" (schedplan/1 `device_fit`) in words, for the page and the
// widget: {verdict: "Fits" | "Does not fit" | "Within the stated margin",
// margin: "1.20 GiB to spare" | "… short"}.
export function fitWords(f) {
  const verdicts = { fits: 'Fits', does_not_fit: 'Does not fit', within_margin: 'Within the stated margin' };
  return {
    verdict: verdicts[f.verdict] || f.verdict,
    margin: f.margin_bytes >= 0 ? `${humanBytes(f.margin_bytes)} to spare` : `${humanBytes(-f.margin_bytes)} short`,
  };
}

// Builds an element: h('div', {class: 'x', 'data-testid': 'y'}, child, 'text', ...).
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}
