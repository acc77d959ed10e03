#include "core/comms/iterative.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/memory/estimate.h"

namespace schedlab::comms_detail {

bool IterativeState::within_budget(std::int64_t potential_peak) const {
  return !(static_cast<double>(potential_peak - peak) > static_cast<double>(peak) * budget);
}

namespace {

// The largest potential peak that passes within_budget (a test in doubles,
// so found from its floor and settled by the test itself).
std::int64_t largest_within_budget(const IterativeState& s) {
  constexpr std::int64_t kNoLimit = std::numeric_limits<std::int64_t>::max() / 4;
  const double slack = static_cast<double>(s.peak) * s.budget;
  if (!(slack < 1e18)) return kNoLimit;
  std::int64_t limit = s.peak + static_cast<std::int64_t>(std::floor(slack));
  while (!s.within_budget(limit)) --limit;
  while (s.within_budget(limit + 1)) ++limit;
  return limit;
}

}  // namespace

IterativeGraph make_iterative_graph(const CommGraph& cg, const CommKnobs& k, const MemoryPlanningInfo& planning, const Order& order) {
  const std::int32_t n = cg.num_nodes();
  IterativeGraph graph{cg, planning, planning.freeable_sizes_depend_on_order, {}, scaled_runtimes(cg, k.reorder_sink_runtime_estimations_comm_mult, k.reorder_sink_runtime_estimations_non_comm_mult), std::vector<double>(n, 0), cg.role, {}, {}, {}};
  if (!graph.replan_per_order)
    graph.bufs_of_successor = buffers_kept_alive(planning, estimate_peak_memory_allocfree(*cg.graph, planning, order).last_use, n);
  for (NodeId v = 0; v < n; ++v) {
    if (!cg.is_collective(v)) graph.compute[v] = graph.runtime[v];
    else if (!cg.is_async_collective(v)) graph.role[v] |= kRoleSyncCollective;
  }
  // A collective's key is its earliest wait (wait_exposure's inner pairs).
  std::vector<std::pair<std::int32_t, std::int32_t>> waits, collectives, readers;
  for (NodeId v = 0; v < n; ++v)
    if (cg.is_wait(v))
      for (BufId b : cg.data_bufs.row(v))
        if (cg.is_async_collective(cg.producer(b))) waits.emplace_back(cg.producer(b), v);
  graph.waits_of_collective = Adjacency::from_pairs(n, waits);
  for (NodeId c = 0; c < n; ++c)
    for (NodeId wait : graph.waits_of_collective.row(c)) collectives.emplace_back(wait, c);
  graph.collectives_of_wait = Adjacency::from_pairs(n, collectives);
  for (NodeId v = 0; v < n; ++v)
    for (BufId b : cg.data_bufs.row(v)) readers.emplace_back(cg.producer(b), v);
  graph.data_readers = Adjacency::from_pairs(n, readers);
  return graph;
}

Adjacency buffers_kept_alive(const MemoryPlanningInfo& info, const std::vector<NodeId>& last_use, std::int32_t num_nodes) {
  std::vector<std::pair<std::int32_t, std::int32_t>> kept_alive;
  for (BufId b = 0; b < static_cast<BufId>(last_use.size()); ++b) {
    if (last_use[b] == kNone) continue;
    for (NodeId succ : info.buffer_succ_nodes.row(b)) kept_alive.emplace_back(succ, b);
  }
  return Adjacency::from_pairs(num_nodes, kept_alive);
}

IterativeState init_iterative_state(const IterativeGraph& graph, const Order& order, double budget, OrderTree::Storage tree_storage) {
  const CommGraph& cg = graph.cg;
  const Graph& g = *cg.graph;
  std::unique_ptr<IterativeState::Replanned> replanned;
  if (graph.replan_per_order) replanned.reset(new IterativeState::Replanned{planning_info_for_order(g, graph.planning, order), {}});
  const MemoryPlanningInfo& info = replanned ? replanned->info : graph.planning;
  AllocFreeEstimate est = estimate_peak_memory_allocfree(g, info, order);
  if (replanned) replanned->bufs_of_successor = buffers_kept_alive(info, est.last_use, cg.num_nodes());
  const Adjacency& bufs_of_successor = replanned ? replanned->bufs_of_successor : graph.bufs_of_successor;
  OrderTree tree(order, est.node_alloc, est.node_free, graph.compute, graph.role, graph.waits_of_collective, graph.collectives_of_wait,
                 std::move(tree_storage));
  IterativeState s{cg, std::move(replanned), info, bufs_of_successor, graph.runtime, graph.data_readers, est.peak, budget, 0, std::move(est.last_use), std::move(tree)};
  s.max_potential_peak = largest_within_budget(s);
  return s;
}

Exposure collective_exposure(IterativeState& s, NodeId collective) {
  const std::int32_t from = s.position(collective) + 1;
  std::int32_t end = s.order.size();
  for (NodeId r : s.data_readers.row(collective)) end = std::min(end, s.position(r));  // its wait
  const std::int32_t sync = s.order.first_match(from, end - 1, {.role_mask = kRoleSyncCollective});
  if (sync >= 0) end = sync;
  // Async collectives in between run on the comm stream: the tree counts no compute for them.
  return {s.runtime[collective], s.order.compute_sum(from, end - 1), false};
}

Exposure wait_exposure(IterativeState& s, NodeId wait) {
  const CommGraph& cg = s.cg;
  const std::int32_t at = s.position(wait);
  NodeId collective = kNone;
  std::int32_t collective_pos = -1;
  for (BufId b : cg.data_bufs.row(wait)) {
    const NodeId p = cg.producer(b);
    if (cg.is_collective(p) && s.position(p) > collective_pos) collective = p, collective_pos = s.position(p);
  }
  // Walking back from the wait, compute restarts from zero at each
  // synchronous collective and each collective with one of its waits in
  // between (its key, the earliest wait's label, is below this wait's):
  // what counts lies between the collective and the first of those.
  const std::int32_t restart =
      s.order.first_match(collective_pos + 1, at - 1, {.role_mask = kRoleSyncCollective, .key_below = s.order.label(wait)});
  Exposure e;
  e.comm_us = collective == kNone ? 0 : s.runtime[collective];
  e.comp_us = s.order.compute_sum(collective_pos + 1, (restart >= 0 ? restart : at) - 1);
  e.reset = restart >= 0;
  return e;
}

std::string peak_memory_limit(std::int64_t potential_peak, std::int64_t peak) {
  return "peak memory new:" + std::to_string(potential_peak) + " vs base:" + std::to_string(peak);
}

}  // namespace schedlab::comms_detail
