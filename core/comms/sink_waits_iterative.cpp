// Inductor's sink_waits_iterative: each wait, right to left, is pushed later
// one swap at a time (the next node moves in front of it). Successors that
// read the group are pulled into the group when groupable; the swap is
// refused once the incrementally tracked peak would exceed the budget.
// Cost: O(moves x group size + the waits' spans back to their collectives).
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

struct GroupCollective {
  NodeId collective;
  double comm_us, comp_us;
};

// _is_node_groupable_for_sink_waits; empty when groupable.
std::string sink_not_groupable(const CommGraph& cg, NodeId candidate, bool use_estimates) {
  if (cg.is_wait(candidate)) return "candidate contains wait";
  if (cg.is_async_collective(candidate)) return "candidate contains_async_collective";
  if (!use_estimates) {
    if (cg.is_collective(candidate)) return "candidate contains collective";
    if (cg.is_gemm_like(candidate)) return "candidate contains gemm_like";
  }
  return {};
}

}  // namespace

CommPassResult sink_waits_iterative(const CommGraph& cg, const Order& order, const CommKnobs& k) {
  const Graph& g = *cg.graph;
  CommPassResult result;
  if (order.empty()) return result;
  const std::int32_t n = cg.num_nodes();
  IterativeMemory mem = init_iterative_memory(g, order);
  const std::vector<double> runtime =
      scaled_runtimes(cg, k.reorder_sink_runtime_estimations_comm_mult, k.reorder_sink_runtime_estimations_non_comm_mult);
  LinkedOrder list = LinkedOrder::from(order, n);
  comms_detail::WaitScan wait_scan(n);
  std::vector<NodeId> group;  // the current group, head to tail
  const bool use_estimates = k.sink_iterative_use_runtime_estimations;

  std::vector<std::int32_t> in_group(n, -1), group_pos(n, 0);
  std::vector<std::uint8_t> processed(n, 0);
  std::vector<std::int64_t> freed_instead(n, 0);  // bytes a group node frees instead of the candidate
  std::vector<std::int64_t> post_alloc_after(n, 0);
  std::vector<NodeId> changed_nodes;
  std::int32_t stamp = 0, processed_count = 0;

  NodeId curr = order.back();
  while (curr != kNone && list.prev[curr] != kNone) {
    const NodeId prev_curr = list.prev[curr];
    if (k.sink_waits_iterative_debug_limit_to_sink >= 0 && processed_count >= k.sink_waits_iterative_debug_limit_to_sink) break;
    if (!cg.is_wait(curr) || processed[curr]) {
      curr = prev_curr;
      continue;
    }
    processed[curr] = 1;
    ++processed_count;
    OverlapStat info;
    info.node = curr;
    Exposure ex = wait_exposure(cg, runtime, list, curr, wait_scan);
    info.comm_time_us = ex.comm_us;
    info.comp_time_us = ex.comp_us;
    info.initial_exposed_us = info.final_exposed_us = ex.comm_us - ex.comp_us;

    ++stamp;
    NodeId candidate = list.next[curr];
    const NodeId group_head = curr;  // the group only grows forwards
    NodeId group_tail = curr;
    std::int32_t group_size = 1;
    in_group[curr] = stamp;
    group_pos[curr] = 0;
    std::vector<GroupCollective> group_colls;
    double group_runtime = 0;
    std::int64_t group_peak = mem.post_alloc[curr];
    bool group_contains_collective = cg.is_collective(curr);

    while (candidate != kNone) {
      if (use_estimates && info.final_exposed_us < -k.sink_iterative_extra_comm_comp_overlap * info.comm_time_us) {
        info.limiting_factor = "unexposed by runtime estimations";
        break;
      }
      bool data_dep = false;
      for (BufId b : cg.data_bufs.row(candidate))
        if (in_group[cg.producer(b)] == stamp) data_dep = true;
      // Conservative: a wait does not sink past the next async collective.
      if (!k.sink_waits_iterative_swap_with_collectives && cg.is_async_collective(candidate)) {
        info.limiting_factor = "candidate contains_async_collective " + g.nodes[candidate].name;
        break;
      }
      const bool both_contain_comms = group_contains_collective && cg.is_collective(candidate);
      if (data_dep || both_contain_comms) {
        std::string not_groupable = sink_not_groupable(cg, candidate, use_estimates);
        if (not_groupable.empty()) {
          group_tail = candidate;
          in_group[candidate] = stamp;
          group_pos[candidate] = group_size++;
          group_contains_collective = group_contains_collective || cg.is_collective(candidate);
          if (use_estimates && cg.is_collective(candidate)) {
            Exposure c = collective_exposure(cg, runtime, list, candidate);
            group_colls.push_back({candidate, c.comm_us, c.comp_us});
          }
          if (!cg.is_async_collective(candidate)) group_runtime += runtime[candidate];
          group_peak = std::max(group_peak, mem.post_alloc[candidate]);
          ++info.grouped;
          candidate = list.next[candidate];
          continue;
        }
        if (data_dep) {
          info.limiting_factor = "data dependency: " + g.nodes[candidate].name + " (" + not_groupable + ")";
          break;
        }
        if (!k.sink_waits_iterative_unsafe_collectives_reorder) {
          info.limiting_factor = "collective ordering with candidate " + g.nodes[candidate].name;
          break;
        }
      }
      if (use_estimates) {
        if (cg.is_wait(candidate)) {
          // Its collective is before the group: the swap may expose more of it.
          Exposure w = wait_exposure(cg, runtime, list, candidate, wait_scan);
          double before = std::max(0.0, w.comm_us - w.comp_us);
          double after = std::max(0.0, w.comm_us - w.comp_us + group_runtime);
          if (after > before) {
            info.limiting_factor = "candidate is wait, exposed_before:" + std::to_string(before) +
                                   " vs exposed_after:" + std::to_string(after);
            break;
          }
        }
        if (!cg.is_async_collective(candidate)) {
          const double c_runtime = runtime[candidate];
          if (c_runtime > 0 && !group_colls.empty()) {
            // As the 2.11 source reads: the "- max(0, exposed - c_runtime)"
            // term stands on its own line and is discarded.
            double exposed_delta = std::max(0.0, info.comm_time_us - info.comp_time_us);
            for (const auto& gc : group_colls)
              exposed_delta += std::max(0.0, gc.comm_us - gc.comp_us) - std::max(0.0, gc.comm_us - gc.comp_us + c_runtime);
            if (exposed_delta > 0) {
              info.limiting_factor = "candidate has compute " + std::to_string(c_runtime) +
                                     ", group contains collectives, total_exposed_delta " + std::to_string(exposed_delta);
              break;
            }
            for (auto& gc : group_colls) gc.comp_us -= c_runtime;
          }
        }
      }

      list.segment(group_head, group_tail, group);
      const std::int64_t cand_alloc = mem.size_alloc[candidate];
      const std::int64_t cand_delta = cand_alloc - mem.size_free[candidate];
      // Buffers the candidate frees that the group also reads: after the swap
      // the group's last reader of each frees it instead.
      changed_nodes.clear();
      std::int64_t moved_total = 0;
      bool last_use_changes = false;
      for (BufId b : mem.bufs_of_successor.row(candidate)) {
        if (mem.last_use[b] != candidate) continue;
        NodeId last_in_group = kNone;
        for (NodeId s : mem.info.buffer_succ_nodes.row(b))
          if (in_group[s] == stamp && (last_in_group == kNone || group_pos[s] > group_pos[last_in_group])) last_in_group = s;
        if (last_in_group == kNone) continue;
        last_use_changes = true;
        if (freed_instead[last_in_group] == 0) changed_nodes.push_back(last_in_group);
        freed_instead[last_in_group] += mem.info.size_free[b];
        moved_total += mem.info.size_free[b];
      }
      const std::int64_t pre_group = mem.post_alloc[group_head] - mem.size_alloc[group_head];
      std::int64_t potential_peak = 0;
      if (!last_use_changes) {
        potential_peak = std::max(group_peak + cand_delta, pre_group + cand_alloc);
      } else {
        post_alloc_after[candidate] = pre_group + cand_alloc;
        potential_peak = post_alloc_after[candidate];
        std::int64_t delta = cand_delta + moved_total;
        for (NodeId gn : group) {
          post_alloc_after[gn] = mem.post_alloc[gn] + delta;
          potential_peak = std::max(potential_peak, post_alloc_after[gn]);
          delta -= freed_instead[gn];
        }
      }
      if (static_cast<double>(potential_peak - mem.peak) > static_cast<double>(mem.peak) * k.sink_iterative_peak_memory_budget) {
        for (NodeId gn : changed_nodes) freed_instead[gn] = 0;
        info.limiting_factor = "peak memory new:" + std::to_string(potential_peak) + " vs base:" + std::to_string(mem.peak);
        break;
      }
      ++info.moves;
      list.move_before(candidate, group_head, group_tail);
      // The candidate now runs right before the wait: the last node of its window.
      if (!cg.is_collective(candidate) && !cg.is_wait(candidate)) {
        if (!ex.reset) info.comp_time_us += runtime[candidate];
      } else {
        ex = wait_exposure(cg, runtime, list, curr, wait_scan);
        info.comm_time_us = ex.comm_us;
        info.comp_time_us = ex.comp_us;
      }
      info.final_exposed_us = info.comm_time_us - info.comp_time_us;

      if (!last_use_changes) {
        mem.set_post_alloc(candidate, pre_group + cand_alloc);
        for (NodeId gn : group) {
          mem.post_alloc[gn] += cand_delta;
          mem.post_free[gn] += cand_delta;
        }
      } else {
        // As in the reference, last uses are not updated here.
        mem.size_free[candidate] -= moved_total;
        mem.set_post_alloc(candidate, post_alloc_after[candidate]);
        for (NodeId gn : group) {
          mem.size_free[gn] += freed_instead[gn];
          mem.set_post_alloc(gn, post_alloc_after[gn]);
        }
      }
      for (NodeId gn : changed_nodes) freed_instead[gn] = 0;
      candidate = list.next[group_tail];
    }
    result.stats.push_back(std::move(info));
    curr = prev_curr;
  }
  result.order = list.to_order();
  result.peak_before = mem.peak;
  result.peak_after = estimate_peak_memory_allocfree(g, mem.info, result.order).peak;
  return result;
}

}  // namespace schedlab
