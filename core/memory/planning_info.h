// core/memory — planning information, computed once per (graph, baseline
// order) and read by every memory method and by the estimators, as in
// Inductor's memory.py (2.11 semantics; docs/schedgraph-1.md "Memory
// semantics").
//
// "Planned buffers" are node outputs plus the freeable inputs that some node
// reads. Sizes are (alloc, free) pairs: fixed (b, b); none or mutation (0, 0);
// multi_output (sum of its items made by its readers, 0); item (0, b).
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph/graph.h"
#include "core/util/adjacency.h"

namespace schedlab {

struct MemoryPlanningInfo {
  // Per buffer (indexed by BufId; inputs that are not freeable or never read
  // have planned == false and zero sizes).
  std::vector<std::uint8_t> planned;
  std::vector<std::uint8_t> is_graph_output;
  std::vector<std::int64_t> size_alloc;
  std::vector<std::int64_t> size_free;
  std::vector<BufId> container_of;  // multi_output_item -> its multi_output buffer, else kNone
  std::vector<NodeId> producer;     // the graph's buffers[b].producer, flat (see `outputs`)
  // Nodes whose use keeps the buffer alive: readers through non-fake deps, and
  // readers of buffers that mutate it.
  Adjacency buffer_succ_nodes;
  // Freeable inputs in order of first read (Inductor's dict order).
  std::vector<BufId> freeable_inputs;
  // freeable_input_sizes_depend_on_order(g), kept for the callers that ask
  // it per order (a walk of every read).
  bool freeable_sizes_depend_on_order = false;

  // Per node (indexed by NodeId; `index` is the node's position in the
  // order the info was built from, used for tie-breaking).
  std::vector<std::int32_t> index;
  std::vector<std::int64_t> node_size;  // sum of size_alloc of its outputs
  Adjacency pred_buffers;  // planned buffers it keeps alive (mutation chains included)
  // The graph's nodes[v].outputs, flat: the allocfree walks (MemoryTracker)
  // read a node's outputs and a buffer's producer at every step, and through
  // the graph's nodes and buffers each read is a cache miss.
  Adjacency outputs;
  Adjacency pred_nodes;    // producers of pred_buffers and of every unmet dependency
  Adjacency succ_nodes;    // the reverse of pred_nodes
  // Producers of the buffers it reads directly through unmet dependencies
  // (weak and fake weak included): Inductor's `unmet_dependencies`, for DFS.
  Adjacency dep_nodes;
};

// Inductor's mutation_real_name for every buffer: the buffer at the start of
// its mutation_of chain (itself when it mutates nothing). Memoised, so a
// chain of N versions costs O(N) in all.
std::vector<BufId> storage_roots(const Graph& g);

// `order` is the order the planning starts from (normally the baseline); it
// decides freeable-input sizes (last read in that order) and tie-break indices.
MemoryPlanningInfo compute_planning_info(const Graph& g, const Order& order);

// compute_planning_info(g, order) from the info of another order of the same
// graph: only what the order decides (indices, freeable inputs' order and
// sizes) is computed again, in O(N + E) without sorting. For callers that
// plan one graph in many orders (overlap_schedule's inner passes).
MemoryPlanningInfo planning_info_for_order(const Graph& g, MemoryPlanningInfo info, const Order& order);

// Whether the order can change anything but `index` and the order of
// `freeable_inputs`: only when a freeable input is read with different byte
// counts (its size is its last read's). When false, the info of any order
// serves every order for sizes, uses and estimates.
bool freeable_input_sizes_depend_on_order(const Graph& g);

}  // namespace schedlab
