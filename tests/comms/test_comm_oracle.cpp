// The fast comm passes against plain transcriptions of Inductor 2.11's loops
// (comms.py: _schedule_for_comm, _reorder_communication_preserving_peak_memory_internal,
// _sink_waits_iterative_internal and their named helpers), on random graphs
// with many ties, several collectives, synchronous collectives, gemm-like
// nodes, mutations and fake deps, and on the fixtures. The oracles walk the
// linked list again after every swap, as the reference does; runtimes are
// small integers so that every sum is exact and the statistics compare exactly.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "core/comms/passes.h"
#include "core/cost/cost_model.h"
#include "core/gen/distributed.h"
#include "core/memory/estimate.h"
#include "tests/test_util.h"

using namespace schedlab;
using nlohmann::json;

namespace {

// ---------------------------------------------------------------- random graphs

using test::SplitMix;

struct RandomCommGraph {
  Graph graph;
  std::vector<double> runtime_us;  // integers: every sum is exact
};

// A graph of compute, collectives and their waits. Sizes and runtimes come
// from small sets (ties everywhere); waits may come late or out of order;
// some collectives are synchronous (shard_dim_alltoall), some compute is
// gemm-like, some buffers mutate earlier ones, some reads are weak or fake.
RandomCommGraph random_comm_graph(std::uint64_t seed, int num_nodes) {
  SplitMix rng{seed};
  json inputs = json::array(), nodes = json::array(), outputs = json::array();
  std::vector<std::string> bufs;  // readable buffers, oldest first
  std::vector<double> runtimes;
  const int num_inputs = 1 + rng.below(4);
  for (int i = 0; i < num_inputs; ++i) {
    std::string name = (i % 2 ? "in" : "primals_") + std::to_string(i);
    inputs.push_back({{"name", name}, {"bytes", 8 * rng.below(3)}});
    bufs.push_back(name);
  }
  const std::int64_t sizes[] = {0, 8, 8, 16, 32, 64};
  auto pick = [&]() -> const std::string& {
    // Mostly recent buffers, sometimes anything.
    int n = static_cast<int>(bufs.size());
    return rng.chance(70) ? bufs[n - 1 - rng.below(std::min(n, 6))] : bufs[rng.below(n)];
  };
  std::vector<std::string> pending;  // collective outputs without a wait yet
  std::string last_collective_out;
  int id = 0;
  auto add_wait = [&](std::size_t which) {
    std::string out = pending[which];
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(which));
    std::string name = "w" + std::to_string(id++);
    json w = {{"name", name},
              {"kind", "wait"},
              {"kernel", "torch.ops._c10d_functional.wait_tensor.default"},
              {"reads", json::array({{{"name", out}, {"dep", "star"}}})}};
    if (rng.chance(80)) {
      w["outputs"] = json::array({{{"name", name + "_v"}, {"layout", "none"}, {"bytes", 0}, {"mutation_of", out}}});
      bufs.push_back(name + "_v");
    } else {
      w["outputs"] = json::array({{{"name", name + "_o"}, {"bytes", sizes[rng.below(6)]}}});
      bufs.push_back(name + "_o");
    }
    nodes.push_back(w);
    runtimes.push_back(rng.below(2));
  };
  while (id < num_nodes) {
    const int roll = rng.below(100);
    if (!pending.empty() && (roll < 18 || id + static_cast<int>(pending.size()) >= num_nodes)) {
      add_wait(rng.chance(75) ? 0 : static_cast<std::size_t>(rng.below(static_cast<int>(pending.size()))));
      continue;
    }
    std::string name = "n" + std::to_string(id++);
    if (roll < 33) {
      std::string out = name + "_out";
      json c = {{"name", name},
                {"kind", "collective"},
                {"kernel", rng.chance(12) ? "torch.ops._dtensor.shard_dim_alltoall.default" : "torch.ops._c10d_functional.all_gather_into_tensor.default"},
                {"reads", json::array({{{"name", pick()}}})},
                {"outputs", json::array({{{"name", out}, {"bytes", sizes[1 + rng.below(5)]}}})},
                {"collective", {{"op", "all_gather_into_tensor"}, {"group_size", 2}, {"bytes", 8}}}};
      if (!last_collective_out.empty() && rng.chance(50))
        c["reads"].push_back({{"name", last_collective_out}, {"dep", "fake_weak"}});
      last_collective_out = out;
      nodes.push_back(c);
      runtimes.push_back(2 + rng.below(12));
      pending.push_back(out);
      if (rng.chance(15)) bufs.push_back(out);  // read before its wait: a reader of the collective
      continue;
    }
    json n = {{"name", name}, {"kind", "pointwise"}, {"reads", json::array()}};
    if (rng.chance(15)) n["kernel"] = "extern_kernels.mm", n["kind"] = "extern";
    std::set<std::string> read;
    const int num_reads = 1 + rng.below(3);
    for (int r = 0; r < num_reads; ++r) {
      const std::string& b = pick();
      if (!read.insert(b).second) continue;
      const int kind = rng.below(100);
      n["reads"].push_back({{"name", b}, {"dep", kind < 8 ? "weak" : kind < 14 ? "fake_weak" : "memory"}, {"bytes", 8}});
    }
    json outs = json::array();
    const int num_outs = rng.chance(10) ? 0 : rng.chance(15) ? 2 : 1;
    for (int o = 0; o < num_outs; ++o) {
      std::string out = name + "_o" + std::to_string(o);
      json buf = {{"name", out}, {"bytes", sizes[rng.below(6)]}};
      if (o == 0 && rng.chance(12)) {
        // An in-place update of something it reads.
        std::string target = n["reads"][0]["name"].get<std::string>();
        buf["mutation_of"] = target;
        buf["bytes"] = 0;
        buf["layout"] = "none";
      }
      outs.push_back(buf);
      bufs.push_back(out);
    }
    n["outputs"] = outs;
    nodes.push_back(n);
    runtimes.push_back(rng.below(6));
  }
  while (!pending.empty()) add_wait(0);
  for (int i = 0; i < 2; ++i) outputs.push_back(bufs[bufs.size() - 1 - static_cast<std::size_t>(rng.below(std::min<int>(4, static_cast<int>(bufs.size()))))]);
  json doc = {{"format", "schedgraph/1"}, {"world_size", 2}, {"inputs", inputs}, {"outputs", outputs}, {"nodes", nodes}};
  return {load_graph(doc.dump()), runtimes};
}

