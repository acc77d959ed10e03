// core/util — the one ready-list scheduling loop (the shape of LLVM's
// ScheduleDAGMI + MachineSchedStrategy). The driver owns the unmet-
// predecessor counts and releases a node when its count reaches zero; the
// strategy owns the ready set, indexed by its own priority, and is asked for
// the next node and told when one is scheduled:
//
//   struct Strategy {
//     void release(NodeId v);    // v became ready
//     NodeId pick();             // the next node to schedule, kNone to stop
//     void scheduled(NodeId v);  // v was placed (before its successors are released)
//   };
//
// LPMF, BFS, Inductor's _schedule_for_comm, overlap_schedule's list
// scheduler and the Kahn sorts are strategies of this loop.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "core/graph/graph.h"

namespace schedlab {

// Releases the nodes of `input` with no unmet predecessor (in input order),
// then schedules what the strategy picks until it picks kNone.
// `unmet[v]` counts v's predecessors; `for_each_successor(v, fn)` calls
// fn(s) once per counted edge v -> s. Returns the scheduled nodes in order.
template <class Strategy, class ForEachSuccessor>
Order run_ready_list(const Order& input, std::vector<std::int32_t> unmet, ForEachSuccessor&& for_each_successor, Strategy& strategy) {
  Order scheduled;
  scheduled.reserve(input.size());
  for (NodeId v : input)
    if (unmet[static_cast<std::size_t>(v)] == 0) strategy.release(v);
  for (NodeId v = strategy.pick(); v != kNone; v = strategy.pick()) {
    scheduled.push_back(v);
    strategy.scheduled(v);
    for_each_successor(v, [&](NodeId s) {
      if (--unmet[static_cast<std::size_t>(s)] == 0) strategy.release(s);
    });
  }
  return scheduled;
}

// The plainest strategy: first released, first scheduled (Kahn's sort).
struct FifoStrategy {
  std::deque<NodeId> ready;
  void release(NodeId v) { ready.push_back(v); }
  NodeId pick() {
    if (ready.empty()) return kNone;
    const NodeId v = ready.front();
    ready.pop_front();
    return v;
  }
  void scheduled(NodeId) {}
};

}  // namespace schedlab
