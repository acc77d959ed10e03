// The options panel (memory methods, comm passes in the order they run,
// their knobs, the hardware profile, a loaded profile file) and the page's
// URL, which carries the graph's URL and every option that differs from the
// CLI's defaults:
//   ?graph=URL&comm-passes=a,b,c&memory-methods=x,y&fuse=0&compare=1&hardware=NAME&knob.NAME=V&device-memory=80GiB&step=N
import { breakableName, h } from './format.js';

const $ = (id) => document.getElementById(id);

export class OptionsPanel {
  // checkOptions(options) -> Promise rejecting with core's message: a
  // loaded profile is checked before it is selected.
  constructor({ memoryMethods, commPasses, controls }, onChange, { checkOptions, onProfileError } = {}) {
    this.checkOptions = checkOptions;
    this.onProfileError = onProfileError;
    this.memoryMethods = memoryMethods;
    this.commPasses = commPasses || [];
    this.controls = controls;
    this.profileFile = null;  // {name, profile} from "Load profile…"
    this.onChange = onChange;
    $('memory-methods').replaceChildren(...memoryMethods.map((m) =>
      h('label', { class: 'check', title: m.summary },
        h('input', { type: 'checkbox', name: 'memory-method', value: m.name, checked: m.default }),
        h('span', { class: 'check-name' }, m.name),
        h('span', { class: 'check-summary' }, m.summary))));
    if (this.commPasses.length) {
      $('comm-options').hidden = false;
      this.renderPasses(this.commPasses.map((p) => ({ ...p, checked: p.default })));
      this.renderKnobs();
    }
    const hw = $('hardware-select');
    hw.replaceChildren(...controls.hardware.map((name) => h('option', { value: name, selected: name === controls.default_hardware }, name)));
    $('profile-button').addEventListener('click', () => $('profile-input').click());
    $('profile-input').addEventListener('change', async (e) => {
      const file = e.target.files[0];
      e.target.value = '';
      if (file) this.loadProfile(file.name, await file.text());
    });
  }

  renderPasses(passes) {
    const list = $('comm-passes');
    list.replaceChildren(...passes.map((p, i) => {
      const move = (by, label) => h('button', {
        type: 'button', class: 'move', title: `${label} ${p.name}`, 'aria-label': `${label} ${p.name}`, disabled: i + by < 0 || i + by >= passes.length,
        onclick: () => this.movePass(p.name, by),
      }, by < 0 ? '↑' : '↓');
      return h('li', { class: 'pass-item', 'data-pass': p.name },
        h('label', { class: 'check', title: p.summary },
          h('input', { type: 'checkbox', name: 'comm-pass', value: p.name, checked: p.checked }),
          h('span', { class: 'check-name' }, breakableName(p.name)),
          h('span', { class: 'check-summary' }, p.summary)),
        h('span', { class: 'moves' }, move(-1, 'move up'), move(1, 'move down')));
    }));
  }

  currentPasses() {
    return [...document.querySelectorAll('#comm-passes li')].map((li) => {
      const p = this.commPasses.find((x) => x.name === li.dataset.pass);
      return { ...p, checked: li.querySelector('input').checked };
    });
  }

  movePass(name, by) {
    const passes = this.currentPasses();
    const i = passes.findIndex((p) => p.name === name);
    const [p] = passes.splice(i, 1);
    passes.splice(i + by, 0, p);
    this.renderPasses(passes);
    const button = document.querySelector(`#comm-passes li[data-pass="${name}"] .move:not([disabled])`);
    if (button) button.focus();
  }

  // Checks exactly `names`, in that order, ahead of the rest.
  setPasses(names) {
    const all = this.currentPasses();
    const chosen = names.map((n) => all.find((p) => p.name === n)).filter(Boolean).map((p) => ({ ...p, checked: true }));
    const rest = all.filter((p) => !names.includes(p.name)).map((p) => ({ ...p, checked: false }));
    this.renderPasses([...chosen, ...rest]);
  }

  renderKnobs() {
    const knobs = this.controls.comm_knobs || {};
    $('comm-knobs').replaceChildren(...Object.entries(knobs).map(([name, value]) => {
      const id = `knob-${name}`;
      const input = typeof value === 'boolean'
        ? h('input', { id, type: 'checkbox', name: 'knob', 'data-knob': name, checked: value })
        : h('input', { id, type: typeof value === 'number' || value === null ? 'number' : 'text', step: 'any', name: 'knob', 'data-knob': name, value,
          placeholder: value === null ? 'unset' : null });
      return h('div', { class: 'knob' }, h('label', { for: id }, breakableName(name)), input);
    }));
  }

  // Knobs that differ from Inductor's defaults.
  changedKnobs() {
    const defaults = this.controls.comm_knobs || {};
    const out = {};
    for (const input of document.querySelectorAll('#comm-knobs input')) {
      const name = input.dataset.knob;
      const d = defaults[name];
      if (input.type !== 'checkbox' && input.value === '') continue;  // left empty: the default (unset when null)
      const v = input.type === 'checkbox' ? input.checked : input.type === 'number' ? Number(input.value) : input.value;
      if (v !== d) out[name] = v;
    }
    return out;
  }