// ---------------------------------------------------------------- _schedule_for_comm

// Inductor's _schedule_for_comm: a heap of Runnables keyed by
// (score_0, score_1, score_2); ancestors by a plain transitive closure.
Order oracle_schedule_for_comm(const CommGraph& cg, const Order& snodes, bool raise, bool sink, bool reorder_for_overlap) {
  const Graph& g = *cg.graph;
  const std::int32_t n = cg.num_nodes();
  const std::int32_t maxsize = std::numeric_limits<std::int32_t>::max();
  std::vector<std::int32_t> score0(n, maxsize), score1(n, 0), score2(n, 0);
  for (std::int32_t i = 0; i < n; ++i) score2[snodes[i]] = i;
  // snode.ancestors, in node-level form: every node it transitively reads from.
  auto ancestors = [&](NodeId v) {
    std::set<NodeId> seen;
    std::vector<NodeId> stack{v};
    while (!stack.empty()) {
      NodeId u = stack.back();
      stack.pop_back();
      for (const Dep& d : g.nodes[u].reads) {
        NodeId p = g.buffers[d.buf].producer;
        if (p != kNone && p != u && seen.insert(p).second) stack.push_back(p);
      }
    }
    return seen;
  };
  std::int32_t comm_idx = 0;
  const bool from_operations = !g.operations.empty();
  const std::vector<std::int32_t> blocked = from_operations ? lowest_blocked_collective(cg, snodes) : std::vector<std::int32_t>{};
  for (NodeId v : snodes) {
    if (raise && cg.is_collective(v)) {
      score0[v] = comm_idx;
      if (!from_operations)
        for (NodeId a : ancestors(v)) score0[a] = std::min(score0[a], comm_idx);
      ++comm_idx;
    } else if (sink && cg.is_wait(v)) {
      score1[v] = 1;
    }
  }
  // Operation-level ancestry (fused graphs) is the library's: only the loop is under test here.
  if (raise && from_operations) score0 = blocked;
  auto score = [&](NodeId v) { return std::tuple(score0[v], score1[v], score2[v]); };
  std::vector<std::set<BufId>> unmet(n);
  std::map<BufId, std::vector<NodeId>> buffer_users;
  std::vector<NodeId> ready;
  for (NodeId v : snodes) {
    for (BufId b : cg.unmet_bufs.row(v)) unmet[v].insert(b);
    if (unmet[v].empty()) ready.push_back(v);
    for (BufId b : unmet[v]) buffer_users[b].push_back(v);
  }
  Order scheduled;
  auto schedule = [&](NodeId v) {
    scheduled.push_back(v);
    for (BufId b : g.nodes[v].outputs)
      for (NodeId u : buffer_users[b]) {
        unmet[u].erase(b);
        if (unmet[u].empty()) ready.push_back(u);
      }
  };
  auto pop_min = [&](auto&& eligible) {
    auto best = ready.end();
    for (auto it = ready.begin(); it != ready.end(); ++it)
      if (eligible(*it) && (best == ready.end() || score(*it) < score(*best))) best = it;
    if (best == ready.end()) return kNone;
    NodeId v = *best;
    ready.erase(best);
    return v;
  };
  auto anything = [](NodeId) { return true; };
  auto overlapping = [&](NodeId v) { return !cg.is_collective(v) && !cg.is_wait(v); };
  while (!ready.empty()) {
    NodeId v = pop_min(anything);
    if (reorder_for_overlap && cg.is_collective(v)) {
      schedule(v);
      double collective_cost = cg.runtime_us[v];
      NodeId c;
      while (collective_cost > 0 && (c = pop_min(overlapping)) != kNone) {
        schedule(c);
        collective_cost -= cg.runtime_us[c];
      }
    } else {
      schedule(v);
    }
  }
  return scheduled;
}

// ---------------------------------------------------------------- shared by the iterative oracles

struct LinkedList {
  std::vector<NodeId> prev, next;
  NodeId head = kNone;
};

