#include "core/memory/planning_info.h"

#include <algorithm>

namespace schedlab {
namespace {

using Pairs = std::vector<std::pair<std::int32_t, std::int32_t>>;

// An unmet dependency: a read of a buffer that another node produces.
bool is_unmet(const Graph& g, NodeId reader, const Dep& d) {
  NodeId p = g.buffers[d.buf].producer;
  return p != kNone && p != reader;
}

// Freeable inputs (2.11 get_freeable_input_buf): every read makes an input
// planned and sets its size (the last read in `order` wins), but fake weak
// reads neither keep it alive nor count among its readers.
// `buf_succ` may be null when the uses are known already.
void plan_freeable_inputs(const Graph& g, const Order& order, MemoryPlanningInfo& m, Pairs* buf_succ) {
  std::vector<std::int64_t> input_size(g.buffers.size(), 0);
  for (NodeId v : order) {
    for (const Dep& d : g.nodes[v].reads) {
      const Buffer& b = g.buffers[d.buf];
      if (!b.is_input || !b.freeable) continue;
      if (!m.planned[d.buf]) {
        m.planned[d.buf] = 1;
        m.freeable_inputs.push_back(d.buf);
      }
      input_size[d.buf] = d.bytes;
      if (buf_succ && d.kind != DepKind::FakeWeak) buf_succ->emplace_back(d.buf, v);
    }
  }
  for (BufId b : m.freeable_inputs) m.size_alloc[b] = m.size_free[b] = input_size[b];
}

// Node-produced buffers (2.11 compute_size_for_scheduler_buffer): sizes by
// layout; a multi_output container allocates the items of every node that
// reads it, so an item whose node reads two containers is allocated by both.
void size_node_buffers(const Graph& g, MemoryPlanningInfo& m) {
  for (BufId b = g.num_inputs; b < g.num_buffers(); ++b) {
    const Buffer& buf = g.buffers[b];
    m.planned[b] = 1;
    if (buf.mutation_of != kNone || buf.layout == Layout::None) continue;  // (0, 0)
    if (buf.layout == Layout::MultiOutputItem) {
      m.size_free[b] = buf.bytes;  // allocated by its multi_output containers
    } else if (buf.layout == Layout::Fixed) {
      m.size_alloc[b] = m.size_free[b] = buf.bytes;
    }
  }
  std::vector<NodeId> counted_for(g.buffers.size(), kNone);  // a container's users count once each
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& node = g.nodes[v];
    for (const Dep& d : node.reads) {
      const Buffer& container = g.buffers[d.buf];
      if (container.layout != Layout::MultiOutput || !is_unmet(g, v, d) || counted_for[d.buf] == v) continue;
      counted_for[d.buf] = v;
      for (BufId item : node.outputs) {
        if (g.buffers[item].layout != Layout::MultiOutputItem) continue;
        if (m.container_of[item] == kNone) m.container_of[item] = d.buf;
        if (container.mutation_of == kNone)
          m.size_alloc[d.buf] = checked_add(m.size_alloc[d.buf], m.size_free[item], container.name);
      }
    }
  }
}

void index_by_order(const Order& order, MemoryPlanningInfo& m) {
  m.index.assign(m.index.size(), 0);
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(order.size()); ++i) m.index[order[i]] = i;
}

}  // namespace

std::vector<BufId> storage_roots(const Graph& g) {
  std::vector<BufId> root(g.buffers.size(), kNone);
  std::vector<BufId> path;
  for (BufId b = 0; b < g.num_buffers(); ++b) {
    BufId u = b;
    while (root[u] == kNone && g.buffers[u].mutation_of != kNone) {
      path.push_back(u);
      u = g.buffers[u].mutation_of;
    }
    BufId r = root[u] != kNone ? root[u] : u;
    root[u] = r;
    for (BufId p : path) root[p] = r;
    path.clear();
  }
  return root;
}

