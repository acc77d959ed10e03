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

#include "core/memory/methods.h"
#include "core/memory/node_ready_list.h"
#include "core/util/min_tree.h"

namespace schedlab {

namespace {

// The ready set: nodes in slots sorted by (size, index), the tree keyed by
// (size - to_free, index); the bookkeeping of live memory and of what each
// node would free.
class LpmfStrategy {
 public:
  LpmfStrategy(const Graph& g, const MemoryPlanningInfo& info, const Order& input)
      : info_(info), slot_(g.nodes.size(), 0), to_free_(g.nodes.size(), 0), outdegree_(g.buffers.size(), 0),
        ready_(g.nodes.size(), 0), tree_(static_cast<std::int32_t>(input.size())), node_at_index_(input.size()) {
    std::vector<NodeId> by_size(input);
    std::sort(by_size.begin(), by_size.end(), [&](NodeId a, NodeId b) {
      return std::pair(info.node_size[a], info.index[a]) < std::pair(info.node_size[b], info.index[b]);
    });
    slot_size_.resize(input.size());
    for (std::size_t s = 0; s < by_size.size(); ++s) {
      slot_[by_size[s]] = static_cast<std::int32_t>(s);
      slot_size_[s] = info.node_size[by_size[s]];
    }
    for (BufId b = 0; b < g.num_buffers(); ++b)
      if (info.planned[b]) outdegree_[b] = info.buffer_succ_nodes.degree(b) + (info.is_graph_output[b] ? 1 : 0);
    for (BufId b : info.freeable_inputs) live_ += info.size_free[b];
    std::int64_t output_memory = 0;
    for (BufId b = 0; b < g.num_buffers(); ++b)
      if (info.is_graph_output[b] && info.planned[b]) output_memory += info.size_free[b];
    max_memory_ = std::max(live_, output_memory);
    for (NodeId v : input) {
      for (auto b : info.pred_buffers.row(v))
        if (outdegree_[b] == 1) to_free_[v] += info.size_free[b];
      for (BufId b : g.nodes[v].outputs)
        if (outdegree_[b] == 0) to_free_[v] += info.size_free[b];
      node_at_index_[info.index[v]] = v;
    }
  }

  void release(NodeId v) {
    ready_[v] = 1;
    publish(v);
  }

  NodeId pick() const {
    const std::int64_t slack = max_memory_ - live_;
    MinTree::Entry best = tree_.min(0, slots_up_to(slack));
    if (best == MinTree::kEmpty) {
      const std::int32_t first = tree_.first_active();
      if (first < 0) return kNone;
      best = tree_.min(first, slots_up_to(slot_size_[first]));
    }
    return node_at_index_[best.second];
  }

  void scheduled(NodeId v) {
    tree_.clear(slot_[v]);
    ready_[v] = 0;
    live_ += info_.node_size[v];
    max_memory_ = std::max(max_memory_, live_);
    live_ -= to_free_[v];
    for (auto b : info_.pred_buffers.row(v)) {
      if (--outdegree_[b] != 1) continue;
      for (auto s : info_.buffer_succ_nodes.row(b)) {
        to_free_[s] += info_.size_free[b];
        if (ready_[s]) publish(s);
      }
    }
  }

 private:
  void publish(NodeId v) { tree_.set(slot_[v], {info_.node_size[v] - to_free_[v], info_.index[v]}); }
  // The slots of nodes no larger than `size`.
  std::int32_t slots_up_to(std::int64_t size) const {
    return static_cast<std::int32_t>(std::upper_bound(slot_size_.begin(), slot_size_.end(), size) - slot_size_.begin());
  }

  const MemoryPlanningInfo& info_;
  std::vector<std::int32_t> slot_;
  std::vector<std::int64_t> slot_size_;
  std::vector<std::int64_t> to_free_;
  std::vector<std::int32_t> outdegree_;  // per buffer: users not yet run (+1 for a graph output)
  std::vector<std::uint8_t> ready_;
  MinTree tree_;
  std::vector<NodeId> node_at_index_;
  std::int64_t live_ = 0, max_memory_ = 0;
};

}  // namespace

Order topological_sort_lpmf(const Graph& g, const MemoryPlanningInfo& info, const Order& input) {
  LpmfStrategy lpmf(g, info, input);
  return schedule_by_planning_deps(g, info, input, lpmf);
}

}  // namespace schedlab
