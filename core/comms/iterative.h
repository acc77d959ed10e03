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
#include <memory>
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

// What the passes read that no order changes: the roles, the runtimes
// scaled by the passes' multipliers, each collective's waits (the tree's
// keys), the data readers, and the planning info of some order of the graph
// (re-planned per run). overlap_schedule builds one for all its runs.
struct IterativeGraph {
  const CommGraph& cg;
  const MemoryPlanningInfo& planning;
  bool replan_per_order = false;     // freeable_input_sizes_depend_on_order
  Adjacency bufs_of_successor;       // of `planning` (see buffers_kept_alive); empty when re-planned per run
  std::vector<double> runtime;       // scaled by the passes' multipliers
  std::vector<double> compute;       // runtime, 0 for collectives (they run on the comm stream)
  std::vector<std::uint8_t> role;    // cg.role plus kRoleSyncCollective
  Adjacency waits_of_collective;     // per collective: its waits (key sources)
  Adjacency collectives_of_wait;     // the reverse (key dependents)
  Adjacency data_readers;            // per node: nodes with a data dependency on one of its outputs
};

// The runtimes are scaled by the knobs reorder_sink_runtime_estimations_*_mult;
// `planning` is planned for `order`.
IterativeGraph make_iterative_graph(const CommGraph& cg, const CommKnobs& k, const MemoryPlanningInfo& planning, const Order& order);

// _build_candidate_buffer_map: per node, the buffers it keeps alive among
// those ever freed (`last_use` of any order: every producer and user runs
// once in each, so which buffers are freed does not depend on the order).
Adjacency buffers_kept_alive(const MemoryPlanningInfo& info, const std::vector<NodeId>& last_use, std::int32_t num_nodes);

struct IterativeState {
  const CommGraph& cg;
  // Planned for the pass's input order: the graph's own planning when no
  // order changes it (freeable_input_sizes_depend_on_order), else re-planned here.
  struct Replanned {
    MemoryPlanningInfo info;
    Adjacency bufs_of_successor;
  };
  std::unique_ptr<const Replanned> replanned;
  const MemoryPlanningInfo& info;
  const Adjacency& bufs_of_successor;  // per node: freed buffers it keeps alive
  const std::vector<double>& runtime;  // the graph's scaled runtimes
  const Adjacency& data_readers;       // the graph's
  std::int64_t peak = 0;        // the input's peak: the budget's base
  double budget = 0;            // the pass's peak-memory budget (a fraction of `peak`)
  std::int64_t max_potential_peak = 0;  // the largest potential peak the budget allows
  std::vector<NodeId> last_use;         // per buffer; kNone for buffers never freed
  OrderTree order;

  bool within_budget(std::int64_t potential_peak) const;
  std::int32_t position(NodeId v) const { return order.position(v); }
};

// _initialize_memory_tracking and the list; `budget` is the pass's
// peak-memory budget; the tree is built in `tree_storage` (see OrderTree::Storage).
IterativeState init_iterative_state(const IterativeGraph& graph, const Order& order, double budget, OrderTree::Storage tree_storage = {});

// What a pass reports: everything (the pass on its own), or the order alone
// (overlap_schedule's inner runs, which weigh the order themselves).
enum class IterativeReport { Full, OrderOnly };

// The two passes on a shared IterativeGraph: for callers that run them many
// times (overlap_schedule), so that what no order changes is built once and
// each run's tree is built in the previous run's (`tree_storage`, taken and
// handed back).
CommPassResult reorder_communication_preserving_peak_memory(const IterativeGraph& graph, const Order& order, const CommKnobs& k,
                                                            IterativeReport report, OrderTree::Storage& tree_storage);
CommPassResult sink_waits_iterative(const IterativeGraph& graph, const Order& order, const CommKnobs& k, IterativeReport report,
                                    OrderTree::Storage& tree_storage);

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