  setKnob(name, value) {
    const input = document.querySelector(`#comm-knobs input[data-knob="${CSS.escape(name)}"]`);
    if (!input) return false;
    if (input.type === 'checkbox') input.checked = value === '1' || value === 'true';
    else input.value = value;
    return true;
  }

  // A profile file is checked by core before it is selected: a bad one (a
  // measured file, a graph) is named as the culprit and the selection stays
  // as it was, so later plans do not fail on it.
  async loadProfile(name, text) {
    let profile;
    try {
      profile = JSON.parse(text);
      if (this.checkOptions) await this.checkOptions({ hardware: profile });
    } catch (e) {
      const message = `profile file ${name}: ${e instanceof SyntaxError ? `not valid JSON (${e.message})` : e.message}`;
      if (this.onProfileError) this.onProfileError(message);
      return false;
    }
    this.profileFile = { name, profile };
    const hw = $('hardware-select');
    hw.querySelector('option[value="file:"]')?.remove();
    hw.append(h('option', { value: 'file:' }, `file: ${name}`));
    hw.value = 'file:';
    if (this.onChange) this.onChange();
    return true;
  }

  // The options for core's parse_plan_options; defaults are left out, so a
  // plan with the panel untouched is the CLI's default plan.
  options() {
    const checked = (name) => [...document.querySelectorAll(`input[name="${name}"]:checked`)].map((i) => i.value);
    const options = { memory_methods: checked('memory-method') };
    if (this.commPasses.length) {
      options.comm_passes = checked('comm-pass');
      const knobs = this.changedKnobs();
      if (Object.keys(knobs).length) options.comm = knobs;
      if ($('compare-option').checked) options.compare = true;
    }
    options.fuse = $('fuse-option').checked;
    const hw = $('hardware-select').value;
    if (hw === 'file:' && this.profileFile) options.hardware = this.profileFile.profile;
    else if (hw && hw !== this.controls.default_hardware) options.hardware = hw;
    const device = $('device-memory').value.trim();
    if (device) options.device_memory = /^\d+$/.test(device) ? Number(device) : device;
    return options;
  }

  // ---- the URL ------------------------------------------------------------------

  // Applies the options a URL carries; returns the problems (unknown names).
  applyUrl(params) {
    const problems = [];
    const list = (key) => (params.get(key) || '').split(',').map((x) => x.trim()).filter(Boolean);
    if (params.has('memory-methods')) {
      const names = list('memory-methods');
      for (const n of names) if (!this.memoryMethods.some((m) => m.name === n)) problems.push(`memory-methods: unknown method "${n}"`);
      for (const input of document.querySelectorAll('input[name="memory-method"]')) input.checked = names.includes(input.value);
    }
    if (params.has('comm-passes')) {
      const names = list('comm-passes');
      for (const n of names) if (!this.commPasses.some((p) => p.name === n)) problems.push(`comm-passes: unknown pass "${n}"`);
      this.setPasses(names);
    }
    if (params.has('fuse')) $('fuse-option').checked = !['0', 'false', 'no'].includes(params.get('fuse'));
    if (params.has('compare')) $('compare-option').checked = !['0', 'false', 'no'].includes(params.get('compare'));
    if (params.has('hardware')) {
      const hw = params.get('hardware');
      if (this.controls.hardware.includes(hw)) $('hardware-select').value = hw;
      else problems.push(`hardware: unknown profile "${hw}"`);
    }
    if (params.has('device-memory')) $('device-memory').value = params.get('device-memory');
    for (const [key, value] of params) {
      if (key.startsWith('knob.') && !this.setKnob(key.slice(5), value)) problems.push(`${key}: unknown knob`);
    }
    return problems;
  }

  // The URL of this page showing `graphUrl` with these options (and `step`).
  urlFor(graphUrl, step) {
    const params = new URLSearchParams();
    if (graphUrl) params.set('graph', graphUrl);
    const o = this.options();
    const defaults = this.memoryMethods.filter((m) => m.default).map((m) => m.name).join(',');
    if (o.memory_methods.join(',') !== defaults) params.set('memory-methods', o.memory_methods.join(','));
    if (o.comm_passes && o.comm_passes.length) params.set('comm-passes', o.comm_passes.join(','));
    if (!o.fuse) params.set('fuse', '0');
    if (o.compare) params.set('compare', '1');
    if (typeof o.hardware === 'string') params.set('hardware', o.hardware);
    for (const [k, v] of Object.entries(o.comm || {})) params.set(`knob.${k}`, String(v));
    if (o.device_memory !== undefined) params.set('device-memory', String(o.device_memory));
    if (step !== null && step !== undefined) params.set('step', String(step));
    const query = params.toString().replace(/%2C/g, ',').replace(/%2F/g, '/');
    return `${location.pathname}${query ? `?${query}` : ''}`;
  }
}
