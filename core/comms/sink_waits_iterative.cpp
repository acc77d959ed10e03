// Inductor's sink_waits_iterative: each wait, right to left, is pushed later
// past its successors. Successors that read the group are pulled into the
// group when groupable; a move is refused once the tracked peak would exceed
// the budget. The reference swaps one candidate at a time; here a run of
// candidates that would each take the plain swap is passed in one move (see
// iterative.h): O((stops + groupings + last-use changes) x log N) per wait.
#include <algorithm>
#include <functional>
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

struct GroupCollective {
  NodeId collective;
  double comm_us, comp_us;
};

using MinQueue = std::priority_queue<std::int32_t, std::vector<std::int32_t>, std::greater<>>;

// The wait and the readers pulled in behind it, head to tail.
struct SinkGroup {
  std::vector<NodeId> members;  // the wait first
  std::int64_t peak = 0;        // group_peak_memory: raised when a node joins, as in the reference
  double runtime = 0;           // group_runtime
  bool contains_collective = false;
  std::vector<GroupCollective> collectives;
  // Positions after the group of nodes that stop a plain swap: readers of
  // the group, and last uses of buffers the group also reads. Nodes after
  // the group keep their positions while it moves.
  MinQueue readers, last_uses;
  NodeId head() const { return members.front(); }
  NodeId tail() const { return members.back(); }
  // The members run back to back: a node joins right after the tail, and the group moves as one.
  std::int32_t size() const { return static_cast<std::int32_t>(members.size()); }
};

// _is_node_groupable_for_sink_waits; empty when groupable.
std::string not_groupable_for_sink_waits(const CommGraph& cg, NodeId candidate, bool use_estimates) {
  if (cg.is_wait(candidate)) return "candidate contains wait";
  if (cg.is_async_collective(candidate)) return "candidate contains_async_collective";
  if (!use_estimates) {
    if (cg.is_collective(candidate)) return "candidate contains collective";
    if (cg.is_gemm_like(candidate)) return "candidate contains gemm_like";
  }
  return {};
}

class SinkWaitsPass : public comms_detail::IterativePass<SinkWaitsPass> {
 public:
  SinkWaitsPass(const comms_detail::IterativeGraph& graph, const Order& order, const CommKnobs& k, comms_detail::IterativeReport report,
              comms_detail::OrderTree::Storage* tree_storage = nullptr)
      : IterativePass(graph, order, k, report, k.sink_iterative_peak_memory_budget, tree_storage), group_pos_(graph.cg.num_nodes(), 0) {}

  CommPassResult run(const Order& order);

 private:
  friend class comms_detail::IterativePass<SinkWaitsPass>;

  OverlapStat sink_wait(NodeId curr);
  NodeId next_candidate(const SinkGroup& group) const { return s_.order.next(group.tail()); }
  void join_group(SinkGroup& group, NodeId v);
  std::int32_t nearest_stop_after_group(SinkGroup& group, std::int32_t tail_pos);
  bool pass_run_up_to_nearest_stop(SinkGroup& group, OverlapStat& info);
  void pass_run_of_candidates(const SinkGroup& group, std::int32_t last, std::int32_t tail_pos, OverlapStat& info);
  bool try_candidate(SinkGroup& group, NodeId candidate, OverlapStat& info);
  std::string runtime_estimation_limit(SinkGroup& group, NodeId candidate, const OverlapStat& info);
  // _find_buffers_with_changed_last_use_sink_waits
  void find_buffers_with_changed_last_use(NodeId candidate);
  // _calculate_potential_peak_memory_sink_waits
  std::int64_t calculate_potential_peak_memory(const SinkGroup& group, NodeId candidate);
  // _perform_double_linked_list_swap_sink_waits
  void perform_double_linked_list_swap(const SinkGroup& group, NodeId candidate);
  void update_window_after_swap(const SinkGroup& group, NodeId candidate, OverlapStat& info);
  // _update_memory_tracking_after_swap_sink_waits
  void update_memory_tracking_after_swap(NodeId candidate);
  void record_window(OverlapStat& info, NodeId curr);

