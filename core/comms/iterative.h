// core/comms — what the two iterative passes share
// (reorder_communication_preserving_peak_memory, sink_waits_iterative): the
// order as an OrderTree that carries Inductor's curr_memory bookkeeping
// (snodes_allocfree, buf_to_snode_last_use, seeded from core/memory's
// estimate_peak_memory_allocfree), the budget test, and the exposed-time
// measures (_coll_exposed_communication_time, _wait_exposed_communication_time)
// answered by the tree's sums instead of a walk along the list.
//
// Both passes move a group one candidate at a time in the reference. Here a
// run of candidates that would each take the plain swap (no data dependency,
// no change of a buffer's last use, the peak within budget, no runtime
// estimations) is passed in one move; each other candidate goes through
// Inductor's named steps one at a time. The orders are the reference's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/comms/comm_graph.h"
#include "core/comms/order_tree.h"
#include "core/comms/passes.h"
#include "core/memory/planning_info.h"
#include "core/util/adjacency.h"

namespace schedlab::comms_detail {

// A role bit of the tree only: a collective that is not async (shard_dim_alltoall).
inline constexpr std::uint8_t kRoleSyncCollective = 32;

struct IterativeState {
  const CommGraph& cg;
  MemoryPlanningInfo info;
  std::vector<double> runtime;  // scaled by the passes' multipliers
  std::int64_t peak = 0;        // the input's peak: the budget's base
  double budget = 0;            // the pass's peak-memory budget (a fraction of `peak`)
  std::int64_t max_potential_peak = 0;  // the largest potential peak the budget allows
  std::vector<NodeId> last_use;         // per buffer; kNone for buffers never freed
  std::vector<std::vector<BufId>> last_used_by;  // per node: buffers it was made the last use of (may be stale)
  Adjacency bufs_of_successor;          // per node: freed buffers it keeps alive (_build_candidate_buffer_map)
  Adjacency data_readers;               // per node: nodes with a data dependency on one of its outputs
  OrderTree order;

  bool within_budget(std::int64_t potential_peak) const;
  std::int32_t position(NodeId v) const { return order.position(v); }
};

// _initialize_memory_tracking and the list; `budget` is the pass's
// peak-memory budget; `planning` is the planning info of any order of the
// graph (re-planned here for `order`).
IterativeState init_iterative_state(const CommGraph& cg, const Order& order, double comm_mult, double non_comm_mult, double budget,
                                    const MemoryPlanningInfo& planning);

// The two passes, given the planning info of any order of the graph: for
// callers that run them many times (overlap_schedule), so that it is computed once.
CommPassResult reorder_communication_preserving_peak_memory(const CommGraph& cg, const Order& order, const CommKnobs& k,
                                                            const MemoryPlanningInfo& planning);
CommPassResult sink_waits_iterative(const CommGraph& cg, const Order& order, const CommKnobs& k, const MemoryPlanningInfo& planning);

struct Exposure {
  double comm_us = 0;
  double comp_us = 0;
  bool reset = false;  // wait measure only: the accumulated compute was zeroed on the way
};

// _coll_exposed_communication_time: compute after `collective` up to the
// first node that reads its output (or a synchronous collective).
Exposure collective_exposure(IterativeState& s, NodeId collective);
// _wait_exposed_communication_time: compute before `wait` back to its
// collective, restarting after an inner collective/wait pair or a
// synchronous collective.
Exposure wait_exposure(IterativeState& s, NodeId wait);

// Why `candidate` stops a move because of the peak-memory budget.
std::string peak_memory_limit(std::int64_t potential_peak, std::int64_t peak);

}  // namespace schedlab::comms_detail
