#include "core/memory/planning_info.h"

#include <algorithm>

namespace schedlab {
namespace {

using Pairs = std::vector<std::pair<std::int32_t, std::int32_t>>;

Adjacency unique_rows(std::int32_t rows, Pairs pairs) {
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return Adjacency::from_pairs(rows, pairs);
}

// An unmet dependency: a read of a buffer that another node produces.
bool is_unmet(const Graph& g, NodeId reader, const Dep& d) {
  NodeId p = g.buffers[d.buf].producer;
  return p != kNone && p != reader;
}

}  // namespace

MemoryPlanningInfo compute_planning_info(const Graph& g, const Order& order) {
  const std::int32_t nb = g.num_buffers();
  const std::int32_t nn = g.num_nodes();
  MemoryPlanningInfo m;
  m.planned.assign(nb, 0);
  m.is_graph_output.assign(nb, 0);
  m.size_alloc.assign(nb, 0);
  m.size_free.assign(nb, 0);
  m.container_of.assign(nb, kNone);
  for (BufId b : g.outputs) m.is_graph_output[b] = 1;

  m.index.assign(nn, 0);
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(order.size()); ++i) m.index[order[i]] = i;

  // Freeable inputs: every reader counts; the size is that of the dep through
  // which the input is read last in `order`.
  Pairs buf_succ;
  std::vector<std::int64_t> input_size(nb, 0);
  for (NodeId v : order) {
    for (const Dep& d : g.nodes[v].reads) {
      const Buffer& b = g.buffers[d.buf];
      if (!b.is_input || !b.freeable) continue;
      if (!m.planned[d.buf]) {
        m.planned[d.buf] = 1;
        m.freeable_inputs.push_back(d.buf);
      }
      input_size[d.buf] = d.bytes;
      buf_succ.emplace_back(d.buf, v);
    }
  }
  for (BufId b : m.freeable_inputs) m.size_alloc[b] = m.size_free[b] = input_size[b];

  // Node-produced buffers: sizes by layout.
  for (BufId b = g.num_inputs; b < nb; ++b) {
    const Buffer& buf = g.buffers[b];
    m.planned[b] = 1;
    if (buf.mutation_of != kNone || buf.layout == Layout::None) continue;  // (0, 0)
    if (buf.layout == Layout::MultiOutputItem) {
      m.size_free[b] = buf.bytes;  // allocated by its multi_output container
    } else if (buf.layout == Layout::Fixed) {
      m.size_alloc[b] = m.size_free[b] = buf.bytes;
    }
  }
  // multi_output: the items produced by nodes that read the container.
  for (NodeId v = 0; v < nn; ++v) {
    const Node& node = g.nodes[v];
    for (const Dep& d : node.reads) {
      if (g.buffers[d.buf].layout != Layout::MultiOutput || !is_unmet(g, v, d)) continue;
      for (BufId item : node.outputs) {
        if (g.buffers[item].layout != Layout::MultiOutputItem || m.container_of[item] != kNone) continue;
        m.container_of[item] = d.buf;
        if (g.buffers[d.buf].mutation_of == kNone)
          m.size_alloc[d.buf] = checked_add(m.size_alloc[d.buf], g.buffers[item].bytes, g.buffers[d.buf].name);
      }
    }
  }

  // Uses that keep buffers alive: unmet, non-fake dependencies. Reading a
  // mutation also uses every buffer down its mutation chain (same storage),
  // so the reader keeps the original alive and depends on its producer.
  m.node_size.assign(nn, 0);
  Pairs pred_bufs, pred, deps;
  for (NodeId v : order) {
    const Node& node = g.nodes[v];
    for (BufId b : node.outputs) m.node_size[v] = checked_add(m.node_size[v], m.size_alloc[b], node.name);
    for (const Dep& d : node.reads) {
      const Buffer& b = g.buffers[d.buf];
      if (!is_unmet(g, v, d)) {
        if (b.is_input && m.planned[d.buf]) pred_bufs.emplace_back(v, d.buf);
        continue;
      }
      deps.emplace_back(v, b.producer);
      // Every unmet dependency orders (fake weak ones too); only the others
      // keep storage alive.
      for (BufId u = d.buf; u != kNone && !g.buffers[u].is_input; u = g.buffers[u].mutation_of) {
        pred.emplace_back(v, g.buffers[u].producer);
        if (d.kind == DepKind::FakeWeak) continue;
        buf_succ.emplace_back(u, v);
        pred_bufs.emplace_back(v, u);
      }
    }
  }
  m.buffer_succ_nodes = unique_rows(nb, std::move(buf_succ));
  m.pred_buffers = unique_rows(nn, std::move(pred_bufs));
  Pairs succ;
  succ.reserve(pred.size());
  for (auto [v, p] : pred)
    if (p != v) succ.emplace_back(p, v);
  std::erase_if(pred, [](const auto& e) { return e.first == e.second; });
  m.pred_nodes = unique_rows(nn, std::move(pred));
  m.succ_nodes = unique_rows(nn, std::move(succ));
  m.dep_nodes = unique_rows(nn, std::move(deps));
  return m;
}

}  // namespace schedlab
