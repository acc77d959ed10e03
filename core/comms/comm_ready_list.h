// core/comms — the ready-list loop (core/util/ready_list.h) over a
// CommGraph's dependencies: a node is ready once the producers of all its
// unmet buffers (fake deps included) have run. _schedule_for_comm and
// overlap_schedule's list scheduler are strategies of it.
#pragma once

#include "core/comms/comm_graph.h"
#include "core/util/ready_list.h"

namespace schedlab {

template <class Strategy>
Order schedule_by_comm_deps(const CommGraph& cg, const Order& order, Strategy& strategy) {
  std::vector<std::int32_t> unmet(static_cast<std::size_t>(cg.num_nodes()), 0);
  for (NodeId v : order) unmet[v] = cg.unmet_bufs.degree(v);
  return run_ready_list(
      order, std::move(unmet),
      [&](NodeId v, auto&& release) {
        for (BufId b : cg.graph->nodes[v].outputs)
          for (NodeId u : cg.buffer_users.row(b)) release(u);
      },
      strategy);
}

}  // namespace schedlab
