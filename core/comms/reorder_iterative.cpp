// Inductor's reorder_communication_preserving_peak_memory: each async
// collective, left to right, is swapped earlier past its predecessors one at
// a time. A predecessor it (or its group) reads is pulled into the group
// when groupable; the swap is refused once the incrementally tracked peak
// would exceed the budget. Cost: O(moves x group size + sum of the
// collectives' spans to their waits); the reference rebuilds lists per move.
#include <algorithm>
#include <string>

#include "core/comms/iterative.h"
#include "core/comms/passes.h"
#include "core/memory/estimate.h"

namespace schedlab {

using comms_detail::collective_exposure;
using comms_detail::Exposure;
using comms_detail::init_iterative_memory;
using comms_detail::IterativeMemory;
using comms_detail::LinkedOrder;
using comms_detail::wait_exposure;

namespace {

struct GroupWait {
  NodeId wait;
  double comm_us, comp_us;
};

}  // namespace

CommPassResult reorder_communication_preserving_peak_memory(const CommGraph& cg, const Order& order, const CommKnobs& k) {
  const Graph& g = *cg.graph;
  CommPassResult result;
  if (std::none_of(order.begin(), order.end(), [&](NodeId v) { return cg.is_collective(v); })) {
    result.order = order;
    return result;
  }
  const std::int32_t n = cg.num_nodes();
  IterativeMemory mem = init_iterative_memory(g, order);
  const std::vector<double> runtime =
      scaled_runtimes(cg, k.reorder_sink_runtime_estimations_comm_mult, k.reorder_sink_runtime_estimations_non_comm_mult);
  LinkedOrder list = LinkedOrder::from(order, n);
  comms_detail::WaitScan wait_scan(n);
  std::vector<NodeId> group;  // the current group, head to tail
  const bool use_estimates = k.reorder_iterative_use_runtime_estimations;

  // Group bookkeeping by stamps (one stamp per processed collective).
  std::vector<std::int32_t> in_group(n, -1), group_reads_from(n, -1);
  std::vector<std::int64_t> moved_free(n, 0);  // bytes a group node stops freeing after the swap
  std::vector<std::int64_t> post_alloc_after(n, 0);
  std::vector<BufId> changed_bufs;
  std::vector<NodeId> changed_nodes;
  std::int32_t stamp = 0;
  auto join_group = [&](NodeId v) {
    in_group[v] = stamp;
    for (BufId b : cg.data_bufs.row(v)) group_reads_from[cg.producer(b)] = stamp;
  };

  std::int32_t processed = 0;
  NodeId curr = list.head;
  while (curr != kNone && list.next[curr] != kNone) {
    const NodeId next_curr = list.next[curr];
    if (!cg.is_async_collective(curr)) {
      curr = next_curr;
      continue;
    }
    if (k.reorder_iterative_debug_limit_to_reorder >= 0 && processed >= k.reorder_iterative_debug_limit_to_reorder) break;
    ++processed;
    OverlapStat info;
    info.node = curr;
    Exposure ex = collective_exposure(cg, runtime, list, curr);
    info.comm_time_us = ex.comm_us;
    info.comp_time_us = ex.comp_us;
    info.initial_exposed_us = info.final_exposed_us = ex.comm_us - ex.comp_us;

    ++stamp;
    NodeId candidate = list.prev[curr];
    NodeId group_head = curr;
    const NodeId group_tail = curr;  // the group only grows backwards
    join_group(curr);
    std::vector<GroupWait> group_waits;
    double group_runtime = 0;
    std::int64_t group_peak = mem.post_alloc[curr];

    while (candidate != kNone) {
      if (use_estimates && info.final_exposed_us < -k.reorder_iterative_extra_comm_comp_overlap * info.comm_time_us) {
        info.limiting_factor = "unexposed by runtime estimations";
        break;
      }
      if (!k.reorder_iterative_unsafe_collectives_reorder && cg.is_collective(candidate)) {
        info.limiting_factor = "collective ordering";
        break;
      }
      if (group_reads_from[candidate] == stamp) {
        std::string not_groupable;
        if (!k.reorder_iterative_group_with_collectives && cg.is_async_collective(candidate))
          not_groupable = "candidate contains_collective";
        else if (!use_estimates && cg.is_gemm_like(candidate))
          not_groupable = "contains_gemm_like";
        if (not_groupable.empty()) {
          group_head = candidate;
          join_group(candidate);
          if (use_estimates) {
            if (cg.is_wait(candidate)) {
              Exposure w = wait_exposure(cg, runtime, list, candidate, wait_scan);
              group_waits.push_back({candidate, w.comm_us, w.comp_us});
            }
            if (!cg.is_async_collective(candidate)) group_runtime += runtime[candidate];
          }
          group_peak = std::max(group_peak, mem.post_alloc[candidate]);
          ++info.grouped;
          candidate = list.prev[candidate];
          continue;
        }
        info.limiting_factor = "data dependency: " + g.nodes[candidate].name + " (" + not_groupable + ")";
        break;
      }
      if (use_estimates) {
        if (!cg.is_async_collective(candidate)) {
          const double c_runtime = runtime[candidate];
          if (c_runtime > 0 && !group_waits.empty()) {
            double exposed_delta = std::max(0.0, info.comm_time_us - info.comp_time_us - c_runtime) -
                                   std::max(0.0, info.comm_time_us - info.comp_time_us);
            for (const auto& gw : group_waits)
              exposed_delta += std::max(0.0, gw.comm_us - gw.comp_us + c_runtime) - std::max(0.0, gw.comm_us - gw.comp_us);
            if (exposed_delta > 0) {
              info.limiting_factor = "candidate has compute " + std::to_string(c_runtime) +
                                     ", group contains waits, total_exposed_delta " + std::to_string(exposed_delta);
              break;
            }
            for (auto& gw : group_waits) gw.comp_us -= c_runtime;
          }
        } else if (group_runtime > 0) {
          // Unsafe collective reordering: Cj -> [group with compute, Ci] -> Wj
          // must not expose more of Cj.
          Exposure c = collective_exposure(cg, runtime, list, candidate);
          double exposed_delta = std::max(0.0, c.comm_us - c.comp_us + group_runtime) - std::max(0.0, c.comm_us - c.comp_us);
          if (exposed_delta > 0) {
            info.limiting_factor = "candidate " + g.nodes[candidate].name + " is collective, group_runtime:" +
                                   std::to_string(group_runtime) + " exposed_delta:" + std::to_string(exposed_delta);
            break;
          }
        }
      }

      list.segment(group_head, group_tail, group);
      const std::int64_t cand_alloc = mem.size_alloc[candidate];
      const std::int64_t cand_delta = cand_alloc - mem.size_free[candidate];
      // Buffers the candidate reads whose last use is in the group: after the
      // swap the candidate is their last use and frees them instead.
      changed_bufs.clear();
      changed_nodes.clear();
      for (BufId b : mem.bufs_of_successor.row(candidate)) {
        NodeId last = mem.last_use[b];
        if (in_group[last] != stamp) continue;
        if (moved_free[last] == 0) changed_nodes.push_back(last);
        moved_free[last] += mem.info.size_free[b];
        changed_bufs.push_back(b);
      }
      // A zero-byte buffer changes its last use without changing any sum;
      // the reference still takes the detailed path then.
      const bool last_use_changes = !changed_bufs.empty();
      std::int64_t potential_peak = 0;
      if (!last_use_changes) {
        potential_peak = std::max(group_peak - cand_delta, mem.post_free[group_tail] - cand_delta + cand_alloc);
      } else {
        std::int64_t delta = -cand_delta;
        for (NodeId gn : group) {
          post_alloc_after[gn] = mem.post_alloc[gn] + delta;
          potential_peak = std::max(potential_peak, post_alloc_after[gn]);
          delta += moved_free[gn];
        }
        post_alloc_after[candidate] = mem.post_free[group_tail] + delta + cand_alloc;
        potential_peak = std::max(potential_peak, post_alloc_after[candidate]);
      }
      if (static_cast<double>(potential_peak - mem.peak) > static_cast<double>(mem.peak) * k.reorder_iterative_peak_memory_budget) {
        for (NodeId gn : changed_nodes) moved_free[gn] = 0;
        info.limiting_factor = "peak memory new:" + std::to_string(potential_peak) + " vs base:" + std::to_string(mem.peak);
        break;
      }
      ++info.moves;
      list.move_after(candidate, group_head, group_tail);
      // The candidate now runs right after the collective: the first node of its window.
      if (!cg.is_collective(candidate)) info.comp_time_us += runtime[candidate];
      else if (!cg.is_async_collective(candidate)) info.comp_time_us = 0;
      info.final_exposed_us = info.comm_time_us - info.comp_time_us;

      if (!last_use_changes) {
        for (NodeId gn : group) {
          mem.post_alloc[gn] -= cand_delta;
          mem.post_free[gn] -= cand_delta;
        }
        mem.set_post_alloc(candidate, mem.post_free[group_tail] + cand_alloc);
      } else {
        for (BufId b : changed_bufs) mem.last_use[b] = candidate;
        std::int64_t moved_total = 0;
        for (NodeId gn : group) {
          moved_total += moved_free[gn];
          mem.size_free[gn] -= moved_free[gn];
          mem.set_post_alloc(gn, post_alloc_after[gn]);
        }
        mem.size_free[candidate] += moved_total;
        mem.set_post_alloc(candidate, post_alloc_after[candidate]);
      }
      for (NodeId gn : changed_nodes) moved_free[gn] = 0;
      candidate = list.prev[group_head];
    }
    result.stats.push_back(std::move(info));
    curr = next_curr;
  }
  result.order = list.to_order();
  result.peak_before = mem.peak;
  result.peak_after = estimate_peak_memory_allocfree(g, mem.info, result.order).peak;
  return result;
}

}  // namespace schedlab
