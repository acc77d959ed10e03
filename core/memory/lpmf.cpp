// LPMF, "least peak memory first" (Inductor's topological_sort_lpmf).
//
// The reference rescans every ready node each step with the key
//   (max(live + size, max_memory), size - memory_to_free, index).
// With slack = max_memory - live, a ready node of size <= slack keys as
// (max_memory, size - to_free, index) and any other as (live + size, ...),
// so: pick the best (size - to_free, index) among ready nodes of size <=
// slack; if there is none, the smallest size, ties by (size - to_free,
// index). Sizes never change, so ready nodes sit in slots sorted by
// (size, index) and both questions are range minima: O((N + E) log N).
#include <algorithm>
#include <numeric>

#include "core/memory/methods.h"
#include "core/util/min_tree.h"

namespace schedlab {

Order topological_sort_lpmf(const Graph& g, const MemoryPlanningInfo& info, const Order& input) {
  const std::int32_t n = static_cast<std::int32_t>(input.size());
  // Slots by (size, index).
  std::vector<NodeId> by_size(input);
  std::sort(by_size.begin(), by_size.end(), [&](NodeId a, NodeId b) {
    return std::pair(info.node_size[a], info.index[a]) < std::pair(info.node_size[b], info.index[b]);
  });
  std::vector<std::int32_t> slot(g.nodes.size(), 0);
  std::vector<std::int64_t> slot_size(n);
  for (std::int32_t s = 0; s < n; ++s) {
    slot[by_size[s]] = s;
    slot_size[s] = info.node_size[by_size[s]];
  }

  std::vector<std::int32_t> indegree(g.nodes.size(), 0);
  std::vector<std::int64_t> to_free(g.nodes.size(), 0);
  std::vector<std::int32_t> outdegree(g.buffers.size(), 0);
  std::vector<std::uint8_t> ready(g.nodes.size(), 0);
  for (BufId b = 0; b < g.num_buffers(); ++b)
    if (info.planned[b]) outdegree[b] = info.buffer_succ_nodes.degree(b) + (info.is_graph_output[b] ? 1 : 0);

  std::int64_t live = 0;
  for (BufId b : info.freeable_inputs) live += info.size_free[b];
  std::int64_t output_memory = 0;
  for (BufId b = 0; b < g.num_buffers(); ++b)
    if (info.is_graph_output[b] && info.planned[b]) output_memory += info.size_free[b];
  std::int64_t max_memory = std::max(live, output_memory);

  for (NodeId v : input) {
    for (auto b : info.pred_buffers.row(v))
      if (outdegree[b] == 1) to_free[v] += info.size_free[b];
    for (BufId b : g.nodes[v].outputs)
      if (outdegree[b] == 0) to_free[v] += info.size_free[b];
  }

  MinTree tree(n);
  auto publish = [&](NodeId v) { tree.set(slot[v], {info.node_size[v] - to_free[v], info.index[v]}); };
  for (NodeId v : input) {
    indegree[v] = info.pred_nodes.degree(v);
    if (indegree[v] == 0) {
      ready[v] = 1;
      publish(v);
    }
  }
  std::vector<NodeId> node_at_index(n);
  for (NodeId v : input) node_at_index[info.index[v]] = v;

  Order schedule;
  schedule.reserve(static_cast<std::size_t>(n));
  while (static_cast<std::int32_t>(schedule.size()) < n) {
    const std::int64_t slack = max_memory - live;
    const auto fits = static_cast<std::int32_t>(std::upper_bound(slot_size.begin(), slot_size.end(), slack) - slot_size.begin());
    MinTree::Entry pick = tree.min(0, fits);
    if (pick == MinTree::kEmpty) {
      std::int32_t first = tree.first_active();
      if (first < 0) break;  // nothing ready: the dependencies are inconsistent
      const std::int64_t smallest = slot_size[first];
      const auto end = static_cast<std::int32_t>(std::upper_bound(slot_size.begin(), slot_size.end(), smallest) - slot_size.begin());
      pick = tree.min(first, end);
    }
    const NodeId v = node_at_index[pick.second];
    tree.clear(slot[v]);
    ready[v] = 0;
    schedule.push_back(v);

    live += info.node_size[v];
    max_memory = std::max(max_memory, live);
    live -= to_free[v];

    for (auto s : info.succ_nodes.row(v))
      if (--indegree[s] == 0) {
        ready[s] = 1;
        publish(s);
      }
    for (auto b : info.pred_buffers.row(v)) {
      if (--outdegree[b] != 1) continue;
      for (auto s : info.buffer_succ_nodes.row(b)) {
        to_free[s] += info.size_free[b];
        if (ready[s]) publish(s);
      }
    }
  }
  return schedule;
}

}  // namespace schedlab