LinkedList initialize_double_linked_list(const Order& snodes, std::int32_t n) {
  LinkedList l{std::vector<NodeId>(n, kNone), std::vector<NodeId>(n, kNone), snodes.empty() ? kNone : snodes[0]};
  for (std::size_t i = 0; i < snodes.size(); ++i) {
    if (i > 0) l.prev[snodes[i]] = snodes[i - 1];
    if (i + 1 < snodes.size()) l.next[snodes[i]] = snodes[i + 1];
  }
  return l;
}

Order group_nodes_from_linked_list(NodeId head, NodeId tail, const LinkedList& l) {
  Order ret;
  for (NodeId v = head; v != kNone; v = l.next[v]) {
    ret.push_back(v);
    if (v == tail) break;
  }
  return ret;
}

struct MemoryTracking {
  std::int64_t peak_memory = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> curr_memory;  // (post_alloc, post_free)
  std::vector<std::int64_t> size_alloc, size_free;                 // snodes_allocfree
  std::vector<NodeId> buf_to_snode_last_use;                       // kNone: not a key
  std::vector<std::vector<BufId>> candidate_buffer_map;
};

MemoryTracking initialize_memory_tracking(const Graph& g, const MemoryPlanningInfo& info, const Order& snodes) {
  AllocFreeEstimate est = estimate_peak_memory_allocfree(g, info, snodes);
  MemoryTracking m;
  m.peak_memory = est.peak;
  m.curr_memory.assign(g.nodes.size(), {0, 0});
  for (std::size_t t = 0; t < snodes.size(); ++t) m.curr_memory[snodes[t]] = {est.post_alloc[t], est.post_free[t]};
  m.size_alloc = est.node_alloc;
  m.size_free = est.node_free;
  m.buf_to_snode_last_use = est.last_use;
  m.candidate_buffer_map.resize(g.nodes.size());
  for (BufId b = 0; b < g.num_buffers(); ++b)
    if (m.buf_to_snode_last_use[b] != kNone)
      for (NodeId s : info.buffer_succ_nodes.row(b)) m.candidate_buffer_map[s].push_back(b);
  return m;
}

bool is_corresponding_collective_wait(const CommGraph& cg, NodeId collective, NodeId wait) {
  for (BufId b : cg.data_bufs.row(wait))
    if (cg.producer(b) == collective) return true;
  return false;
}

std::pair<double, double> coll_exposed_communication_time(const CommGraph& cg, NodeId collective, const LinkedList& l,
                                                          const std::vector<double>& runtimes) {
  double comm_time = runtimes[collective], comp_time = 0;
  std::vector<NodeId> collectives_found;
  for (NodeId s = l.next[collective]; s != kNone; s = l.next[s]) {
    if (is_corresponding_collective_wait(cg, collective, s)) break;
    if (cg.is_collective(s)) {
      if (!cg.is_async_collective(s)) break;
      collectives_found.push_back(s);
      continue;
    }
    if (cg.is_wait(s) && !collectives_found.empty() && is_corresponding_collective_wait(cg, collective, s)) break;
    comp_time += runtimes[s];
  }
  return {comm_time, comp_time};
}

std::pair<double, double> wait_exposed_communication_time(const CommGraph& cg, NodeId wait, const LinkedList& l,
                                                          const std::vector<double>& runtimes) {
  double comm_time = 0, comp_time = 0;
  std::vector<NodeId> waits_found;
  for (NodeId s = l.prev[wait]; s != kNone; s = l.prev[s]) {
    if (cg.is_wait(s)) waits_found.push_back(s);
    if (cg.is_collective(s)) {
      if (is_corresponding_collective_wait(cg, s, wait)) {
        comm_time = runtimes[s];
        break;
      }
      if (!cg.is_async_collective(s)) {
        comp_time = 0;
        continue;
      }
      for (NodeId w : waits_found)
        if (is_corresponding_collective_wait(cg, s, w)) {
          comp_time = 0;
          break;
        }
      continue;
    }
    comp_time += runtimes[s];
  }
  return {comm_time, comp_time};
}

bool reads_from(const CommGraph& cg, NodeId reader, const std::set<NodeId>& producers) {
  for (BufId b : cg.data_bufs.row(reader))
    if (producers.count(cg.producer(b))) return true;
  return false;
}

// ---------------------------------------------------------------- reorder_communication_preserving_peak_memory

void perform_double_linked_list_swap(NodeId candidate, NodeId group_head, NodeId group_tail, LinkedList& l) {
  NodeId candidate_prev = l.prev[candidate];
  if (candidate_prev != kNone) l.next[candidate_prev] = group_head;
  l.prev[group_head] = candidate_prev;
  NodeId group_tail_next = l.next[group_tail];
  if (group_tail_next != kNone) l.prev[group_tail_next] = candidate;
  l.next[candidate] = group_tail_next;
  l.prev[candidate] = group_tail;
  l.next[group_tail] = candidate;
  if (l.head == candidate) l.head = group_head;
}

using BufsByGroupNode = std::map<NodeId, std::vector<BufId>>;

BufsByGroupNode find_buffers_with_changed_last_use(NodeId candidate, const Order& gns, const MemoryTracking& m) {
  BufsByGroupNode out;
  std::set<NodeId> gns_set(gns.begin(), gns.end());
  for (BufId b : m.candidate_buffer_map[candidate])
    if (gns_set.count(m.buf_to_snode_last_use[b])) out[m.buf_to_snode_last_use[b]].push_back(b);
  return out;
}

