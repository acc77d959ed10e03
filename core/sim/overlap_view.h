// core/sim — a per-node view of an order's comm/compute overlap: what
// Inductor's visualize_overlap and node_summary log (comms.py), with the
// two-stream simulation's times beside it.
//
// Contract: pure functions of (Graph, order, per-node runtimes in us, the
// Simulation of that order with those runtimes). Inductor's walk: a node
// after a collective and before the next wait is "overlapped" by that
// collective (the most recent one issued; a wait ends the overlap, whichever
// collective it completes); its estimate adds every collective's runtime and
// the runtime of compute outside any overlap.
#pragma once

#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/sim/simulate.h"

namespace schedlab {

struct OverlapRow {
  NodeId node = kNone;
  double runtime_us = 0;
  double start_us = 0;        // on its stream, from the simulation
  NodeId overlapped_by = kNone;  // the collective in flight (Inductor's walk), kNone when exposed
  // Simulation: the compute-stream stall this node waited out for
  // collectives it needed (0 for most nodes), and which collective ended last.
  double exposed_comm_us = 0;
  NodeId exposed_collective = kNone;
  std::string summary;  // node_summary: kernel or op, members, collective type and size, outputs
};

struct OverlapView {
  std::vector<OverlapRow> rows;  // in order
  // Inductor's "Est. runtime": collectives' runtimes plus compute outside any overlap.
  double inductor_estimate_us = 0;
  double overlapped_compute_us = 0;  // compute run while a collective was in flight (Inductor's walk)
  Simulation simulation;             // totals: step time, exposed comm
};

// Throws Error when the sizes of `order`, `runtime_us` and the graph disagree.
OverlapView overlap_view(const Graph& g, const Order& order, const std::vector<double>& runtime_us, const Simulation& sim);

// node_summary: kind, kernel (or the collective's op, group size and
// payload), fused members, what an extern kernel or collective waits on, the
// first output with its dtype and shape, and the outputs' bytes:
// "extern extern_kernels.mm <- buf7 -> buf8 f32[1024, 1024] 4.00 MiB",
// "collective all_gather_into_tensor 2 ranks 8.00 MiB -> buf0 8.00 MiB",
// "pointwise fused 4 (op1, op2, op3, +1) -> buf5 1.00 KiB".
std::string node_summary(const Graph& g, NodeId v);

// The view as text: one line per node, then the totals.
std::string overlap_view_to_text(const Graph& g, const OverlapView& view);

}  // namespace schedlab
