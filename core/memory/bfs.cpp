// BFS (Inductor's topological_sort_bfs): among ready nodes, run the one whose
// predecessors ran earliest, comparing the sorted lists of their steps
// lexicographically; ties go to the lower index. FIFO-like, so buffers die
// young. A binary heap keeps it O(E log N).
#include <algorithm>
#include <queue>

#include "core/memory/methods.h"

namespace schedlab {

Order topological_sort_bfs(const Graph& g, const MemoryPlanningInfo& info, const Order& input) {
  const std::size_t n = input.size();
  std::vector<std::int32_t> indegree(g.nodes.size(), 0);
  std::vector<std::int32_t> ran_at(g.nodes.size(), -1);
  std::vector<std::vector<std::int32_t>> priority(g.nodes.size());

  auto compute_priority = [&](NodeId v) {
    auto& p = priority[v];
    for (auto pred : info.pred_nodes.row(v)) p.push_back(ran_at[pred]);
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
  };
  // std::priority_queue pops the largest: "later" means lower priority.
  auto later = [&](NodeId a, NodeId b) {
    if (priority[a] != priority[b]) return priority[b] < priority[a];
    return info.index[b] < info.index[a];
  };
  std::priority_queue<NodeId, std::vector<NodeId>, decltype(later)> heap(later);
  for (NodeId v : input) {
    indegree[v] = info.pred_nodes.degree(v);
    if (indegree[v] == 0) {
      compute_priority(v);
      heap.push(v);
    }
  }
  Order schedule;
  schedule.reserve(n);
  while (!heap.empty()) {
    NodeId v = heap.top();
    heap.pop();
    ran_at[v] = static_cast<std::int32_t>(schedule.size());
    schedule.push_back(v);
    std::vector<std::int32_t>().swap(priority[v]);
    for (auto s : info.succ_nodes.row(v))
      if (--indegree[s] == 0) {
        compute_priority(s);
        heap.push(s);
      }
  }
  return schedule;
}

}  // namespace schedlab
