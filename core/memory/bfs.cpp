// BFS (Inductor's topological_sort_bfs): among ready nodes, run the one whose
// predecessors ran earliest, comparing the sorted lists of their steps
// lexicographically; ties go to the lower index. FIFO-like, so buffers die
// young. A binary heap keeps it O(E log N).
#include <algorithm>
#include <queue>

#include "core/memory/methods.h"
#include "core/memory/node_ready_list.h"

namespace schedlab {

namespace {

class BfsStrategy {
 public:
  BfsStrategy(const Graph& g, const MemoryPlanningInfo& info)
      : info_(info), ran_at_(g.nodes.size(), -1), priority_(g.nodes.size()), ready_(Later{this}) {}
  BfsStrategy(const BfsStrategy&) = delete;

  void release(NodeId v) {
    auto& p = priority_[v];
    for (auto pred : info_.pred_nodes.row(v)) p.push_back(ran_at_[pred]);
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
    ready_.push(v);
  }
  NodeId pick() {
    if (ready_.empty()) return kNone;
    const NodeId v = ready_.top();
    ready_.pop();
    return v;
  }
  void scheduled(NodeId v) {
    ran_at_[v] = steps_++;
    std::vector<std::int32_t>().swap(priority_[v]);
  }

 private:
  // std::priority_queue pops the largest: "later" means lower priority.
  struct Later {
    const BfsStrategy* s;
    bool operator()(NodeId a, NodeId b) const {
      if (s->priority_[a] != s->priority_[b]) return s->priority_[b] < s->priority_[a];
      return s->info_.index[b] < s->info_.index[a];
    }
  };
  const MemoryPlanningInfo& info_;
  std::vector<std::int32_t> ran_at_;
  std::vector<std::vector<std::int32_t>> priority_;  // sorted distinct steps of its predecessors
  std::priority_queue<NodeId, std::vector<NodeId>, Later> ready_;
  std::int32_t steps_ = 0;
};

}  // namespace

Order topological_sort_bfs(const Graph& g, const MemoryPlanningInfo& info, const Order& input) {
  BfsStrategy bfs(g, info);
  return schedule_by_planning_deps(g, info, input, bfs);
}

}  // namespace schedlab
