// The front end's report (plan.front_end, for a pre-fusion input): the fused
// groups with their members, dead code removed, and why candidate pairs were
// refused (reason -> count), as core's fusion reports them. The worker sends
// the first groups of more than one node and their count (the plan JSON has
// them all), so the page never holds tens of thousands of rows.
import { h } from './format.js';

export function renderFusion(container, fe) {
  const shown = fe.fused_groups_shown;
  const refusals = Object.entries(fe.refusals || {}).sort((a, b) => b[1] - a[1]);
  container.replaceChildren(
    h('p', { class: 'muted' },
      `${fe.input_nodes} pre-fusion nodes → ${fe.output_nodes} nodes (${fe.fused_group_count} fused groups) in ${fe.rounds} rounds; `,
      `${fe.eliminated_count} dead nodes removed; ${fe.pairs_considered} candidate pairs considered.`),
    h('div', { class: 'fusion-layout' },
      h('div', {},
        h('h3', {}, 'Fused groups'),
        h('div', { class: 'table-scroll' },
          h('table', {},
            h('thead', {}, h('tr', {}, h('th', {}, 'node'), h('th', { class: 'num' }, 'members'), h('th', {}, 'operations'))),
            h('tbody', {}, shown.map((g) => h('tr', { class: 'fusion-group' },
              h('td', { class: 'name' }, g.name), h('td', { class: 'num' }, g.members.length),
              h('td', { class: 'reason' }, g.members.join(', '))))))),
        fe.fused_group_count > shown.length ? h('p', { class: 'muted' }, `… ${fe.fused_group_count - shown.length} more groups (all of them are in the exported plan JSON)`) : ''),
      h('div', {},
        h('h3', {}, 'Why pairs did not fuse'),
        refusals.length
          ? h('table', {},
            h('thead', {}, h('tr', {}, h('th', {}, 'reason'), h('th', { class: 'num' }, 'pairs'))),
            h('tbody', {}, refusals.map(([reason, count]) => h('tr', {}, h('td', { class: 'reason' }, reason), h('td', { class: 'num' }, count)))))
          : h('p', { class: 'muted' }, 'no candidate pair was refused'),
        fe.eliminated_count ? h('p', { class: 'muted' }, `dead code: ${fe.eliminated_shown.join(', ')}${fe.eliminated_count > fe.eliminated_shown.length ? ` … and ${fe.eliminated_count - fe.eliminated_shown.length} more` : ''}`) : '')));
}
