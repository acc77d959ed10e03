// Inductor's reorder_communication_preserving_peak_memory: each async
// collective, left to right, is moved earlier past its predecessors. A
// predecessor it (or its group) reads is pulled into the group when
// groupable; a move is refused once the tracked peak would exceed the budget.
// The reference swaps one candidate at a time; here a run of candidates that
// would each take the plain swap is passed in one move (see iterative.h), so
// the cost is O((stops + groupings + last-use changes) x log N) per
// collective instead of O(distance moved).
#include <algorithm>
#include <queue>
#include <string>

#include "core/comms/iterative.h"
#include "core/comms/iterative_pass.h"
#include "core/comms/passes.h"
#include "core/memory/estimate.h"

namespace schedlab {

using comms_detail::BlockQuery;
using comms_detail::Exposure;
using comms_detail::IterativeState;

namespace {

struct GroupWait {
  NodeId wait;
  double comm_us, comp_us;
};

// The collective and the producers pulled in front of it, head to tail.
struct ReorderGroup {
  std::vector<NodeId> members;  // head first; the collective is the tail
  std::int64_t peak = 0;        // group_peak_memory: raised when a node joins, as in the reference
  double runtime = 0;           // group_runtime (runtime estimations only)
  std::vector<GroupWait> waits;
  // Positions before the group of nodes that stop a plain swap: producers
  // the group reads, and other readers of buffers whose last use is in the
  // group. Nodes before the group keep their positions while it moves.
  std::priority_queue<std::int32_t> producers;
  std::priority_queue<std::pair<std::int32_t, BufId>> last_use_readers;
  NodeId head() const { return members.front(); }
  NodeId tail() const { return members.back(); }
  // The members run back to back: a node joins right before the head, and the group moves as one.
  std::int32_t size() const { return static_cast<std::int32_t>(members.size()); }
};

// Per node, the buffers whose last use it is (buf_to_snode_last_use
// inverted), as lists threaded through the buffers: built without an
// allocation per node, and a buffer changes lists in O(1).
class BuffersByLastUse {
 public:
  BuffersByLastUse(std::int32_t num_nodes, const std::vector<NodeId>& last_use)
      : first_(static_cast<std::size_t>(num_nodes), kNone), next_(last_use.size(), kNone), prev_(last_use.size(), kNone) {
    for (BufId b = 0; b < static_cast<BufId>(last_use.size()); ++b)
      if (last_use[b] != kNone) link(last_use[b], b);
  }
  void move(BufId b, NodeId from, NodeId to) {
    unlink(from, b);
    link(to, b);
  }
  template <class Visit>
  void for_each(NodeId v, Visit&& visit) const {
    for (BufId b = first_[v]; b != kNone; b = next_[b]) visit(b);
  }

 private:
  void link(NodeId v, BufId b) {
    prev_[b] = kNone;
    next_[b] = first_[v];
    if (first_[v] != kNone) prev_[first_[v]] = b;
    first_[v] = b;
  }
  void unlink(NodeId v, BufId b) {
    (prev_[b] != kNone ? next_[prev_[b]] : first_[v]) = next_[b];
    if (next_[b] != kNone) prev_[next_[b]] = prev_[b];
  }

  std::vector<BufId> first_;       // per node
  std::vector<BufId> next_, prev_;  // per buffer
};

class ReorderPass : public comms_detail::IterativePass<ReorderPass> {
 public:
  ReorderPass(const comms_detail::IterativeGraph& graph, const Order& order, const CommKnobs& k, comms_detail::IterativeReport report,
              comms_detail::OrderTree::Storage* tree_storage = nullptr)
      : IterativePass(graph, order, k, report, k.reorder_iterative_peak_memory_budget, tree_storage),
        group_reads_from_(graph.cg.num_nodes(), -1),
        last_used_by_(graph.cg.num_nodes(), s_.last_use) {}

  CommPassResult run(const Order& order);

 private:
  friend class comms_detail::IterativePass<ReorderPass>;