  std::vector<std::int32_t> group_pos_;
  Exposure ex_;  // the wait's window, as last measured
  std::int64_t moved_total_ = 0;
  bool last_use_changes_ = false;  // also for zero-byte buffers: the reference then takes the detailed path
};

CommPassResult SinkWaitsPass::run(const Order& order) {
  CommPassResult result;
  std::vector<std::uint8_t> processed(cg_.num_nodes(), 0);
  std::int32_t processed_count = 0;
  for (NodeId curr = order.back(); curr != kNone && s_.order.prev(curr) != kNone;) {
    const NodeId prev_curr = s_.order.prev(curr);
    if (k_.sink_waits_iterative_debug_limit_to_sink >= 0 && processed_count >= k_.sink_waits_iterative_debug_limit_to_sink) break;
    if (cg_.is_wait(curr) && !processed[curr]) {
      processed[curr] = 1;
      ++processed_count;
      result.stats.push_back(sink_wait(curr));
    }
    curr = prev_curr;
  }
  return finish(std::move(result));
}

void SinkWaitsPass::record_window(OverlapStat& info, NodeId curr) {
  if (!measures_windows(k_.sink_iterative_use_runtime_estimations)) return;
  ex_ = comms_detail::wait_exposure(s_, curr);
  info.comm_time_us = ex_.comm_us;
  info.comp_time_us = ex_.comp_us;
  info.final_exposed_us = info.comm_time_us - info.comp_time_us;
}

OverlapStat SinkWaitsPass::sink_wait(NodeId curr) {
  OverlapStat info;
  info.node = curr;
  record_window(info, curr);
  info.initial_exposed_us = info.final_exposed_us;
  ++stamp_;
  SinkGroup group;
  group.peak = s_.order.post_alloc(curr);
  join_group(group, curr);
  move_group(group, info, k_.sink_iterative_use_runtime_estimations);
  return info;
}

void SinkWaitsPass::join_group(SinkGroup& group, NodeId v) {
  group.members.push_back(v);
  in_group_[v] = stamp_;
  group_pos_[v] = static_cast<std::int32_t>(group.members.size()) - 1;
  group.contains_collective = group.contains_collective || cg_.is_collective(v);
  const std::int32_t tail_pos = s_.position(v);
  for (NodeId r : s_.data_readers.row(v))
    if (in_group_[r] != stamp_) group.readers.push(s_.position(r));
  // Buffers the new member keeps alive whose last use comes later: that
  // last use would hand the free to the group on a swap.
  for (BufId b : s_.bufs_of_successor.row(v)) {
    const std::int32_t p = s_.position(s_.last_use[b]);
    if (p > tail_pos) group.last_uses.push(p);
  }
}

std::int32_t SinkWaitsPass::nearest_stop_after_group(SinkGroup& group, std::int32_t tail_pos) {
  std::int32_t stop = s_.order.size();
  for (MinQueue* q : {&group.readers, &group.last_uses}) {
    while (!q->empty() && q->top() <= tail_pos) q->pop();
    if (!q->empty()) stop = std::min(stop, q->top());
  }
  auto narrow = [&](const BlockQuery& query) {
    const std::int32_t hit = s_.order.first_match(tail_pos + 1, stop - 1, query);
    if (hit >= 0) stop = hit;
  };
  if (!k_.sink_waits_iterative_swap_with_collectives) narrow({.role_mask = kRoleAsyncCollective});
  if (group.contains_collective) narrow({.role_mask = kRoleCollective});
  // The plain swap's potential peak: max(group_peak + net(c), post_alloc(c) - group_net).
  const std::int64_t group_net = s_.order.post_free(group.tail()) - s_.order.memory_before(group.head());
  BlockQuery memory;
  memory.net_above = s_.max_potential_peak - group.peak;
  memory.post_alloc_above = s_.max_potential_peak + group_net;
  narrow(memory);
  return stop;
}

bool SinkWaitsPass::pass_run_up_to_nearest_stop(SinkGroup& group, OverlapStat& info) {
  const std::int32_t tail_pos = s_.position(group.tail());
  const std::int32_t stop = nearest_stop_after_group(group, tail_pos);
  if (stop > tail_pos + 1) pass_run_of_candidates(group, stop - 1, tail_pos, info);
  return stop < s_.order.size();
}