std::int64_t calculate_potential_peak_memory_reorder(NodeId candidate, const Order& gns, NodeId group_tail, std::int64_t group_peak_memory,
                                                     std::int64_t candidate_delta_mem, const BufsByGroupNode& changed,
                                                     const MemoryTracking& m, const MemoryPlanningInfo& info,
                                                     std::map<NodeId, std::int64_t>& post_alloc_update) {
  if (changed.empty())
    return std::max(group_peak_memory - candidate_delta_mem, m.curr_memory[group_tail].second - candidate_delta_mem + m.size_alloc[candidate]);
  std::int64_t potential_peak = 0, delta = -candidate_delta_mem;
  for (NodeId gn : gns) {
    std::int64_t post_alloc = m.curr_memory[gn].first + delta;
    post_alloc_update[gn] = post_alloc;
    potential_peak = std::max(potential_peak, post_alloc);
    if (auto it = changed.find(gn); it != changed.end())
      for (BufId b : it->second) delta += info.size_free[b];
  }
  std::int64_t candidate_post_alloc = m.curr_memory[group_tail].second + delta + m.size_alloc[candidate];
  post_alloc_update[candidate] = candidate_post_alloc;
  return std::max(potential_peak, candidate_post_alloc);
}

void update_memory_tracking_after_swap_reorder(NodeId candidate, const Order& gns, NodeId group_tail, std::int64_t candidate_delta_mem,
                                               const BufsByGroupNode& changed, const std::map<NodeId, std::int64_t>& post_alloc_update,
                                               MemoryTracking& m, const MemoryPlanningInfo& info) {
  if (changed.empty()) {
    for (NodeId gn : gns) {
      m.curr_memory[gn].first -= candidate_delta_mem;
      m.curr_memory[gn].second -= candidate_delta_mem;
    }
    std::int64_t post_alloc = m.curr_memory[group_tail].second + m.size_alloc[candidate];
    m.curr_memory[candidate] = {post_alloc, post_alloc - m.size_free[candidate]};
    return;
  }
  for (const auto& [gn, bufs] : changed)
    for (BufId b : bufs) m.buf_to_snode_last_use[b] = candidate;
  std::int64_t moved_sum = 0;
  for (NodeId gn : gns) {
    std::int64_t moved = 0;
    if (auto it = changed.find(gn); it != changed.end())
      for (BufId b : it->second) moved += info.size_free[b];
    moved_sum += moved;
    m.size_free[gn] -= moved;
    std::int64_t post_alloc = post_alloc_update.at(gn);
    m.curr_memory[gn] = {post_alloc, post_alloc - m.size_free[gn]};
  }
  std::int64_t post_alloc = post_alloc_update.at(candidate);
  m.size_free[candidate] += moved_sum;
  m.curr_memory[candidate] = {post_alloc, post_alloc - m.size_free[candidate]};
}