MemoryPlanningInfo compute_planning_info(const Graph& g, const Order& order) {
  const std::int32_t nb = g.num_buffers();
  const std::int32_t nn = g.num_nodes();
  MemoryPlanningInfo m;
  m.planned.assign(nb, 0);
  m.is_graph_output.assign(nb, 0);
  m.size_alloc.assign(nb, 0);
  m.size_free.assign(nb, 0);
  m.container_of.assign(nb, kNone);
  m.index.resize(nn);
  for (BufId b : g.outputs) m.is_graph_output[b] = 1;
  m.freeable_sizes_depend_on_order = freeable_input_sizes_depend_on_order(g);
  m.producer.resize(nb);
  for (BufId b = 0; b < nb; ++b) m.producer[b] = g.buffers[b].producer;

  index_by_order(order, m);

  Pairs buf_succ;
  plan_freeable_inputs(g, order, m, &buf_succ);
  size_node_buffers(g, m);

  // Uses (2.11 assign_memory_planning_info_for_scheduler_buffers/_nodes):
  // every unmet dependency orders (fake weak ones too); only the others keep
  // storage alive. A read of a mutation also counts as a read of the buffer
  // at the start of its chain (same storage), when a node produced it: each
  // read adds at most two uses, so long chains stay linear.
  const std::vector<BufId> root = storage_roots(g);
  m.node_size.assign(nn, 0);
  Pairs pred, deps;
  for (NodeId v : order) {
    const Node& node = g.nodes[v];
    for (BufId b : node.outputs) m.node_size[v] = checked_add(m.node_size[v], m.size_alloc[b], node.name);
    for (const Dep& d : node.reads) {
      if (!is_unmet(g, v, d)) continue;
      deps.emplace_back(v, g.buffers[d.buf].producer);
      for (BufId u : {d.buf, root[d.buf]}) {
        if (g.buffers[u].is_input) continue;
        pred.emplace_back(v, g.buffers[u].producer);
        if (d.kind != DepKind::FakeWeak) buf_succ.emplace_back(u, v);
      }
    }
  }
  m.buffer_succ_nodes = Adjacency::sorted_unique_rows(nb, buf_succ);
  // A node's pred buffers are the buffers it keeps alive.
  Pairs pred_bufs;
  for (BufId b = 0; b < nb; ++b)
    for (NodeId s : m.buffer_succ_nodes.row(b)) pred_bufs.emplace_back(s, b);
  m.pred_buffers = Adjacency::sorted_unique_rows(nn, pred_bufs);
  Pairs succ;
  succ.reserve(pred.size());
  std::erase_if(pred, [](const auto& e) { return e.first == e.second; });
  for (auto [v, p] : pred) succ.emplace_back(p, v);
  m.pred_nodes = Adjacency::sorted_unique_rows(nn, pred);
  m.succ_nodes = Adjacency::sorted_unique_rows(nn, succ);
  m.dep_nodes = Adjacency::sorted_unique_rows(nn, deps);
  Pairs outputs;
  for (NodeId v = 0; v < nn; ++v)
    for (BufId b : g.nodes[v].outputs) outputs.emplace_back(v, b);
  m.outputs = Adjacency::from_pairs(nn, outputs);
  return m;
}

MemoryPlanningInfo planning_info_for_order(const Graph& g, MemoryPlanningInfo info, const Order& order) {
  index_by_order(order, info);
  for (BufId b : info.freeable_inputs) {
    info.planned[b] = 0;
    info.size_alloc[b] = info.size_free[b] = 0;
  }
  info.freeable_inputs.clear();
  plan_freeable_inputs(g, order, info, nullptr);
  return info;
}

bool freeable_input_sizes_depend_on_order(const Graph& g) {
  std::vector<std::int64_t> read_bytes(g.buffers.size(), -1);
  for (const Node& node : g.nodes)
    for (const Dep& d : node.reads) {
      const Buffer& b = g.buffers[d.buf];
      if (!b.is_input || !b.freeable) continue;
      if (read_bytes[d.buf] >= 0 && read_bytes[d.buf] != d.bytes) return true;
      read_bytes[d.buf] = d.bytes;
    }
  return false;
}

}  // namespace schedlab
