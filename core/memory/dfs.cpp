// DFS (Inductor's topological_sort_dfs): visit nodes in ascending order of
// (own allocation + sizes of the buffers it reads, index); before emitting a
// node, visit the producers of its unmet dependencies (weak ones included) in
// that same order. Iterative, so deep chains cannot overflow the stack.
#include <algorithm>

#include "core/memory/methods.h"
#include "core/util/postorder.h"

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
  auto producers_lightest_first = [&](NodeId v, std::vector<NodeId>& out) {
    auto row = info.dep_nodes.row(v);
    const auto first = static_cast<std::ptrdiff_t>(out.size());
    out.insert(out.end(), row.begin(), row.end());
    std::sort(out.begin() + first, out.end(), lighter);
  };
  Order roots(input);
  std::stable_sort(roots.begin(), roots.end(), lighter);
  depth_first_postorder(
      roots, [&](NodeId v) { return seen[v] ? false : (seen[v] = 1, true); }, producers_lightest_first,
      [&](NodeId v) { result.push_back(v); });
  return result;
}

}  // namespace schedlab
