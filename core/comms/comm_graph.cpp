#include "core/comms/comm_graph.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_map>

#include "core/util/error.h"
#include "core/util/ready_list.h"

namespace schedlab {

namespace {

constexpr std::int32_t kNoCollective = std::numeric_limits<std::int32_t>::max();

std::uint8_t role_of(const Node& n) {
  std::uint8_t r = 0;
  if (n.kind == NodeKind::Collective) {
    r |= kRoleCollective;
    // Inductor treats DTensor's shard_dim_alltoall (a collective with its
    // wait inside) as synchronous compute.
    if (n.kernel.find("torch.ops._dtensor.shard_dim_alltoall.default") == std::string::npos) r |= kRoleAsyncCollective;
  }
  if (n.kind == NodeKind::Wait) r |= kRoleWait;
  if (n.kernel.find("extern_kernels") != std::string::npos ||
      n.kernel.find("_scaled_dot_product_flash_attention") != std::string::npos)
    r |= kRoleGemmLike;
  return r;
}

}  // namespace

bool CommGraph::reads_output_of(NodeId v, NodeId producer_node) const {
  if (!(role[v] & kRoleReadsCollective) && is_collective(producer_node)) return false;
  for (BufId b : data_bufs.row(v))
    if (producer(b) == producer_node) return true;
  return false;
}

CommGraph build_comm_graph(const Graph& g, std::vector<double> runtime_us, std::vector<FakeDep> extra_fake_deps) {
  const std::int32_t n = g.num_nodes();
  if (static_cast<std::int32_t>(runtime_us.size()) != n)
    throw Error("comm passes: " + std::to_string(runtime_us.size()) + " runtimes for " + std::to_string(n) + " nodes");
  CommGraph cg;
  cg.graph = &g;
  cg.runtime_us = std::move(runtime_us);
  cg.role.resize(n);
  cg.producers.resize(g.buffers.size());
  for (BufId b = 0; b < g.num_buffers(); ++b) cg.producers[b] = g.buffers[b].producer;
  std::vector<std::vector<std::pair<BufId, bool>>> extra(n);  // (buffer, data)
  for (const FakeDep& d : extra_fake_deps) {
    if (d.node < 0 || d.node >= n || d.buf < 0 || d.buf >= g.num_buffers() || g.buffers[d.buf].producer == kNone)
      throw Error("comm passes: an added ordering dependency names no node or no produced buffer");
    extra[d.node].emplace_back(d.buf, d.data);
  }
  std::vector<std::pair<std::int32_t, std::int32_t>> unmet, data, users;
  std::vector<NodeId> seen_any(g.buffers.size(), kNone), seen_data(g.buffers.size(), kNone);
  for (NodeId v = 0; v < n; ++v) {
    const Node& node = g.nodes[v];
    cg.role[v] = role_of(node);
    auto add = [&](BufId b, bool fake) {
      NodeId p = g.buffers[b].producer;
      if (p == kNone || p == v) return;  // graph inputs and own outputs are never unmet
      if (seen_any[b] != v) {
        seen_any[b] = v;
        unmet.emplace_back(v, b);
        users.emplace_back(b, v);
      }
      if (!fake && seen_data[b] != v) {
        seen_data[b] = v;
        data.emplace_back(v, b);
      }
    };
    for (const Dep& d : node.reads) add(d.buf, d.kind == DepKind::FakeWeak);
    for (auto [b, data] : extra[v]) add(b, !data);
  }
  for (auto [v, b] : data)
    if (g.nodes[g.buffers[b].producer].kind == NodeKind::Collective) cg.role[v] |= kRoleReadsCollective;
  cg.unmet_bufs = Adjacency::from_pairs(n, unmet);
  cg.data_bufs = Adjacency::from_pairs(n, data);
  cg.buffer_users = Adjacency::from_pairs(g.num_buffers(), users);
  cg.added_fake_deps = std::move(extra_fake_deps);
  return cg;
}

namespace {

// Operation-level ancestry (the format's `operations`): per node, the lowest
// index of a collective one of its member operations is an ancestor of.
std::vector<std::int32_t> lowest_blocked_from_operations(const CommGraph& cg, const std::vector<std::int32_t>& comm_index) {
  const Graph& g = *cg.graph;
  const auto num_ops = static_cast<std::int32_t>(g.operations.size());
  std::unordered_map<std::string_view, std::int32_t> op_by_name;
  for (std::int32_t o = 0; o < num_ops; ++o) op_by_name.emplace(g.operations[o].name, o);
  std::vector<NodeId> node_of_op(num_ops, kNone);
  std::vector<std::vector<std::int32_t>> ops_of_node(g.nodes.size());
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& node = g.nodes[v];
    std::vector<std::string> own{node.name};
    const auto& members = node.members.empty() ? own : node.members;
    for (const auto& m : members) {
      auto it = op_by_name.find(m);
      if (it == op_by_name.end())
        throw Error("nodes[" + std::to_string(v) + "] \"" + node.name + "\": member \"" + m + "\" names no entry of `operations`");
      node_of_op[it->second] = v;
      ops_of_node[v].push_back(it->second);
    }
  }
  std::vector<std::int32_t> op_of_buffer(g.buffers.size(), -1);
  for (std::int32_t o = 0; o < num_ops; ++o)
    for (BufId b : g.operations[o].outputs) op_of_buffer[b] = o;
  // Edges producer op -> reader op; Kahn's order for the DP.
  std::vector<std::pair<std::int32_t, std::int32_t>> edges;
  std::vector<std::int32_t> indegree(num_ops, 0);
  for (std::int32_t o = 0; o < num_ops; ++o) {
    for (BufId b : g.operations[o].reads) {
      std::int32_t p = op_of_buffer[b];
      if (p < 0 || p == o) continue;
      edges.emplace_back(p, o);
      ++indegree[o];
    }
  }
  Adjacency succ = Adjacency::from_pairs(num_ops, edges);
  std::vector<std::int32_t> ops(static_cast<std::size_t>(num_ops));
  std::iota(ops.begin(), ops.end(), 0);
  FifoStrategy fifo;
  const std::vector<std::int32_t> topo = run_ready_list(
      ops, std::move(indegree),
      [&](std::int32_t o, auto&& release) {
        for (auto s : succ.row(o)) release(s);
      },
      fifo);
  if (static_cast<std::int32_t>(topo.size()) != num_ops) throw Error("operations: the operation graph has a cycle");
  // reach[o]: lowest comm index of a collective that o is a strict op-level ancestor of.
  std::vector<std::int32_t> reach(num_ops, kNoCollective);
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    std::int32_t o = *it;
    for (auto s : succ.row(o)) {
      NodeId sv = node_of_op[s];
      std::int32_t own = sv != kNone ? comm_index[sv] : kNoCollective;
      // A fused node's ancestors exclude its own members.
      if (sv != kNone && sv == node_of_op[o]) own = kNoCollective;
      reach[o] = std::min({reach[o], own, reach[s]});
    }
  }
  std::vector<std::int32_t> out(g.nodes.size(), kNoCollective);
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    for (auto o : ops_of_node[v]) out[v] = std::min(out[v], reach[o]);
  return out;
}

}  // namespace