void SinkWaitsPass::pass_run_of_candidates(const SinkGroup& group, std::int32_t last, std::int32_t tail_pos, OverlapStat& info) {
  const std::int32_t head_pos = tail_pos - group.size() + 1;
  const std::int32_t count = last - tail_pos;
  s_.order.move_range(head_pos, tail_pos, head_pos + count);
  info.moves += count;
  // The passed candidates now run right before the wait: the end of its window.
  record_window(info, group.head());
}

bool SinkWaitsPass::try_candidate(SinkGroup& group, NodeId candidate, OverlapStat& info) {
  const bool use_estimates = k_.sink_iterative_use_runtime_estimations;
  if (use_estimates && info.final_exposed_us < -k_.sink_iterative_extra_comm_comp_overlap * info.comm_time_us) {
    info.limiting_factor = "unexposed by runtime estimations";
    return false;
  }
  bool data_dep = false;
  for (BufId b : cg_.data_bufs.row(candidate))
    if (in_group_[cg_.producer(b)] == stamp_) data_dep = true;
  // Conservative: a wait does not sink past the next async collective.
  if (!k_.sink_waits_iterative_swap_with_collectives && cg_.is_async_collective(candidate)) {
    info.limiting_factor = "candidate contains_async_collective " + cg_.graph->nodes[candidate].name;
    return false;
  }
  const bool both_contain_comms = group.contains_collective && cg_.is_collective(candidate);
  if (data_dep || both_contain_comms) {
    const std::string not_groupable = not_groupable_for_sink_waits(cg_, candidate, use_estimates);
    if (not_groupable.empty()) {
      if (use_estimates && cg_.is_collective(candidate)) {
        const Exposure c = comms_detail::collective_exposure(s_, candidate);
        group.collectives.push_back({candidate, c.comm_us, c.comp_us});
      }
      if (!cg_.is_async_collective(candidate)) group.runtime += s_.runtime[candidate];
      return group_candidate(group, candidate, info);
    }
    if (data_dep) {
      info.limiting_factor = data_dependency_limit(candidate, not_groupable);
      return false;
    }
    if (!k_.sink_waits_iterative_unsafe_collectives_reorder) {
      info.limiting_factor = "collective ordering with candidate " + cg_.graph->nodes[candidate].name;
      return false;
    }
  }
  return swap_within_budget(group, candidate, info, use_estimates);
}

// The candidate now runs right before the wait: the last node of its window.
void SinkWaitsPass::update_window_after_swap(const SinkGroup& group, NodeId candidate, OverlapStat& info) {
  if (!cg_.is_collective(candidate) && !cg_.is_wait(candidate)) {
    if (!ex_.reset) info.comp_time_us += s_.runtime[candidate];
    info.final_exposed_us = info.comm_time_us - info.comp_time_us;
  } else {
    record_window(info, group.head());
  }
}

// With runtime estimations: a swap must not expose more of the candidate
// wait's collective, nor of the group's collectives.
std::string SinkWaitsPass::runtime_estimation_limit(SinkGroup& group, NodeId candidate, const OverlapStat& info) {
  if (cg_.is_wait(candidate)) {
    // Its collective is before the group: the swap may expose more of it.
    const Exposure w = comms_detail::wait_exposure(s_, candidate);
    const double before = std::max(0.0, w.comm_us - w.comp_us);
    const double after = std::max(0.0, w.comm_us - w.comp_us + group.runtime);
    if (after > before) return "candidate is wait, exposed_before:" + std::to_string(before) + " vs exposed_after:" + std::to_string(after);
  }
  if (cg_.is_async_collective(candidate)) return {};
  const double c_runtime = s_.runtime[candidate];
  if (c_runtime <= 0 || group.collectives.empty()) return {};
  // As the 2.11 source reads: the "- max(0, exposed - c_runtime)" term
  // stands on its own line and is discarded.
  double exposed_delta = std::max(0.0, info.comm_time_us - info.comp_time_us);
  for (const auto& gc : group.collectives)
    exposed_delta += std::max(0.0, gc.comm_us - gc.comp_us) - std::max(0.0, gc.comm_us - gc.comp_us + c_runtime);
  if (exposed_delta > 0)
    return "candidate has compute " + std::to_string(c_runtime) + ", group contains collectives, total_exposed_delta " + std::to_string(exposed_delta);
  for (auto& gc : group.collectives) gc.comp_us -= c_runtime;
  return {};
}

