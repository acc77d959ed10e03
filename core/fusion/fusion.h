// core/fusion — Inductor's node fusion on a pre-fusion graph (docs/fusion.md).
//
// Contract: pure functions. The front end runs dependency analysis, dead-node
// elimination and the stable topological sort (core/deps), then fuses in up
// to `max_rounds` rounds to a fixed point exactly as Inductor's Scheduler
// with the Triton backend does: candidate pairs from shared buffers, sorted
// by Inductor's fusion score, each checked for legality (can_fuse, no cycle).
// Every refusal has the reference's WhyNoFuse text. The result names groups
// of original nodes; build_fused_graph turns them into a schedgraph/1 graph
// with `members` and an `operations` skeleton.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/deps/dependencies.h"
#include "core/graph/graph.h"

namespace schedlab {

// Inductor's defaults (config.py of PyTorch 2.11).
struct FusionOptions {
  int max_rounds = 10;
  int max_fusion_size = 64;                         // config.max_fusion_size
  int max_pairwise_attempts = 64;                   // config.max_fusion_buffer_group_pairwise_attempts
  std::int64_t score_fusion_memory_threshold = 10;  // horizontal fusions must share at least this many bytes
  int max_horizontal_distance = 64;                 // are_long_distant_nodes
  bool epilogue_fusion_first = false;
  // config.triton.tiling_prevents_pointwise_fusion / _reduction_fusion: the
  // Triton backend refuses pairs whose kernel tiling would differ from a
  // side's own 2-D tiling (see docs/fusion.md "Tiling").
  bool tiling_prevents_pointwise_fusion = true;
  bool tiling_prevents_reduction_fusion = true;
  // Record every refused pair (round, names, reason). Off for big graphs:
  // the counts per reason are always kept.
  bool record_refusals = false;
  // When set, refusals are recorded only for pairs of groups that contain
  // these two nodes (one each): what `fuse --explain A B` needs.
  std::optional<std::pair<NodeId, NodeId>> explain;
};

struct FusionRefusal {
  int round = 0;  // 1-based
  std::string node1, node2;
  std::string reason;
};

struct FusionResult {
  // Fused groups of original nodes, in the final order; members in fused order.
  std::vector<std::vector<NodeId>> groups;
  int rounds = 0;
  std::int64_t pairs_considered = 0;
  std::vector<FusionRefusal> refusals;
  std::map<std::string, std::int64_t> refusal_counts;  // by reason (without the numbers of numel mismatches)
};

// Fusion over `schedule` (the kept nodes in Inductor's pre-fusion order).
FusionResult fuse_nodes(const Graph& g, const DependencyInfo& deps, const Order& schedule, const FusionOptions& opts);

// Everything before memory planning, for a pre-fusion graph.
struct FrontEndResult {
  DependencyInfo deps;
  std::vector<NodeId> eliminated;  // dead nodes, in removal order
  Order schedule;                  // kept nodes, topologically sorted as Inductor does
  FusionResult fusion;             // empty groups when fusion is off (then one group per node)
};
FrontEndResult run_front_end(const Graph& g, bool fuse, const FusionOptions& opts);

// Inductor's name for a fused node: its members' names joined with "_" in
// group order (FusedSchedulerNode.get_name). The fuser's reports, the fused
// graph and the plan's front-end section all name groups through this.
std::string fused_node_name(const Graph& g, const std::vector<NodeId>& members);

// The post-fusion graph: one node per group, named by fused_node_name, with
// `members`, union of outputs, reads and writes minus what is internal to
// the group, and `operations` (the pre-fusion skeleton, so operation-level
// ancestry can be recovered). Graph inputs, outputs and
// world size carry over; nodes removed as dead code are gone.
// The graph owns its id space (inputs, then each group's outputs in order)
// and passes validate() like a loaded one.
Graph build_fused_graph(const Graph& pre, const DependencyInfo& deps, const std::vector<std::vector<NodeId>>& groups);

// `fuse --explain A B`: whether A and B end in one group, and why not.
struct FusionExplanation {
  bool fused = false;
  std::string group_a, group_b;           // final group names
  std::vector<FusionRefusal> refusals;    // every time the fuser refused their groups
  std::string final_reason;               // can_fuse on the final groups ("" when they would fuse)
  bool eliminated_a = false, eliminated_b = false;
};
FusionExplanation explain_fusion(const Graph& g, NodeId a, NodeId b, FusionOptions opts);

}  // namespace schedlab

namespace schedlab {

// A graph is already fused when it has `operations` or a node with `members`;
// otherwise the plan pipeline runs the front end on it.
bool needs_fusion(const Graph& g);

}  // namespace schedlab