std::vector<std::int32_t> lowest_blocked_collective(const CommGraph& cg, const Order& order) {
  const Graph& g = *cg.graph;
  std::vector<std::int32_t> comm_index(g.nodes.size(), kNoCollective);
  std::int32_t next = 0;
  for (NodeId v : order)
    if (cg.is_collective(v)) comm_index[v] = next++;
  std::vector<std::int32_t> out;
  if (!g.operations.empty()) {
    out = lowest_blocked_from_operations(cg, comm_index);
  } else {
    // Node-level ancestry over the graph's own dependencies (every kind); the
    // baseline order is topological, so one reverse sweep suffices.
    out.assign(g.nodes.size(), kNoCollective);
    for (NodeId v = g.num_nodes() - 1; v >= 0; --v) {
      std::int32_t down = std::min(comm_index[v], out[v]);
      for (const Dep& d : g.nodes[v].reads) {
        NodeId p = g.buffers[d.buf].producer;
        if (p != kNone && p != v) out[p] = std::min(out[p], down);
      }
    }
  }
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    if (cg.is_collective(v)) out[v] = comm_index[v];
  return out;
}

std::vector<double> scaled_runtimes(const CommGraph& cg, double comm_mult, double non_comm_mult) {
  std::vector<double> out(cg.runtime_us.size());
  for (std::size_t v = 0; v < out.size(); ++v) out[v] = cg.runtime_us[v] * (cg.role[v] & kRoleCollective ? comm_mult : non_comm_mult);
  return out;
}

MemoryPlanningInfo planning_info_of(const CommGraph& cg, const Order& order) {
  return cg.planning ? planning_info_for_order(*cg.graph, *cg.planning, order) : compute_planning_info(*cg.graph, order);
}

}  // namespace schedlab
