// core/memory — the ready-list loop (core/util/ready_list.h) over the
// planning info's node dependencies: a node is ready once every node in its
// pred_nodes has run. LPMF and BFS are strategies of it.
#pragma once

#include "core/memory/planning_info.h"
#include "core/util/ready_list.h"

namespace schedlab {

template <class Strategy>
Order schedule_by_planning_deps(const Graph& g, const MemoryPlanningInfo& info, const Order& input, Strategy& strategy) {
  std::vector<std::int32_t> unmet(g.nodes.size(), 0);
  for (NodeId v : input) unmet[v] = info.pred_nodes.degree(v);
  return run_ready_list(
      input, std::move(unmet),
      [&](NodeId v, auto&& release) {
        for (auto s : info.succ_nodes.row(v)) release(s);
      },
      strategy);
}

}  // namespace schedlab
