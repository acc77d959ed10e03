// The front end's report (plan.front_end, for a pre-fusion input): the fused
// groups with their members, dead code removed, and why candidate pairs were
// refused (reason -> count), as core's fusion reports them. A big graph's
// groups are listed up to SHOWN_GROUPS (the plan JSON has them all), so the
// page never holds tens of thousands of rows.
import { h } from './format.js';

const SHOWN_GROUPS = 300;

export function renderFusion(container, fe) {
  const groups = fe.fused_groups.filter((g) => g.members.length > 1);
  const shown = groups.slice(0, SHOWN_GROUPS);
  const refusals = Object.entries(fe.refusals || {}).sort((a, b) => b[1] - a[1]);
  container.replaceChildren(
    h('p', { class: 'muted' },
      `${fe.input_nodes} pre-fusion nodes → ${fe.output_nodes} nodes (${groups.length} fused groups) in ${fe.rounds} rounds; `,
      `${fe.eliminated.length} dead nodes removed; ${fe.pairs_considered} candidate pairs considered.`),
    h('div', { class: 'fusion-layout' },
      h('div', {},
        h('h3', {}, 'Fused groups'),
        h('div', { class: 'table-scroll' },
          h('table', {},
            h('thead', {}, h('tr', {}, h('th', {}, 'node'), h('th', { class: 'num' }, 'members'), h('th', {}, 'operations'))),
            h('tbody', {}, shown.map((g) => h('tr', { class: 'fusion-group' },
              h('td', { class: 'name' }, g.name), h('td', { class: 'num' }, g.members.length),
              h('td', { class: 'reason' }, g.members.join(', '))))))),
        groups.length > shown.length ? h('p', { class: 'muted' }, `… ${groups.length - shown.length} more groups (all of them are in the exported plan JSON)`) : ''),
      h('div', {},
        h('h3', {}, 'Why pairs did not fuse'),
        refusals.length
          ? h('table', {},
            h('thead', {}, h('tr', {}, h('th', {}, 'reason'), h('th', { class: 'num' }, 'pairs'))),
            h('tbody', {}, refusals.map(([reason, count]) => h('tr', {}, h('td', { class: 'reason' }, reason), h('td', { class: 'num' }, count)))))
          : h('p', { class: 'muted' }, 'no candidate pair was refused'),
        fe.eliminated.length ? h('p', { class: 'muted' }, `dead code: ${fe.eliminated.slice(0, 200).join(', ')}${fe.eliminated.length > 200 ? ` … and ${fe.eliminated.length - 200} more` : ''}`) : '')));
}
