// core/comms — internals shared by the two iterative passes
// (reorder_communication_preserving_peak_memory, sink_waits_iterative): the
// doubly linked order, the incremental memory tracking (Inductor's
// curr_memory / snodes_allocfree / buf_to_snode_last_use, seeded from
// core/memory's estimate_peak_memory_allocfree) and the exposed-time walks.
#pragma once

#include <cstdint>
#include <vector>

#include "core/comms/comm_graph.h"
#include "core/memory/planning_info.h"
#include "core/util/adjacency.h"

namespace schedlab::comms_detail {

// The order as a doubly linked list over NodeIds.
struct LinkedOrder {
  std::vector<NodeId> prev, next;
  NodeId head = kNone;

  static LinkedOrder from(const Order& order, std::int32_t num_nodes);
  Order to_order() const;
  // candidate_prev -> candidate -> [head..tail] -> x  becomes  candidate_prev -> [head..tail] -> candidate -> x
  void move_after(NodeId candidate, NodeId group_head, NodeId group_tail);
  // x -> [head..tail] -> candidate -> y  becomes  x -> candidate -> [head..tail] -> y
  void move_before(NodeId candidate, NodeId group_head, NodeId group_tail);
  // The nodes from `from` to `to`, inclusive, into `out` (reused: no allocation per call).
  void segment(NodeId from, NodeId to, std::vector<NodeId>& out) const;
};

// Memory state the swaps update in place; the values per NodeId.
struct IterativeMemory {
  MemoryPlanningInfo info;
  std::int64_t peak = 0;
  std::vector<std::int64_t> post_alloc, post_free;  // memory after the node's allocations / after its frees
  std::vector<std::int64_t> size_alloc, size_free;  // bytes the node allocates / frees
  std::vector<NodeId> last_use;                     // per buffer; kNone for buffers never freed
  Adjacency bufs_of_successor;                      // per node: freed buffers it keeps alive

  // A node's memory after its allocations is now `value`; after its frees
  // follows from what it frees.
  void set_post_alloc(NodeId v, std::int64_t value) {
    post_alloc[v] = value;
    post_free[v] = value - size_free[v];
  }
};

IterativeMemory init_iterative_memory(const Graph& g, const Order& order);

struct Exposure {
  double comm_us = 0;
  double comp_us = 0;
  bool reset = false;  // wait walk only: the accumulated compute was zeroed on the way
};

// _coll_exposed_communication_time: compute after `collective` up to the
// first node that reads its output (or a synchronous collective).
Exposure collective_exposure(const CommGraph& cg, const std::vector<double>& runtime, const LinkedOrder& list, NodeId collective);
// Scratch marks for wait_exposure, sized to the graph, reused across calls
// so that each walk costs O(length + degrees) instead of O(length x waits).
struct WaitScan {
  std::vector<std::uint32_t> read_by_wait, read_by_found;  // per node: stamp when marked
  std::uint32_t stamp = 0;
  explicit WaitScan(std::int32_t num_nodes) : read_by_wait(num_nodes, 0), read_by_found(num_nodes, 0) {}
};

// _wait_exposed_communication_time: compute before `wait` back to its
// collective, restarting after an inner collective/wait pair.
Exposure wait_exposure(const CommGraph& cg, const std::vector<double>& runtime, const LinkedOrder& list, NodeId wait, WaitScan& scan);

}  // namespace schedlab::comms_detail