// Buffers the candidate frees that the group also reads: after the swap the
// group's last reader of each frees it instead.
void SinkWaitsPass::find_buffers_with_changed_last_use(NodeId candidate) {
  changed_nodes_.clear();
  moved_total_ = 0;
  last_use_changes_ = false;
  for (BufId b : s_.bufs_of_successor.row(candidate)) {
    if (s_.last_use[b] != candidate) continue;
    NodeId last_in_group = kNone;
    for (NodeId succ : s_.info.buffer_succ_nodes.row(b))
      if (in_group_[succ] == stamp_ && (last_in_group == kNone || group_pos_[succ] > group_pos_[last_in_group])) last_in_group = succ;
    if (last_in_group == kNone) continue;
    if (moving_free_[last_in_group] == 0) changed_nodes_.push_back(last_in_group);
    moving_free_[last_in_group] += s_.info.size_free[b];
    moved_total_ += s_.info.size_free[b];
    last_use_changes_ = true;
  }
}

std::int64_t SinkWaitsPass::calculate_potential_peak_memory(const SinkGroup& group, NodeId candidate) {
  const std::int64_t cand_alloc = s_.order.alloc(candidate);
  const std::int64_t cand_delta = cand_alloc - s_.order.freed(candidate);
  const std::int64_t pre_group = s_.order.memory_before(group.head());
  if (!last_use_changes_) return std::max(group.peak + cand_delta, pre_group + cand_alloc);
  post_alloc_after_[candidate] = pre_group + cand_alloc;
  std::int64_t potential_peak = post_alloc_after_[candidate];
  std::int64_t delta = cand_delta + moved_total_;
  for (NodeId gn : group.members) {
    post_alloc_after_[gn] = s_.order.post_alloc(gn) + delta;
    potential_peak = std::max(potential_peak, post_alloc_after_[gn]);
    delta -= moving_free_[gn];
  }
  return potential_peak;
}

void SinkWaitsPass::perform_double_linked_list_swap(const SinkGroup& group, NodeId candidate) {
  // The candidate runs right after the group's tail.
  const std::int32_t at = s_.position(candidate);
  s_.order.move_range(at, at, at - group.size());
}

// The tree derives every node's memory from the frees, so only the nodes
// whose frees moved change; the result equals the reference's post_alloc_update.
// As in the reference, last uses are not updated here.
void SinkWaitsPass::update_memory_tracking_after_swap(NodeId candidate) {
  if (!last_use_changes_) return;
  s_.order.set_freed(candidate, s_.order.freed(candidate) - moved_total_);
  for (NodeId gn : changed_nodes_) {
    if (moving_free_[gn] == 0) continue;  // listed twice, or a zero-byte buffer
    s_.order.set_freed(gn, s_.order.freed(gn) + moving_free_[gn]);
    moving_free_[gn] = 0;
  }
}

}  // namespace

CommPassResult sink_waits_iterative(const CommGraph& cg, const Order& order, const CommKnobs& k) {
  if (order.empty()) return {};
  const MemoryPlanningInfo planning = planning_info_of(cg, order);
  const comms_detail::IterativeGraph graph = comms_detail::make_iterative_graph(cg, k, planning, order);
  return SinkWaitsPass(graph, order, k, comms_detail::IterativeReport::Full).run(order);
}

namespace comms_detail {

CommPassResult sink_waits_iterative(const IterativeGraph& graph, const Order& order, const CommKnobs& k, IterativeReport report,
                                    OrderTree::Storage& tree_storage) {
  if (order.empty()) return {};
  return SinkWaitsPass(graph, order, k, report, &tree_storage).run(order);
}

}  // namespace comms_detail

}  // namespace schedlab