CommPassResult oracle_reorder(const CommGraph& cg, const Order& snodes, const CommKnobs& k) {
  const Graph& g = *cg.graph;
  CommPassResult result;
  if (std::none_of(snodes.begin(), snodes.end(), [&](NodeId v) { return cg.is_collective(v); })) {
    result.order = snodes;
    return result;
  }
  const MemoryPlanningInfo info = compute_planning_info(g, snodes);
  MemoryTracking m = initialize_memory_tracking(g, info, snodes);
  const auto runtimes = scaled_runtimes(cg, k.reorder_sink_runtime_estimations_comm_mult, k.reorder_sink_runtime_estimations_non_comm_mult);
  LinkedList l = initialize_double_linked_list(snodes, cg.num_nodes());
  const bool estimates = k.reorder_iterative_use_runtime_estimations;
  int processed = 0;
  NodeId curr = l.head;
  while (curr != kNone && l.next[curr] != kNone) {
    NodeId next_curr = l.next[curr];
    if (!cg.is_async_collective(curr)) {
      curr = next_curr;
      continue;
    }
    if (k.reorder_iterative_debug_limit_to_reorder >= 0 && processed >= k.reorder_iterative_debug_limit_to_reorder) break;
    ++processed;
    OverlapStat info_;
    info_.node = curr;
    auto [comm0, comp0] = coll_exposed_communication_time(cg, curr, l, runtimes);
    info_.comm_time_us = comm0;
    info_.comp_time_us = comp0;
    info_.initial_exposed_us = info_.final_exposed_us = comm0 - comp0;
    NodeId candidate = l.prev[curr], group_head = curr, group_tail = curr;
    std::vector<std::pair<double, double>> group_waits;
    double group_runtime = 0;
    std::int64_t group_peak_memory = m.curr_memory[curr].first;
    std::set<NodeId> group{curr};
    while (candidate != kNone) {
      if (estimates && info_.final_exposed_us < -k.reorder_iterative_extra_comm_comp_overlap * info_.comm_time_us) {
        info_.limiting_factor = "unexposed by runtime estimations";
        break;
      }
      if (!k.reorder_iterative_unsafe_collectives_reorder && cg.is_collective(candidate)) {
        info_.limiting_factor = "collective ordering";
        break;
      }
      bool data_dep = false;
      for (NodeId gn : group) data_dep = data_dep || reads_from(cg, gn, {candidate});
      if (data_dep) {
        // _is_node_groupable_for_reorder
        std::string reason;
        if (!k.reorder_iterative_group_with_collectives && cg.is_async_collective(candidate)) reason = "candidate contains_collective";
        else if (!estimates && cg.is_gemm_like(candidate)) reason = "contains_gemm_like";
        if (reason.empty()) {
          group_head = candidate;
          group.insert(candidate);
          if (estimates) {
            if (cg.is_wait(candidate)) group_waits.push_back(wait_exposed_communication_time(cg, candidate, l, runtimes));
            if (!cg.is_async_collective(candidate)) group_runtime += runtimes[candidate];
          }
          group_peak_memory = std::max(group_peak_memory, m.curr_memory[candidate].first);
          ++info_.grouped;
          candidate = l.prev[candidate];
          continue;
        }
        info_.limiting_factor = "data dependency: " + g.nodes[candidate].name + " (" + reason + ")";
        break;
      }
      if (estimates) {
        if (!cg.is_async_collective(candidate)) {
          double c_runtime = runtimes[candidate];
          if (c_runtime > 0 && !group_waits.empty()) {
            double exposed_delta = std::max(0.0, info_.comm_time_us - info_.comp_time_us - c_runtime) -
                                   std::max(0.0, info_.comm_time_us - info_.comp_time_us);
            for (auto [gw_comm, gw_comp] : group_waits)
              exposed_delta += std::max(0.0, gw_comm - gw_comp + c_runtime) - std::max(0.0, gw_comm - gw_comp);
            if (exposed_delta > 0) {
              info_.limiting_factor = "candidate has compute " + std::to_string(c_runtime) + ", group contains waits, total_exposed_delta " +
                                      std::to_string(exposed_delta);
              break;
            }
            for (auto& gw : group_waits) gw.second -= c_runtime;
          }
        } else if (group_runtime > 0) {
          auto [c_comm, c_comp] = coll_exposed_communication_time(cg, candidate, l, runtimes);
          double exposed_delta = std::max(0.0, c_comm - c_comp + group_runtime) - std::max(0.0, c_comm - c_comp);
          if (exposed_delta > 0) {
            info_.limiting_factor = "candidate " + g.nodes[candidate].name + " is collective, group_runtime:" + std::to_string(group_runtime) +
                                    " exposed_delta:" + std::to_string(exposed_delta);
            break;
          }
        }
      }
      Order gns = group_nodes_from_linked_list(group_head, group_tail, l);
      const std::int64_t candidate_delta_mem = m.size_alloc[candidate] - m.size_free[candidate];
      BufsByGroupNode changed = find_buffers_with_changed_last_use(candidate, gns, m);
      std::map<NodeId, std::int64_t> post_alloc_update;
      std::int64_t potential_peak = calculate_potential_peak_memory_reorder(candidate, gns, group_tail, group_peak_memory, candidate_delta_mem,
                                                                            changed, m, info, post_alloc_update);
      if (static_cast<double>(potential_peak - m.peak_memory) > static_cast<double>(m.peak_memory) * k.reorder_iterative_peak_memory_budget) {
        info_.limiting_factor = "peak memory new:" + std::to_string(potential_peak) + " vs base:" + std::to_string(m.peak_memory);
        break;
      }
      ++info_.moves;
      perform_double_linked_list_swap(candidate, group_head, group_tail, l);
      auto [comm, comp] = coll_exposed_communication_time(cg, curr, l, runtimes);
      info_.comm_time_us = comm;
      info_.comp_time_us = comp;
      info_.final_exposed_us = comm - comp;
      update_memory_tracking_after_swap_reorder(candidate, gns, group_tail, candidate_delta_mem, changed, post_alloc_update, m, info);
      candidate = l.prev[group_head];
    }
    result.stats.push_back(info_);
    curr = next_curr;
  }
  result.order = group_nodes_from_linked_list(l.head, kNone, l);
  result.peak_before = m.peak_memory;
  result.peak_after = estimate_peak_memory_allocfree(g, info, result.order).peak;
  return result;
}

// ---------------------------------------------------------------- sink_waits_iterative

void perform_double_linked_list_swap_sink_waits(NodeId candidate, NodeId group_head, NodeId group_tail, LinkedList& l) {
  NodeId group_head_prev = l.prev[group_head];
  if (group_head_prev != kNone) l.next[group_head_prev] = candidate;
  l.prev[candidate] = group_head_prev;
  NodeId candidate_next = l.next[candidate];
  if (candidate_next != kNone) l.prev[candidate_next] = group_tail;
  l.next[group_tail] = candidate_next;
  l.prev[group_head] = candidate;
  l.next[candidate] = group_head;
  if (group_head == l.head) l.head = candidate;
}

BufsByGroupNode find_buffers_with_changed_last_use_sink_waits(NodeId candidate, const Order& gns, const MemoryTracking& m,
                                                              const MemoryPlanningInfo& info) {
  BufsByGroupNode out;
  for (BufId b : m.candidate_buffer_map[candidate]) {
    if (m.buf_to_snode_last_use[b] != candidate) continue;
    auto succ = info.buffer_succ_nodes.row(b);
    NodeId last_succ_gn = kNone;
    for (NodeId gn : gns)
      if (std::find(succ.begin(), succ.end(), gn) != succ.end()) last_succ_gn = gn;
    if (last_succ_gn != kNone) out[last_succ_gn].push_back(b);
  }
  return out;
}