  OverlapStat reorder_collective(NodeId curr);
  NodeId next_candidate(const ReorderGroup& group) const { return s_.order.prev(group.head()); }
  void join_group(ReorderGroup& group, NodeId v);
  std::int32_t nearest_stop_before_group(ReorderGroup& group, std::int32_t head_pos);
  bool pass_run_up_to_nearest_stop(ReorderGroup& group, OverlapStat& info);
  void pass_run_of_candidates(ReorderGroup& group, std::int32_t first, std::int32_t head_pos, OverlapStat& info);
  bool try_candidate(ReorderGroup& group, NodeId candidate, OverlapStat& info);
  std::string runtime_estimation_limit(ReorderGroup& group, NodeId candidate, const OverlapStat& info);
  void find_buffers_with_changed_last_use(NodeId candidate);
  // _calculate_potential_peak_memory_reorder
  std::int64_t calculate_potential_peak_memory(const ReorderGroup& group, NodeId candidate);
  void perform_double_linked_list_swap(const ReorderGroup& group, NodeId candidate);
  void update_window_after_swap(const ReorderGroup& group, NodeId candidate, OverlapStat& info);
  // _update_memory_tracking_after_swap_reorder
  void update_memory_tracking_after_swap(NodeId candidate);

  std::vector<std::int32_t> group_reads_from_;
  BuffersByLastUse last_used_by_;
  std::vector<BufId> changed_bufs_;
};

// _is_node_groupable_for_reorder; empty when groupable.
std::string not_groupable_for_reorder(const CommGraph& cg, NodeId candidate, const CommKnobs& k) {
  if (!k.reorder_iterative_group_with_collectives && cg.is_async_collective(candidate)) return "candidate contains_collective";
  if (!k.reorder_iterative_use_runtime_estimations && cg.is_gemm_like(candidate)) return "contains_gemm_like";
  return {};
}

CommPassResult ReorderPass::run(const Order& order) {
  CommPassResult result;
  std::int32_t processed = 0;
  for (NodeId curr = order.front(); curr != kNone && s_.order.next(curr) != kNone;) {
    const NodeId next_curr = s_.order.next(curr);
    if (cg_.is_async_collective(curr)) {
      if (k_.reorder_iterative_debug_limit_to_reorder >= 0 && processed >= k_.reorder_iterative_debug_limit_to_reorder) break;
      ++processed;
      result.stats.push_back(reorder_collective(curr));
    }
    curr = next_curr;
  }
  return finish(std::move(result));
}

OverlapStat ReorderPass::reorder_collective(NodeId curr) {
  OverlapStat info;
  info.node = curr;
  if (measures_windows(k_.reorder_iterative_use_runtime_estimations)) {
    const Exposure ex = comms_detail::collective_exposure(s_, curr);
    info.comm_time_us = ex.comm_us;
    info.comp_time_us = ex.comp_us;
    info.initial_exposed_us = info.final_exposed_us = ex.comm_us - ex.comp_us;
  }
  ++stamp_;
  ReorderGroup group;
  group.peak = s_.order.post_alloc(curr);
  join_group(group, curr);
  move_group(group, info, k_.reorder_iterative_use_runtime_estimations);
  return info;
}

void ReorderPass::join_group(ReorderGroup& group, NodeId v) {
  group.members.insert(group.members.begin(), v);
  in_group_[v] = stamp_;
  const std::int32_t head_pos = s_.position(v);
  for (BufId b : cg_.data_bufs.row(v)) {
    const NodeId p = cg_.producer(b);
    group_reads_from_[p] = stamp_;
    if (in_group_[p] != stamp_) group.producers.push(s_.position(p));
  }
  // Buffers whose last use joins the group: their other readers before it
  // would become the last use on a swap.
  last_used_by_.for_each(v, [&](BufId b) {
    for (NodeId r : s_.info.buffer_succ_nodes.row(b)) {
      if (in_group_[r] == stamp_) continue;
      const std::int32_t p = s_.position(r);
      if (p < head_pos) group.last_use_readers.emplace(p, b);
    }
  });
}

std::int32_t ReorderPass::nearest_stop_before_group(ReorderGroup& group, std::int32_t head_pos) {
  std::int32_t stop = -1;
  while (!group.producers.empty() && group.producers.top() >= head_pos) group.producers.pop();
  if (!group.producers.empty()) stop = group.producers.top();
  while (!group.last_use_readers.empty()) {
    auto [p, b] = group.last_use_readers.top();
    if (p < head_pos && in_group_[s_.last_use[b]] == stamp_) break;
    group.last_use_readers.pop();
  }
  if (!group.last_use_readers.empty()) stop = std::max(stop, group.last_use_readers.top().first);
  if (!k_.reorder_iterative_unsafe_collectives_reorder)
    stop = std::max(stop, s_.order.last_match(stop + 1, head_pos - 1, {.role_mask = kRoleCollective}));
  // The plain swap's potential peak: max(group_peak - net(c), group_net + post_alloc(c)).
  const std::int64_t group_net = s_.order.post_free(group.tail()) - s_.order.memory_before(group.head());
  BlockQuery memory;
  memory.net_below = group.peak - s_.max_potential_peak;
  memory.post_alloc_above = s_.max_potential_peak - group_net;
  return std::max(stop, s_.order.last_match(stop + 1, head_pos - 1, memory));
}

bool ReorderPass::pass_run_up_to_nearest_stop(ReorderGroup& group, OverlapStat& info) {
  const std::int32_t head_pos = s_.position(group.head());
  const std::int32_t stop = nearest_stop_before_group(group, head_pos);
  if (stop + 1 < head_pos) pass_run_of_candidates(group, stop + 1, head_pos, info);
  return stop >= 0;
}

void ReorderPass::pass_run_of_candidates(ReorderGroup& group, std::int32_t first, std::int32_t head_pos, OverlapStat& info) {
  const std::int32_t tail_pos = head_pos + group.size() - 1;
  // Each passed candidate becomes the first node of the collective's window:
  // compute adds up, a synchronous collective restarts it.
  if (measures_windows(k_.reorder_iterative_use_runtime_estimations)) {
    const std::int32_t sync = s_.order.first_match(first, head_pos - 1, {.role_mask = comms_detail::kRoleSyncCollective});
    if (sync >= 0) info.comp_time_us = s_.order.compute_sum(first, sync - 1);
    else info.comp_time_us += s_.order.compute_sum(first, head_pos - 1);
    info.final_exposed_us = info.comm_time_us - info.comp_time_us;
  }
  info.moves += head_pos - first;
  s_.order.move_range(head_pos, tail_pos, first);
}

bool ReorderPass::try_candidate(ReorderGroup& group, NodeId candidate, OverlapStat& info) {
  const bool use_estimates = k_.reorder_iterative_use_runtime_estimations;
  if (use_estimates && info.final_exposed_us < -k_.reorder_iterative_extra_comm_comp_overlap * info.comm_time_us) {
    info.limiting_factor = "unexposed by runtime estimations";
    return false;
  }
  if (!k_.reorder_iterative_unsafe_collectives_reorder && cg_.is_collective(candidate)) {
    info.limiting_factor = "collective ordering";
    return false;
  }
  if (group_reads_from_[candidate] == stamp_) {
    const std::string not_groupable = not_groupable_for_reorder(cg_, candidate, k_);
    if (!not_groupable.empty()) {
      info.limiting_factor = data_dependency_limit(candidate, not_groupable);
      return false;
    }
    if (use_estimates) {
      if (cg_.is_wait(candidate)) {
        const Exposure w = comms_detail::wait_exposure(s_, candidate);
        group.waits.push_back({candidate, w.comm_us, w.comp_us});
      }
      if (!cg_.is_async_collective(candidate)) group.runtime += s_.runtime[candidate];
    }
    return group_candidate(group, candidate, info);
  }
  return swap_within_budget(group, candidate, info, use_estimates);
}

// The candidate now runs right after the collective: the first node of its window.
void ReorderPass::update_window_after_swap(const ReorderGroup&, NodeId candidate, OverlapStat& info) {
  if (!cg_.is_collective(candidate)) info.comp_time_us += s_.runtime[candidate];
  else if (!cg_.is_async_collective(candidate)) info.comp_time_us = 0;
  info.final_exposed_us = info.comm_time_us - info.comp_time_us;
}

// With runtime estimations: a swap must not expose more of the group's waits
// (compute candidate) or of the candidate collective (Cj -> [group, Ci] -> Wj).
std::string ReorderPass::runtime_estimation_limit(ReorderGroup& group, NodeId candidate, const OverlapStat& info) {
  if (!cg_.is_async_collective(candidate)) {
    const double c_runtime = s_.runtime[candidate];
    if (c_runtime <= 0 || group.waits.empty()) return {};
    double exposed_delta = std::max(0.0, info.comm_time_us - info.comp_time_us - c_runtime) - std::max(0.0, info.comm_time_us - info.comp_time_us);
    for (const auto& gw : group.waits)
      exposed_delta += std::max(0.0, gw.comm_us - gw.comp_us + c_runtime) - std::max(0.0, gw.comm_us - gw.comp_us);
    if (exposed_delta > 0)
      return "candidate has compute " + std::to_string(c_runtime) + ", group contains waits, total_exposed_delta " + std::to_string(exposed_delta);
    for (auto& gw : group.waits) gw.comp_us -= c_runtime;
    return {};
  }
  if (group.runtime <= 0) return {};
  const Exposure c = comms_detail::collective_exposure(s_, candidate);
  const double exposed_delta = std::max(0.0, c.comm_us - c.comp_us + group.runtime) - std::max(0.0, c.comm_us - c.comp_us);
  if (exposed_delta > 0)
    return "candidate " + cg_.graph->nodes[candidate].name + " is collective, group_runtime:" + std::to_string(group.runtime) +
           " exposed_delta:" + std::to_string(exposed_delta);
  return {};
}

// Buffers the candidate reads whose last use is in the group: after the swap
// the candidate is their last use and frees them instead.
void ReorderPass::find_buffers_with_changed_last_use(NodeId candidate) {
  changed_bufs_.clear();
  changed_nodes_.clear();
  for (BufId b : s_.bufs_of_successor.row(candidate)) {
    const NodeId last = s_.last_use[b];
    if (in_group_[last] != stamp_) continue;
    if (moving_free_[last] == 0) changed_nodes_.push_back(last);
    moving_free_[last] += s_.info.size_free[b];
    changed_bufs_.push_back(b);
  }
}

std::int64_t ReorderPass::calculate_potential_peak_memory(const ReorderGroup& group, NodeId candidate) {
  const std::int64_t cand_alloc = s_.order.alloc(candidate);
  const std::int64_t cand_delta = cand_alloc - s_.order.freed(candidate);
  const std::int64_t tail_post_free = s_.order.post_free(group.tail());
  // A zero-byte buffer changes its last use without changing any sum; the
  // reference still takes the detailed path then.
  if (changed_bufs_.empty()) return std::max(group.peak - cand_delta, tail_post_free - cand_delta + cand_alloc);
  std::int64_t potential_peak = 0, delta = -cand_delta;
  for (NodeId gn : group.members) {
    post_alloc_after_[gn] = s_.order.post_alloc(gn) + delta;
    potential_peak = std::max(potential_peak, post_alloc_after_[gn]);
    delta += moving_free_[gn];
  }
  post_alloc_after_[candidate] = tail_post_free + delta + cand_alloc;
  return std::max(potential_peak, post_alloc_after_[candidate]);
}

void ReorderPass::perform_double_linked_list_swap(const ReorderGroup& group, NodeId candidate) {
  // The candidate runs right before the group's head.
  const std::int32_t at = s_.position(candidate);
  s_.order.move_range(at, at, at + group.size());
}

// The tree derives every node's memory from the frees, so only the nodes
// whose frees moved change; the result equals the reference's post_alloc_update.
void ReorderPass::update_memory_tracking_after_swap(NodeId candidate) {
  if (changed_bufs_.empty()) return;
  for (BufId b : changed_bufs_) {
    last_used_by_.move(b, s_.last_use[b], candidate);
    s_.last_use[b] = candidate;
  }
  std::int64_t moved_total = 0;
  for (NodeId gn : changed_nodes_) {
    moved_total += moving_free_[gn];
    s_.order.set_freed(gn, s_.order.freed(gn) - moving_free_[gn]);
    moving_free_[gn] = 0;
  }
  s_.order.set_freed(candidate, s_.order.freed(candidate) + moved_total);
}

}  // namespace

namespace comms_detail {

CommPassResult reorder_communication_preserving_peak_memory(const IterativeGraph& graph, const Order& order, const CommKnobs& k,
                                                            IterativeReport report, OrderTree::Storage& tree_storage) {
  if (std::none_of(order.begin(), order.end(), [&](NodeId v) { return graph.cg.is_collective(v); })) {
    CommPassResult result;
    result.order = order;
    return result;
  }
  return ReorderPass(graph, order, k, report, &tree_storage).run(order);
}

}  // namespace comms_detail

CommPassResult reorder_communication_preserving_peak_memory(const CommGraph& cg, const Order& order, const CommKnobs& k) {
  // Without collectives nothing moves and nothing is planned.
  if (std::none_of(order.begin(), order.end(), [&](NodeId v) { return cg.is_collective(v); })) {
    CommPassResult result;
    result.order = order;
    return result;
  }
  const MemoryPlanningInfo planning = planning_info_of(cg, order);
  const comms_detail::IterativeGraph graph = comms_detail::make_iterative_graph(cg, k, planning, order);
  return ReorderPass(graph, order, k, comms_detail::IterativeReport::Full).run(order);
}

}  // namespace schedlab
