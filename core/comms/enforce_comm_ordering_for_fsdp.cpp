// Inductor's enforce_comm_ordering_for_fsdp (comms.py, 2.11): FSDP2's
// all-gathers and reduce-scatters, traced with their copy-in and copy-out ops,
// are each cut into two groups of nodes kept together, "issue" (copy-in up to
// the collective) and "wait" (the wait and what follows it), and consecutive
// blocks are chained by fake deps so that every rank issues them in order.
//
// Recognition (docs/comms.md, "enforce_comm_ordering_for_fsdp"):
//  - an all-gather block starts at a collective whose kernel is
//    _c10d_functional.all_gather_into_tensor_out with an ancestor whose kernel
//    is fsdp.all_gather_copy_in (an extern node: Inductor's FallbackKernel);
//  - a reduce-scatter block starts at an extern node fsdp.chunk_cat.
// Dependencies followed are data deps (memory, star, weak); `fake_weak` deps
// are not: in a 2.11 export they are mostly the collective chain that
// decide_global_ordering_of_comms adds, which Inductor adds without making the
// reader a user of the buffer.
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/comms/passes.h"
#include "core/util/error.h"

namespace schedlab {

namespace {

constexpr std::string_view kAllGatherCopyIn = "fsdp.all_gather_copy_in.default";
constexpr std::string_view kSplitWithSizesCopy = "fsdp.split_with_sizes_copy.default";
constexpr std::string_view kChunkCat = "fsdp.chunk_cat.default";
constexpr std::string_view kAllGatherIntoTensorOut = "_c10d_functional.all_gather_into_tensor_out.default";
constexpr std::string_view kWaitTensor = "_c10d_functional.wait_tensor.default";

constexpr std::int32_t kNoGroup = -1;

// The exporter writes an extern node's `python_kernel_name`
// ("torch.ops.fsdp.chunk_cat.default"); the namespace prefix is optional here.
bool names_op(std::string_view written, std::string_view op) {
  if (written.starts_with("torch.ops.")) written.remove_prefix(10);
  return written == op;
}

bool kernel_is(const Node& n, std::string_view op) { return names_op(n.kernel, op); }

// utils.is_fallback_op: an extern kernel calling `op`.
bool is_fallback_op(const Node& n, std::string_view op) { return n.kind == NodeKind::Extern && kernel_is(n, op); }

// utils.is_collective(node, op): a collective calling `op` (by its kernel, or
// the collective's own op name when the kernel is not written).
bool is_collective_op(const Node& n, std::string_view op) {
  if (n.kind != NodeKind::Collective) return false;
  if (!n.kernel.empty()) return kernel_is(n, op);
  return n.collective && names_op(n.collective->op, op);
}

// An ExternKernelSchedulerNode in Inductor: the format's extern, collective and wait kinds.
bool is_extern_kernel_node(const Node& n) {
  return n.kind == NodeKind::Extern || n.kind == NodeKind::Collective || n.kind == NodeKind::Wait;
}

// The criteria_cb of the all-gather's user walk: only nop nodes and the
// collective, its wait and the copy-out are part of the block.
bool continues_all_gather_block(const Node& n) {
  return n.kind == NodeKind::Nop ||
         (is_extern_kernel_node(n) &&
          (kernel_is(n, kAllGatherIntoTensorOut) || kernel_is(n, kWaitTensor) || kernel_is(n, kSplitWithSizesCopy)));
}

std::string describe(const Graph& g, NodeId v) {
  return "nodes[" + std::to_string(v) + "] \"" + g.nodes[v].name + "\"";
}

// The grouped nodes being built: Inductor's snode_name_to_final_snode and the
// two maps from an issue group to its wait group, in creation order.
struct FsdpGroups {
  std::vector<std::int32_t> group_of;      // per node: its group, or kNoGroup
  std::vector<std::vector<NodeId>> members;  // per group, in operation order
  std::vector<std::pair<std::int32_t, std::int32_t>> all_gather_blocks;     // (issue group, wait group)
  std::vector<std::pair<std::int32_t, std::int32_t>> reduce_scatter_blocks;
};

// A set of nodes reused by every walk: membership by stamp (clearing is
// O(1)), members in insertion order. Each walk costs the part of the graph
// it visits, not the graph.
class NodeSet {
 public:
  explicit NodeSet(std::size_t num_nodes) : stamp_(num_nodes, 0) {}
  void clear() {
    ++epoch_;
    members_.clear();
  }
  bool contains(NodeId v) const { return stamp_[v] == epoch_; }
  bool insert(NodeId v) {
    if (contains(v)) return false;
    stamp_[v] = epoch_;
    members_.push_back(v);
    return true;
  }
  // get_op_idx: the operation order of Inductor's names (op0, op1, ...) is
  // the graph's baseline order, which NodeIds follow.
  std::vector<NodeId> sorted_by_op_index() const {
    std::vector<NodeId> out = members_;
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::vector<std::uint32_t> stamp_;
  std::uint32_t epoch_ = 1;
  std::vector<NodeId> members_;
};

struct FsdpContext {
  const CommGraph& cg;
  Adjacency data_users;  // per buffer: nodes with a data dep on it (SchedulerBuffer.users)
  FsdpGroups groups;
  NodeSet block;      // the nodes of the block being built
  NodeSet ancestors;  // has_copy_in_ancestor's walk
};

// A node already grouped stands for its group in Inductor (name_to_fused_node
// now maps it there); a group reached by a later block's walk makes 2.11 fail
// (get_op_idx asserts on a GroupedSchedulerNode), so it is an error here.
[[noreturn]] void throw_regrouped(const FsdpContext& c, NodeId block, NodeId grouped) {
  const Graph& g = *c.cg.graph;
  throw Error("enforce_comm_ordering_for_fsdp: " + describe(g, block) + ": its block reaches " + describe(g, grouped) +
              ", already grouped with an earlier FSDP block (Inductor 2.11 fails on this graph)");
}

// Depth-first over the producers of `start`'s data deps, transitively, each
// ancestor once (`seen`); `visit(p)` returns false to end the walk, and then
// so does this.
template <class Visit>
bool walk_ancestors(const CommGraph& cg, NodeId start, NodeSet& seen, Visit visit) {
  std::vector<NodeId> stack{start};
  while (!stack.empty()) {
    NodeId v = stack.back();
    stack.pop_back();
    for (BufId b : cg.data_bufs.row(v)) {
      NodeId p = cg.producer(b);
      if (!seen.insert(p)) continue;
      if (!visit(p)) return false;
      stack.push_back(p);
    }
  }
  return true;
}

// utils.find_recursive_deps_of_node: the node and all its ancestors.
void find_recursive_deps_of_node(const FsdpContext& c, NodeId start, NodeSet& collected) {
  collected.insert(start);
  walk_ancestors(c.cg, start, collected, [&](NodeId p) {
    if (c.groups.group_of[p] != kNoGroup) throw_regrouped(c, start, p);
    return true;
  });
}

// utils.find_recursive_users_of_node: the node and its users, transitively,
// entering only nodes `continues` accepts. A grouped user is a
// GroupedSchedulerNode to Inductor: refused by the all-gather's criteria, an
// error without one.
template <class Continues>
void find_recursive_users_of_node(const FsdpContext& c, NodeId start, NodeSet& collected, Continues continues,
                                  bool grouped_users_stop) {
  const Graph& g = *c.cg.graph;
  std::vector<NodeId> stack{start};
  collected.insert(start);
  while (!stack.empty()) {
    NodeId v = stack.back();
    stack.pop_back();
    for (BufId b : g.nodes[v].outputs)
      for (NodeId user : c.data_users.row(b)) {
        if (collected.contains(user)) continue;
        if (c.groups.group_of[user] != kNoGroup) {
          if (grouped_users_stop) continue;
          throw_regrouped(c, start, user);
        }
        if (!continues(g.nodes[user])) continue;
        collected.insert(user);
        stack.push_back(user);
      }
  }
}

// "Reuse layer": a second copy-out belongs to the next all-gather's block;
// the block ends before it.
void cut_at_second_copy_out(const Graph& g, std::vector<NodeId>& block) {
  std::int32_t copy_outs = 0;
  for (std::size_t i = 0; i < block.size(); ++i)
    if (is_fallback_op(g.nodes[block[i]], kSplitWithSizesCopy) && ++copy_outs > 1) {
      block.resize(i);
      return;
    }
}

// The first wait after the block's first node splits it into the issue group
// and the wait group.
std::size_t wait_index(const FsdpContext& c, NodeId block_start, const std::vector<NodeId>& block) {
  for (std::size_t i = 1; i < block.size(); ++i)
    if (c.cg.graph->nodes[block[i]].kind == NodeKind::Wait) return i;
  throw Error("enforce_comm_ordering_for_fsdp: " + describe(*c.cg.graph, block_start) +
              ": no wait follows its collective among the nodes of its block");
}

std::int32_t create_group_node(FsdpGroups& groups, std::vector<NodeId> members) {
  const auto id = static_cast<std::int32_t>(groups.members.size());
  for (NodeId v : members) groups.group_of[v] = id;
  groups.members.push_back(std::move(members));
  return id;
}

std::pair<std::int32_t, std::int32_t> split_into_groups(FsdpContext& c, NodeId block_start, std::vector<NodeId> block) {
  const std::size_t w = wait_index(c, block_start, block);
  std::vector<NodeId> wait_part(block.begin() + static_cast<std::ptrdiff_t>(w), block.end());
  block.resize(w);
  const std::int32_t issue = create_group_node(c.groups, std::move(block));
  const std::int32_t wait = create_group_node(c.groups, std::move(wait_part));
  return {issue, wait};
}

// The `any(is_fallback_op(..., all_gather_copy_in) for x in snode.ancestors)`
// test, on ancestors not grouped yet (a grouped one is a GroupedSchedulerNode,
// whose `.node` is None).
bool has_copy_in_ancestor(FsdpContext& c, NodeId v) {
  const Graph& g = *c.cg.graph;
  c.ancestors.clear();
  const bool found = !walk_ancestors(c.cg, v, c.ancestors, [&](NodeId p) {
    return c.groups.group_of[p] != kNoGroup || !is_fallback_op(g.nodes[p], kAllGatherCopyIn);
  });
  return found;
}

// Case 1: cast + copy-in + getitem + all-gather | wait + copy-out.
void group_all_gather_block(FsdpContext& c, NodeId all_gather) {
  const Graph& g = *c.cg.graph;
  c.block.clear();
  find_recursive_deps_of_node(c, all_gather, c.block);
  find_recursive_users_of_node(c, all_gather, c.block, continues_all_gather_block, /*grouped_users_stop=*/true);
  std::vector<NodeId> block = c.block.sorted_by_op_index();
  cut_at_second_copy_out(g, block);
  c.groups.all_gather_blocks.push_back(split_into_groups(c, all_gather, std::move(block)));
}

// Case 2: chunk_cat + reduce-scatter | wait + everything after it.
void group_reduce_scatter_block(FsdpContext& c, NodeId chunk_cat) {
  c.block.clear();
  find_recursive_users_of_node(c, chunk_cat, c.block, [](const Node&) { return true; }, /*grouped_users_stop=*/false);
  c.groups.reduce_scatter_blocks.push_back(split_into_groups(c, chunk_cat, c.block.sorted_by_op_index()));
}

Adjacency data_users_of(const CommGraph& cg) {
  std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
  for (NodeId v = 0; v < cg.num_nodes(); ++v)
    for (BufId b : cg.data_bufs.row(v)) pairs.emplace_back(b, v);
  return Adjacency::from_pairs(cg.graph->num_buffers(), pairs);
}

// Each group takes the place of its first member met in `order`, members in
// operation order.
Order build_grouped_order(const FsdpGroups& groups, const Order& order) {
  Order out;
  out.reserve(order.size());
  std::vector<char> placed(groups.members.size(), 0);
  for (NodeId v : order) {
    const std::int32_t gid = groups.group_of[v];
    if (gid == kNoGroup) {
      out.push_back(v);
    } else if (!placed[gid]) {
      placed[gid] = 1;
      out.insert(out.end(), groups.members[gid].begin(), groups.members[gid].end());
    }
  }
  return out;
}

// The previous block's wait group runs before the next block's issue group:
// every member of the issue group gets a fake dep on every buffer of the wait
// group (Inductor adds them to the GroupedSchedulerNode, which its members
// share).
void chain_blocks(const Graph& g, const FsdpGroups& groups, const std::vector<std::pair<std::int32_t, std::int32_t>>& blocks,
                  std::vector<FakeDep>& out) {
  for (std::size_t i = 1; i < blocks.size(); ++i) {
    const auto& previous_wait = groups.members[blocks[i - 1].second];
    for (NodeId v : groups.members[blocks[i].first])
      for (NodeId w : previous_wait)
        for (BufId b : g.nodes[w].outputs) out.push_back({v, b});
  }
}

// The chain must not close a cycle (a later block feeding an earlier one);
// Kahn's algorithm over data deps plus the new fake deps.
void check_chain_is_acyclic(const CommGraph& cg, const std::vector<FakeDep>& added) {
  const std::int32_t n = cg.num_nodes();
  std::vector<std::pair<std::int32_t, std::int32_t>> edges;
  for (NodeId v = 0; v < n; ++v)
    for (BufId b : cg.unmet_bufs.row(v)) edges.emplace_back(cg.producer(b), v);
  for (const FakeDep& d : added) edges.emplace_back(cg.producer(d.buf), d.node);
  std::vector<std::int32_t> indegree(n, 0);
  for (auto [_, v] : edges) ++indegree[v];
  Adjacency succ = Adjacency::from_pairs(n, edges);
  std::vector<NodeId> ready;
  for (NodeId v = 0; v < n; ++v)
    if (indegree[v] == 0) ready.push_back(v);
  std::int32_t done = 0;
  while (!ready.empty()) {
    NodeId v = ready.back();
    ready.pop_back();
    ++done;
    for (NodeId s : succ.row(v))
      if (--indegree[s] == 0) ready.push_back(s);
  }
  if (done != n)
    throw Error("enforce_comm_ordering_for_fsdp: chaining the FSDP blocks in this order closes a dependency cycle "
                "(a later block feeds an earlier one)");
}

}  // namespace

CommPassResult enforce_comm_ordering_for_fsdp(const CommGraph& cg, const Order& order, const CommKnobs&) {
  const Graph& g = *cg.graph;
  FsdpContext c{cg, data_users_of(cg), {}, NodeSet(g.nodes.size()), NodeSet(g.nodes.size())};
  c.groups.group_of.assign(g.nodes.size(), kNoGroup);
  for (NodeId v : order) {
    const Node& n = g.nodes[v];
    const bool all_gather = is_collective_op(n, kAllGatherIntoTensorOut) && has_copy_in_ancestor(c, v);
    const bool reduce_scatter = !all_gather && is_fallback_op(n, kChunkCat);
    if (!all_gather && !reduce_scatter) continue;
    // A block start that an earlier block grouped would be emitted twice by 2.11.
    if (c.groups.group_of[v] != kNoGroup) throw_regrouped(c, v, v);
    if (all_gather)
      group_all_gather_block(c, v);
    else
      group_reduce_scatter_block(c, v);
  }
  CommPassResult r;
  // Without FSDP blocks (Inductor asserts that some exist; its callers ran
  // it only on graphs with FSDP ops) the order is left as it is.
  if (c.groups.members.empty()) {
    r.order = order;
    return r;
  }
  r.order = build_grouped_order(c.groups, order);
  chain_blocks(g, c.groups, c.groups.all_gather_blocks, r.added_fake_deps);
  chain_blocks(g, c.groups, c.groups.reduce_scatter_blocks, r.added_fake_deps);
  check_chain_is_acyclic(cg, r.added_fake_deps);
  return r;
}

}  // namespace schedlab