std::int64_t calculate_potential_peak_memory_sink_waits(NodeId candidate, const Order& gns, NodeId group_head, std::int64_t group_peak_memory,
                                                        std::int64_t candidate_delta_mem, const BufsByGroupNode& changed, const MemoryTracking& m,
                                                        const MemoryPlanningInfo& info, std::map<NodeId, std::int64_t>& post_alloc_update,
                                                        std::map<NodeId, std::int64_t>& size_free_delta_update) {
  const std::int64_t pre_group_mem = m.curr_memory[group_head].first - m.size_alloc[group_head];
  if (changed.empty()) return std::max(group_peak_memory + candidate_delta_mem, pre_group_mem + m.size_alloc[candidate]);
  std::int64_t candidate_post_alloc = pre_group_mem + m.size_alloc[candidate];
  post_alloc_update[candidate] = candidate_post_alloc;
  std::int64_t potential_peak = candidate_post_alloc, to_move = 0;
  for (const auto& [gn, bufs] : changed)
    for (BufId b : bufs) to_move += info.size_free[b];
  size_free_delta_update[candidate] = -to_move;
  std::int64_t delta_mem = candidate_delta_mem + to_move;
  for (NodeId gn : gns) {
    std::int64_t post_alloc = m.curr_memory[gn].first + delta_mem;
    post_alloc_update[gn] = post_alloc;
    potential_peak = std::max(potential_peak, post_alloc);
    std::int64_t add = 0;
    if (auto it = changed.find(gn); it != changed.end())
      for (BufId b : it->second) add += info.size_free[b];
    size_free_delta_update[gn] = add;
    delta_mem -= add;
  }
  return potential_peak;
}

void update_memory_tracking_after_swap_sink_waits(NodeId candidate, const Order& gns, std::int64_t candidate_delta_mem,
                                                  const BufsByGroupNode& changed, const std::map<NodeId, std::int64_t>& post_alloc_update,
                                                  const std::map<NodeId, std::int64_t>& size_free_delta_update, MemoryTracking& m) {
  const NodeId group_head = gns[0];
  const std::int64_t pre_group_mem = m.curr_memory[group_head].first - m.size_alloc[group_head];
  if (changed.empty()) {
    std::int64_t post_alloc = pre_group_mem + m.size_alloc[candidate];
    m.curr_memory[candidate] = {post_alloc, post_alloc - m.size_free[candidate]};
    for (NodeId gn : gns) {
      m.curr_memory[gn].first += candidate_delta_mem;
      m.curr_memory[gn].second += candidate_delta_mem;
    }
    return;
  }
  Order all{candidate};
  all.insert(all.end(), gns.begin(), gns.end());
  for (NodeId v : all) {
    std::int64_t post_alloc = post_alloc_update.at(v);
    if (auto it = size_free_delta_update.find(v); it != size_free_delta_update.end()) m.size_free[v] += it->second;
    m.curr_memory[v] = {post_alloc, post_alloc - m.size_free[v]};
  }
}

