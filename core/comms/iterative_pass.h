// core/comms — the steps the two iterative passes take alike. Inductor's
// reorder_communication_preserving_peak_memory and sink_waits_iterative are
// mirror images (a group moves earlier past its predecessors, or later past
// its successors); what differs is the direction's named steps, which each
// pass supplies (ReorderPass, SinkWaitsPass):
//   next_candidate(group)                       the node the group would swap with next; kNone at the end
//   pass_run_up_to_nearest_stop(group, info)    every plain swap up to the nearest stop; false when none is left
//   try_candidate(group, candidate, info)       one candidate by the reference's steps; false when the move stops
//   join_group(group, v)
//   runtime_estimation_limit(group, candidate, info)
//   find_buffers_with_changed_last_use(candidate)
//   calculate_potential_peak_memory(group, candidate)
//   perform_double_linked_list_swap(group, candidate)
//   update_window_after_swap(group, candidate, info)
//   update_memory_tracking_after_swap(candidate)
// and this base runs them in the reference's order.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/comms/iterative.h"
#include "core/memory/estimate.h"

namespace schedlab::comms_detail {

template <class Pass>
class IterativePass {
 protected:
  // `tree_storage` (may be null) lends the tree's arrays and gets them back.
  IterativePass(const IterativeGraph& graph, const Order& order, const CommKnobs& k, IterativeReport report, double budget,
                OrderTree::Storage* tree_storage)
      : cg_(graph.cg),
        k_(k),
        report_(report),
        tree_storage_(tree_storage),
        s_(init_iterative_state(graph, order, budget, tree_storage ? std::move(*tree_storage) : OrderTree::Storage{})),
        in_group_(graph.cg.num_nodes(), -1),
        moving_free_(graph.cg.num_nodes(), 0),
        post_alloc_after_(graph.cg.num_nodes(), 0) {}
  ~IterativePass() {
    if (tree_storage_) *tree_storage_ = std::move(s_.order).release();
  }
  IterativePass(const IterativePass&) = delete;
  IterativePass& operator=(const IterativePass&) = delete;

  // The group moves one candidate (or, without runtime estimations, one run
  // of plain swaps and then one candidate) at a time until a candidate stops it.
  template <class Group>
  void move_group(Group& group, OverlapStat& info, bool use_estimates) {
    for (NodeId candidate = self().next_candidate(group); candidate != kNone; candidate = self().next_candidate(group)) {
      // Runtime estimations judge every candidate; without them, the
      // candidates up to the nearest stop all take the plain swap.
      if (!use_estimates) {
        if (!self().pass_run_up_to_nearest_stop(group, info)) break;
        candidate = self().next_candidate(group);
      }
      if (!self().try_candidate(group, candidate, info)) break;
    }
  }

  // The candidate joins the group: the group's peak is raised, as in the reference.
  template <class Group>
  bool group_candidate(Group& group, NodeId candidate, OverlapStat& info) {
    group.peak = std::max(group.peak, s_.order.post_alloc(candidate));
    self().join_group(group, candidate);
    ++info.grouped;
    return true;
  }

  // The candidate is swapped past the group unless runtime estimations
  // refuse it or the potential peak would break the budget.
  template <class Group>
  bool swap_within_budget(Group& group, NodeId candidate, OverlapStat& info, bool use_estimates) {
    if (use_estimates) {
      std::string limit = self().runtime_estimation_limit(group, candidate, info);
      if (!limit.empty()) {
        info.limiting_factor = std::move(limit);
        return false;
      }
    }
    self().find_buffers_with_changed_last_use(candidate);
    const std::int64_t potential_peak = self().calculate_potential_peak_memory(group, candidate);
    if (!s_.within_budget(potential_peak)) {
      for (NodeId gn : changed_nodes_) moving_free_[gn] = 0;
      info.limiting_factor = peak_memory_limit(potential_peak, s_.peak);
      return false;
    }
    ++info.moves;
    self().perform_double_linked_list_swap(group, candidate);
    self().update_window_after_swap(group, candidate, info);
    self().update_memory_tracking_after_swap(candidate);
    return true;
  }

  // The exposed times of the moving node's window are reported in the stats
  // and read by runtime estimations; an order-only run without estimations
  // skips measuring them (they never change the order).
  bool measures_windows(bool use_estimates) const { return report_ == IterativeReport::Full || use_estimates; }

  // Why a data dependency stops the move.
  std::string data_dependency_limit(NodeId candidate, const std::string& not_groupable) const {
    return "data dependency: " + cg_.graph->nodes[candidate].name + " (" + not_groupable + ")";
  }

  CommPassResult finish(CommPassResult result) const {
    result.order = s_.order.to_order();
    result.peak_before = s_.peak;
    if (report_ == IterativeReport::Full) result.peak_after = allocfree_peak(*cg_.graph, s_.info, result.order);
    return result;
  }

  const CommGraph& cg_;
  const CommKnobs& k_;
  IterativeReport report_;
  OrderTree::Storage* tree_storage_;
  IterativeState s_;
  std::int32_t stamp_ = 0;  // one per processed collective or wait
  std::vector<std::int32_t> in_group_;
  // Per group node: the bytes whose free moves between it and the candidate
  // on a swap (reorder: it stops freeing them; sink: it frees them instead).
  std::vector<std::int64_t> moving_free_;
  std::vector<std::int64_t> post_alloc_after_;
  std::vector<NodeId> changed_nodes_;  // group nodes with a moving free

 private:
  Pass& self() { return static_cast<Pass&>(*this); }
};

}  // namespace schedlab::comms_detail
