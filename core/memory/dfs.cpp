// DFS (Inductor's topological_sort_dfs): visit nodes in ascending order of
// (own allocation + sizes of the buffers it reads, index); before emitting a
// node, visit the producers of its unmet dependencies (weak ones included) in
// that same order. Iterative, so deep chains cannot overflow the stack.
#include <algorithm>

#include "core/memory/methods.h"

namespace schedlab {

Order topological_sort_dfs(const Graph& g, const MemoryPlanningInfo& info, const Order& input) {
  std::vector<std::int64_t> weight(g.nodes.size(), 0);
  for (NodeId v : input) {
    weight[v] = info.node_size[v];
    for (auto b : info.pred_buffers.row(v)) weight[v] += info.size_free[b];
  }
  auto lighter = [&](NodeId a, NodeId b) {
    return std::pair(weight[a], info.index[a]) < std::pair(weight[b], info.index[b]);
  };

  std::vector<std::uint8_t> seen(g.nodes.size(), 0);
  Order result;
  result.reserve(input.size());
  struct Frame {
    NodeId node;
    std::vector<NodeId> deps;
    std::size_t next;
  };
  std::vector<Frame> stack;
  auto enter = [&](NodeId v) {
    seen[v] = 1;
    auto row = info.dep_nodes.row(v);
    std::vector<NodeId> deps(row.begin(), row.end());
    std::sort(deps.begin(), deps.end(), lighter);
    stack.push_back({v, std::move(deps), 0});
  };

  Order roots(input);
  std::stable_sort(roots.begin(), roots.end(), lighter);
  for (NodeId root : roots) {
    if (seen[root]) continue;
    enter(root);
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < f.deps.size()) {
        NodeId d = f.deps[f.next++];
        if (!seen[d]) enter(d);
        continue;
      }
      result.push_back(f.node);
      stack.pop_back();
    }
  }
  return result;
}

}  // namespace schedlab