CommPassResult oracle_sink_waits_iterative(const CommGraph& cg, const Order& snodes, const CommKnobs& k) {
  const Graph& g = *cg.graph;
  CommPassResult result;
  if (snodes.empty()) return result;
  const MemoryPlanningInfo info = compute_planning_info(g, snodes);
  MemoryTracking m = initialize_memory_tracking(g, info, snodes);
  LinkedList l = initialize_double_linked_list(snodes, cg.num_nodes());
  const auto runtimes = scaled_runtimes(cg, k.reorder_sink_runtime_estimations_comm_mult, k.reorder_sink_runtime_estimations_non_comm_mult);
  const bool estimates = k.sink_iterative_use_runtime_estimations;
  std::set<NodeId> processed_waits;
  NodeId curr = snodes.back();
  while (curr != kNone && l.prev[curr] != kNone) {
    NodeId prev_curr = l.prev[curr];
    if (k.sink_waits_iterative_debug_limit_to_sink >= 0 && static_cast<int>(processed_waits.size()) >= k.sink_waits_iterative_debug_limit_to_sink) break;
    if (!(cg.is_wait(curr) && !processed_waits.count(curr))) {
      curr = prev_curr;
      continue;
    }
    processed_waits.insert(curr);
    OverlapStat info_;
    info_.node = curr;
    auto [comm0, comp0] = wait_exposed_communication_time(cg, curr, l, runtimes);
    info_.initial_exposed_us = info_.final_exposed_us = comm0 - comp0;
    info_.comm_time_us = comm0;
    info_.comp_time_us = comp0;
    NodeId candidate = l.next[curr], group_head = curr, group_tail = curr;
    std::vector<std::pair<double, double>> group_colls;
    double group_runtime = 0;
    std::int64_t group_peak_memory = m.curr_memory[curr].first;
    std::set<NodeId> group{curr};
    bool group_contains_collective = cg.is_collective(curr);
    while (candidate != kNone) {
      if (estimates && info_.final_exposed_us < -k.sink_iterative_extra_comm_comp_overlap * info_.comm_time_us) {
        info_.limiting_factor = "unexposed by runtime estimations";
        break;
      }
      const bool data_dep = reads_from(cg, candidate, group);
      if (!k.sink_waits_iterative_swap_with_collectives && cg.is_async_collective(candidate)) {
        info_.limiting_factor = "candidate contains_async_collective " + g.nodes[candidate].name;
        break;
      }
      const bool both_contain_comms = group_contains_collective && cg.is_collective(candidate);
      if (data_dep || both_contain_comms) {
        // _is_node_groupable_for_sink_waits
        std::string reason;
        if (cg.is_wait(candidate)) reason = "candidate contains wait";
        else if (cg.is_async_collective(candidate)) reason = "candidate contains_async_collective";
        else if (!estimates && cg.is_collective(candidate)) reason = "candidate contains collective";
        else if (!estimates && cg.is_gemm_like(candidate)) reason = "candidate contains gemm_like";
        if (reason.empty()) {
          group_tail = candidate;
          group.insert(candidate);
          group_contains_collective = group_contains_collective || cg.is_collective(candidate);
          if (estimates && cg.is_collective(candidate)) group_colls.push_back(coll_exposed_communication_time(cg, candidate, l, runtimes));
          if (!cg.is_async_collective(candidate)) group_runtime += runtimes[candidate];
          group_peak_memory = std::max(group_peak_memory, m.curr_memory[candidate].first);
          ++info_.grouped;
          candidate = l.next[candidate];
          continue;
        }
        if (!data_dep) {
          if (!k.sink_waits_iterative_unsafe_collectives_reorder && both_contain_comms) {
            info_.limiting_factor = "collective ordering with candidate " + g.nodes[candidate].name;
            break;
          }
        } else {
          info_.limiting_factor = "data dependency: " + g.nodes[candidate].name + " (" + reason + ")";
          break;
        }
      }
      if (estimates) {
        if (cg.is_wait(candidate)) {
          auto [w_comm, w_comp] = wait_exposed_communication_time(cg, candidate, l, runtimes);
          double before = std::max(0.0, w_comm - w_comp), after = std::max(0.0, w_comm - w_comp + group_runtime);
          if (after > before) {
            info_.limiting_factor = "candidate is wait, exposed_before:" + std::to_string(before) + " vs exposed_after:" + std::to_string(after);
            break;
          }
        }
        if (!cg.is_async_collective(candidate)) {
          double c_runtime = runtimes[candidate];
          if (c_runtime > 0 && !group_colls.empty()) {
            double exposed_delta = std::max(0.0, info_.comm_time_us - info_.comp_time_us);
            for (auto [gc_comm, gc_comp] : group_colls)
              exposed_delta += std::max(0.0, gc_comm - gc_comp) - std::max(0.0, gc_comm - gc_comp + c_runtime);
            if (exposed_delta > 0) {
              info_.limiting_factor = "candidate has compute " + std::to_string(c_runtime) + ", group contains collectives, total_exposed_delta " +
                                      std::to_string(exposed_delta);
              break;
            }
            for (auto& gc : group_colls) gc.second -= c_runtime;
          }
        }
      }
      Order gns = group_nodes_from_linked_list(group_head, group_tail, l);
      const std::int64_t candidate_delta_mem = m.size_alloc[candidate] - m.size_free[candidate];
      BufsByGroupNode changed = find_buffers_with_changed_last_use_sink_waits(candidate, gns, m, info);
      std::map<NodeId, std::int64_t> post_alloc_update, size_free_delta_update;
      std::int64_t potential_peak = calculate_potential_peak_memory_sink_waits(candidate, gns, group_head, group_peak_memory, candidate_delta_mem,
                                                                               changed, m, info, post_alloc_update, size_free_delta_update);
      if (static_cast<double>(potential_peak - m.peak_memory) > static_cast<double>(m.peak_memory) * k.sink_iterative_peak_memory_budget) {
        info_.limiting_factor = "peak memory new:" + std::to_string(potential_peak) + " vs base:" + std::to_string(m.peak_memory);
        break;
      }
      ++info_.moves;
      perform_double_linked_list_swap_sink_waits(candidate, group_head, group_tail, l);
      auto [comm, comp] = wait_exposed_communication_time(cg, curr, l, runtimes);
      info_.comm_time_us = comm;
      info_.comp_time_us = comp;
      info_.final_exposed_us = comm - comp;
      update_memory_tracking_after_swap_sink_waits(candidate, gns, candidate_delta_mem, changed, post_alloc_update, size_free_delta_update, m);
      candidate = l.next[group_tail];
    }
    result.stats.push_back(info_);
    curr = prev_curr;
  }
  result.order = group_nodes_from_linked_list(l.head, kNone, l);
  result.peak_before = m.peak_memory;
  result.peak_after = estimate_peak_memory_allocfree(g, info, result.order).peak;
  return result;
}

// ---------------------------------------------------------------- comparisons

void check_same_result(const Graph& g, const CommPassResult& fast, const CommPassResult& oracle, bool exact_times) {
  CHECK(test::names(g, fast.order) == test::names(g, oracle.order));
  CHECK(fast.peak_before == oracle.peak_before);
  CHECK(fast.peak_after == oracle.peak_after);
  REQUIRE(fast.stats.size() == oracle.stats.size());
  for (std::size_t i = 0; i < fast.stats.size(); ++i) {
    const OverlapStat &a = fast.stats[i], &b = oracle.stats[i];
    INFO("stat of " << g.nodes[b.node].name);
    CHECK(a.node == b.node);
    CHECK(a.moves == b.moves);
    CHECK(a.grouped == b.grouped);
    if (!exact_times) continue;
    CHECK(a.limiting_factor == b.limiting_factor);
    CHECK(a.comm_time_us == b.comm_time_us);
    CHECK(a.comp_time_us == b.comp_time_us);
    CHECK(a.initial_exposed_us == b.initial_exposed_us);
    CHECK(a.final_exposed_us == b.final_exposed_us);
  }
}

