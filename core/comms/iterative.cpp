#include "core/comms/iterative.h"

#include "core/memory/estimate.h"

namespace schedlab::comms_detail {

LinkedOrder LinkedOrder::from(const Order& order, std::int32_t num_nodes) {
  LinkedOrder l;
  l.prev.assign(num_nodes, kNone);
  l.next.assign(num_nodes, kNone);
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i > 0) l.prev[order[i]] = order[i - 1];
    if (i + 1 < order.size()) l.next[order[i]] = order[i + 1];
  }
  l.head = order.empty() ? kNone : order.front();
  return l;
}

Order LinkedOrder::to_order() const {
  Order out;
  out.reserve(next.size());
  for (NodeId v = head; v != kNone; v = next[v]) out.push_back(v);
  return out;
}

void LinkedOrder::move_after(NodeId candidate, NodeId group_head, NodeId group_tail) {
  NodeId before = prev[candidate];
  if (before != kNone) next[before] = group_head;
  prev[group_head] = before;
  NodeId after = next[group_tail];
  if (after != kNone) prev[after] = candidate;
  next[candidate] = after;
  prev[candidate] = group_tail;
  next[group_tail] = candidate;
  if (head == candidate) head = group_head;
}

void LinkedOrder::move_before(NodeId candidate, NodeId group_head, NodeId group_tail) {
  NodeId before = prev[group_head];
  if (before != kNone) next[before] = candidate;
  prev[candidate] = before;
  NodeId after = next[candidate];
  if (after != kNone) prev[after] = group_tail;
  next[group_tail] = after;
  prev[group_head] = candidate;
  next[candidate] = group_head;
  if (head == group_head) head = candidate;
}

void LinkedOrder::segment(NodeId from, NodeId to, std::vector<NodeId>& out) const {
  out.clear();
  for (NodeId v = from; v != kNone; v = next[v]) {
    out.push_back(v);
    if (v == to) break;
  }
}

IterativeMemory init_iterative_memory(const Graph& g, const Order& order) {
  IterativeMemory m{compute_planning_info(g, order), 0, {}, {}, {}, {}, {}, {}};
  AllocFreeEstimate est = estimate_peak_memory_allocfree(g, m.info, order);
  m.peak = est.peak;
  m.post_alloc.assign(g.nodes.size(), 0);
  m.post_free.assign(g.nodes.size(), 0);
  for (std::size_t t = 0; t < order.size(); ++t) {
    m.post_alloc[order[t]] = est.post_alloc[t];
    m.post_free[order[t]] = est.post_free[t];
  }
  m.size_alloc = std::move(est.node_alloc);
  m.size_free = std::move(est.node_free);
  m.last_use = std::move(est.last_use);
  std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
  for (BufId b = 0; b < g.num_buffers(); ++b) {
    if (m.last_use[b] == kNone) continue;
    for (NodeId s : m.info.buffer_succ_nodes.row(b)) pairs.emplace_back(s, b);
  }
  m.bufs_of_successor = Adjacency::from_pairs(g.num_nodes(), pairs);
  return m;
}

Exposure collective_exposure(const CommGraph& cg, const std::vector<double>& runtime, const LinkedOrder& list, NodeId collective) {
  Exposure e;
  e.comm_us = runtime[collective];
  for (NodeId s = list.next[collective]; s != kNone; s = list.next[s]) {
    if (cg.reads_output_of(s, collective)) break;  // its wait
    if (cg.is_collective(s)) {
      if (!cg.is_async_collective(s)) break;
      continue;  // another async collective: runs on the comm stream, adds no compute
    }
    e.comp_us += runtime[s];
  }
  return e;
}

Exposure wait_exposure(const CommGraph& cg, const std::vector<double>& runtime, const LinkedOrder& list, NodeId wait, WaitScan& scan) {
  Exposure e;
  const std::uint32_t stamp = ++scan.stamp;
  auto mark_collectives_read_by = [&](NodeId w, std::vector<std::uint32_t>& marks) {
    for (BufId b : cg.data_bufs.row(w))
      if (cg.is_collective(cg.producer(b))) marks[cg.producer(b)] = stamp;
  };
  mark_collectives_read_by(wait, scan.read_by_wait);
  for (NodeId s = list.prev[wait]; s != kNone; s = list.prev[s]) {
    if (cg.is_wait(s)) mark_collectives_read_by(s, scan.read_by_found);
    if (cg.is_collective(s)) {
      if (scan.read_by_wait[s] == stamp) {
        e.comm_us = runtime[s];
        break;
      }
      if (!cg.is_async_collective(s)) {
        e.comp_us = 0;  // a synchronous collective: nothing after it overlapped ours
        e.reset = true;
        continue;
      }
      if (scan.read_by_found[s] == stamp) {
        e.comp_us = 0;  // an inner collective/wait pair: compute after it does not overlap ours
        e.reset = true;
      }
      continue;
    }
    e.comp_us += runtime[s];
  }
  return e;
}

}  // namespace schedlab::comms_detail