// Knob settings that reach every branch of the two iterative loops.
std::vector<CommKnobs> knob_variants() {
  std::vector<CommKnobs> out(8);
  out[1].reorder_iterative_use_runtime_estimations = out[1].sink_iterative_use_runtime_estimations = true;
  out[2].reorder_iterative_peak_memory_budget = out[2].sink_iterative_peak_memory_budget = 0.0;
  out[3].reorder_iterative_unsafe_collectives_reorder = out[3].sink_waits_iterative_unsafe_collectives_reorder = false;
  out[4].reorder_iterative_group_with_collectives = out[4].sink_waits_iterative_swap_with_collectives = true;
  out[5] = out[4];
  out[5].reorder_iterative_use_runtime_estimations = out[5].sink_iterative_use_runtime_estimations = true;
  out[5].reorder_iterative_extra_comm_comp_overlap = out[5].sink_iterative_extra_comm_comp_overlap = 0.0;
  out[6].reorder_iterative_debug_limit_to_reorder = out[6].sink_waits_iterative_debug_limit_to_sink = 2;
  out[7].reorder_iterative_peak_memory_budget = out[7].sink_iterative_peak_memory_budget = 1.0;
  out[7].reorder_iterative_use_runtime_estimations = out[7].sink_iterative_use_runtime_estimations = true;
  return out;
}

void check_all_passes(const Graph& g, const CommGraph& cg, const Order& input, bool exact_times) {
  CHECK(sink_waits(cg, input, {}).order == oracle_schedule_for_comm(cg, input, false, true, false));
  CHECK(raise_comms(cg, input, {}).order == oracle_schedule_for_comm(cg, input, true, false, false));
  CHECK(reorder_compute_for_overlap(cg, input, {}).order == oracle_schedule_for_comm(cg, input, true, true, true));
  const auto variants = knob_variants();
  for (std::size_t v = 0; v < variants.size(); ++v) {
    INFO("knob variant " << v);
    const CommKnobs& k = variants[v];
    check_same_result(g, reorder_communication_preserving_peak_memory(cg, input, k), oracle_reorder(cg, input, k), exact_times);
    check_same_result(g, sink_waits_iterative(cg, input, k), oracle_sink_waits_iterative(cg, input, k), exact_times);
  }
}

}  // namespace

TEST_CASE("comm passes equal plain transcriptions of Inductor's loops on random graphs", "[comms][oracle]") {
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    RandomCommGraph r = random_comm_graph(seed, 12 + static_cast<int>(seed * 13 % 90));
    const Graph& g = r.graph;
    CommGraph cg = build_comm_graph(g, r.runtime_us);
    INFO("seed " << seed << ", " << g.num_nodes() << " nodes");
    check_all_passes(g, cg, g.baseline_order(), true);
    // A second input order (waits deferred), so that indices and ids differ.
    Order sunk = sink_waits(cg, g.baseline_order(), {}).order;
    check_all_passes(g, cg, sunk, true);
  }
}

TEST_CASE("comm passes equal the transcriptions of Inductor's loops on the fixtures", "[comms][oracle][fixtures]") {
  std::vector<std::string> graphs{test::data_path("comms/two_collectives.json"), test::data_path("comms/overlap_small.json")};
  for (const auto& c : test::fixture_cases()) graphs.push_back(test::data_path(c + ".post.json"));
  for (const auto& path : graphs) {
    INFO(path);
    Graph g = load_graph_file(path);
    CommGraph cg = build_comm_graph(g, estimate_runtimes_us(g, builtin_profile(kDefaultHardwareProfile)));
    check_all_passes(g, cg, g.baseline_order(), false);
  }
}

TEST_CASE("iterative passes equal the transcriptions on generated FSDP and tensor-parallel graphs", "[comms][oracle]") {
  std::vector<DistributedGraphSpec> specs(3);
  specs[0].layers = 40;
  specs[1].pattern = DistributedPattern::TensorParallel;
  specs[1].layers = 12;
  specs[2].layers = 24;
  specs[2].backward = false;
  for (const auto& spec : specs) {
    Graph g = generate_distributed_graph(spec);
    CommGraph cg = build_comm_graph(g, estimate_runtimes_us(g, builtin_profile(kDefaultHardwareProfile)));
    INFO(g.name);
    const Order input = g.baseline_order();
    for (double budget : {0.0, 0.2, 1.0}) {
      CommKnobs k;
      k.reorder_iterative_peak_memory_budget = k.sink_iterative_peak_memory_budget = budget;
      auto reordered = reorder_communication_preserving_peak_memory(cg, input, k);
      check_same_result(g, reordered, oracle_reorder(cg, input, k), false);
      check_same_result(g, sink_waits_iterative(cg, reordered.order, k), oracle_sink_waits_iterative(cg, reordered.order, k), false);
    }
  }
}
