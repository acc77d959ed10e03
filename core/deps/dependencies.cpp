// Dependency analysis after Inductor's Scheduler (compute_dependencies,
// dead_node_elimination, topological_sort_schedule, compute_ancestors).
#include "core/deps/dependencies.h"

#include "core/util/postorder.h"

#include <algorithm>
#include <numeric>
#include <unordered_set>

namespace schedlab {

namespace {

// An extern kernel whose every output has NoneLayout gives nothing to read:
// it runs for its effect (AssertScalar, the runtime checks of a
// data-dependent size; DynamicScalar; side-effecting fallbacks), and
// Inductor's has_side_effects() keeps it through dead-code elimination.
bool runs_for_effect(const Graph& g, const Node& n) {
  if (n.kind != NodeKind::Extern || n.outputs.empty()) return false;
  return std::all_of(n.outputs.begin(), n.outputs.end(), [&](BufId b) { return g.buffers[b].layout == Layout::None; });
}

}  // namespace

namespace {

// Union-find over buffers: aliases share one user list (Inductor points the
// names of aliasing buffers at the same Python list).
struct AliasClasses {
  std::vector<BufId> parent;
  explicit AliasClasses(std::int32_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  BufId find(BufId b) {
    while (parent[b] != b) b = parent[b] = parent[parent[b]];
    return b;
  }
  void unite(BufId a, BufId b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

class DependencyBuilder {
 public:
  explicit DependencyBuilder(const Graph& g) : g_(g), aliases_(g.num_buffers()), renamed_to_(g.num_buffers(), kNone) {
    info_.reads.resize(g.nodes.size());
    info_.unmet.resize(g.nodes.size());
    info_.users.resize(g.buffers.size());
    info_.side_effects.resize(g.nodes.size());
    info_.storage_root.resize(g.buffers.size());
    std::iota(info_.storage_root.begin(), info_.storage_root.end(), 0);
  }

  DependencyInfo run() {
    unite_aliases();
    for (NodeId v = 0; v < g_.num_nodes(); ++v) schedule_node(v);
    // Graph outputs and mutated inputs are never dead.
    for (BufId b : g_.outputs) add_user(b, kNone, false);
    for (BufId b = 0; b < g_.num_inputs; ++b)
      if (renamed_to_[b] != kNone) add_user(b, kNone, false);
    // Users were collected per alias class; every member sees the class's list.
    for (BufId b = 0; b < g_.num_buffers(); ++b) {
      BufId root = aliases_.find(b);
      if (root != b) info_.users[b] = info_.users[root];
    }
    info_.latest_version.resize(g_.buffers.size());
    for (BufId b = 0; b < g_.num_buffers(); ++b) info_.latest_version[b] = rename(b);
    return std::move(info_);
  }

 private:
  const Graph& g_;
  DependencyInfo info_;
  AliasClasses aliases_;
  std::vector<BufId> renamed_to_;  // mutation_renames: the next version of a buffer
  std::unordered_set<std::uint64_t> user_seen_;

  void unite_aliases() {
    for (const Node& n : g_.nodes)
      for (BufId b : n.outputs) {
        const Buffer& buf = g_.buffers[b];
        // An auto-functionalized op returning None may list several unrelated aliases.
        if (buf.layout == Layout::None && buf.aliases.size() > 1) continue;
        for (const auto& name : buf.aliases) {
          BufId other = g_.find_buffer(name);
          if (other != kNone) aliases_.unite(b, other);
        }
      }
  }

  BufId rename(BufId b) const {
    while (renamed_to_[b] != kNone) b = renamed_to_[b];
    return b;
  }

  void add_user(BufId b, NodeId user, bool weak) {
    BufId cls = aliases_.find(rename(b));
    std::uint64_t key = (static_cast<std::uint64_t>(cls) << 33) | (static_cast<std::uint64_t>(user + 1) << 1) | (weak ? 1u : 0u);
    if (user_seen_.insert(key).second) info_.users[cls].push_back({user, weak});
  }

  static bool reads_buffer(const std::vector<Dep>& reads, BufId b) {
    return std::any_of(reads.begin(), reads.end(), [&](const Dep& d) { return d.buf == b; });
  }

  void schedule_node(NodeId v) {
    const Node& n = g_.nodes[v];
    auto& reads = info_.reads[v];
    // The node's own reads, renamed to the versions current before it runs.
    reads = n.reads;
    for (Dep& d : reads) d.buf = rename(d.buf);
    info_.side_effects[v] = n.kind == NodeKind::Collective || n.kind == NodeKind::Wait || runs_for_effect(g_, n);

    for (BufId out : n.outputs) {
      BufId mutated = g_.buffers[out].mutation_of;
      if (mutated == kNone) continue;
      BufId alt = rename(mutated);
      // After the previous writer of the storage ...
      add_user(alt, v, false);
      if (!reads_buffer(reads, alt)) reads.push_back(Dep{alt, DepKind::Star, g_.buffers[alt].bytes, {}, {}, {}});
      // ... and after every earlier reader of it (ordering only; a view of the
      // storage must also stay alive, a clone need not).
      std::vector<BufferUser> earlier = info_.users[aliases_.find(alt)];
      for (const BufferUser& u : earlier) {
        if (u.node == kNone || u.node == v) continue;
        for (BufId o : g_.nodes[u.node].outputs) {
          BufId other = rename(o);
          const auto& al = g_.buffers[o].aliases;
          bool is_alias = std::find(al.begin(), al.end(), g_.buffers[alt].name) != al.end();
          if (!reads_buffer(reads, other)) reads.push_back(Dep{other, is_alias ? DepKind::Weak : DepKind::FakeWeak, 0, {}, {}, {}});
          add_user(other, v, true);
        }
      }
    }
    // Weak deps in the file (e.g. the comm ordering Inductor adds before this
    // analysis) order the node but make it no user of the buffer.
    for (const Dep& d : reads)
      if (!d.is_weak()) add_user(d.buf, v, false);
    for (std::size_t i = 0; i < reads.size(); ++i) {
      NodeId p = g_.buffers[reads[i].buf].producer;
      if (p != kNone && p != v) info_.unmet[v].push_back(static_cast<std::int32_t>(i));
    }
    // Later readers of the mutated storage see this node's version.
    for (BufId out : n.outputs) {
      BufId mutated = g_.buffers[out].mutation_of;
      if (mutated == kNone) continue;
      renamed_to_[rename(mutated)] = out;
      if (renamed_to_[mutated] == kNone) renamed_to_[mutated] = out;
      info_.storage_root[out] = info_.storage_root[mutated];
    }
  }
};

}  // namespace

DependencyInfo analyze_dependencies(const Graph& g) { return DependencyBuilder(g).run(); }

std::vector<NodeId> producer_nodes(const Graph& g, const DependencyInfo& deps, NodeId v) {
  std::vector<NodeId> out;
  for (std::int32_t i : deps.unmet[v]) {
    NodeId p = g.buffers[deps.reads[v][i].buf].producer;
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

DeadCodeResult eliminate_dead_nodes(const Graph& g, const DependencyInfo& deps, const Order& order) {
  std::vector<bool> removed(g.nodes.size(), false);
  DeadCodeResult r;
  // Reverse topological order: every user of a node's outputs is decided first.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    NodeId v = *it;
    bool active = false;
    for (BufId b : g.nodes[v].outputs) {
      for (const BufferUser& u : deps.users[b])
        if (!u.weak && (u.node == kNone || !removed[u.node])) {
          active = true;
          break;
        }
      if (active) break;
    }
    if (!active && !deps.side_effects[v]) {
      removed[v] = true;
      r.removed.push_back(v);
    }
  }
  for (NodeId v : order)
    if (!removed[v]) r.kept.push_back(v);
  return r;
}

Order topological_sort_schedule(const Graph& g, const DependencyInfo& deps, const Order& order) {
  std::vector<bool> in_set(g.nodes.size(), false), seen(g.nodes.size(), false);
  for (NodeId v : order) in_set[v] = true;

  // Producers to visit before v: its unmet deps sorted by buffer name (stable,
  // duplicates kept as Inductor's visit() skips them through `seen`).
  auto sorted_producers = [&](NodeId v) {
    std::vector<std::int32_t> idx = deps.unmet[v];
    std::stable_sort(idx.begin(), idx.end(), [&](std::int32_t a, std::int32_t b) {
      return g.buffers[deps.reads[v][a].buf].name < g.buffers[deps.reads[v][b].buf].name;
    });
    std::vector<NodeId> out;
    for (std::int32_t i : idx) {
      NodeId p = g.buffers[deps.reads[v][i].buf].producer;
      if (in_set[p]) out.push_back(p);
    }
    return out;
  };

  Order result;
  result.reserve(order.size());
  depth_first_postorder(
      order, [&](NodeId v) { return seen[v] ? false : (seen[v] = true); }, sorted_producers, [&](NodeId v) { result.push_back(v); });
  return result;
}

Reachability::Reachability(const Graph& g, const DependencyInfo& deps, const Order& schedule)
    : pos_(g.nodes.size(), -1), depth_(g.nodes.size(), 0), preds_(g.nodes.size()), succs_(g.nodes.size()), down_stamp_(g.nodes.size(), 0), up_stamp_(g.nodes.size(), 0) {
  for (std::size_t i = 0; i < schedule.size(); ++i) pos_[schedule[i]] = static_cast<std::int32_t>(i);
  for (NodeId v : schedule) {
    for (NodeId p : producer_nodes(g, deps, v)) {
      if (pos_[p] < 0) continue;  // a removed node (only weak deps can name one)
      preds_[v].push_back(p);
      succs_[p].push_back(v);
      depth_[v] = std::max(depth_[v], depth_[p] + 1);
    }
  }
}

// Two searches, one node at a time each: forward from `as` (descendants) and
// backward from `bs` (ancestors), both kept inside the schedule positions and
// depths that a path from as to bs can use. They answer yes when one reaches
// the other's start or the two meet, and no as soon as either runs out, so a
// query costs at most twice the smaller of the two sides.
bool Reachability::any_ancestor(const std::vector<NodeId>& as, const std::vector<NodeId>& bs) const {
  if (as.empty() || bs.empty()) return false;
  std::int32_t min_pos = pos_[as[0]], min_depth = depth_[as[0]], max_pos = pos_[bs[0]], max_depth = depth_[bs[0]];
  for (NodeId a : as) {
    min_pos = std::min(min_pos, pos_[a]);
    min_depth = std::min(min_depth, depth_[a]);
  }
  for (NodeId b : bs) {
    max_pos = std::max(max_pos, pos_[b]);
    max_depth = std::max(max_depth, depth_[b]);
  }
  if (min_pos >= max_pos || min_depth >= max_depth) return false;
  epoch_ += 2;
  if (epoch_ < 2) {  // wrapped: reset the stamps
    std::fill(down_stamp_.begin(), down_stamp_.end(), 0);
    std::fill(up_stamp_.begin(), up_stamp_.end(), 0);
    epoch_ = 2;
  }
  // Per side: `start` marks a seed (reached by no edge yet), `reached` a node
  // reached through at least one edge. Meeting needs an edge on one side: a
  // node in both `as` and `bs` is not its own ancestor.
  const std::uint32_t start = epoch_ - 1, reached = epoch_;
  auto on = [](std::uint32_t stamp, std::uint32_t s, std::uint32_t r) { return stamp == s || stamp == r; };
  down_queue_.clear();
  up_queue_.clear();
  for (NodeId a : as)
    if (down_stamp_[a] != start) {
      down_stamp_[a] = start;
      down_queue_.push_back(a);
    }
  for (NodeId b : bs)
    if (up_stamp_[b] != start) {
      up_stamp_[b] = start;
      up_queue_.push_back(b);
    }
  // Breadth first on both sides, so that short paths are found early.
  for (std::size_t down_next = 0, up_next = 0; down_next < down_queue_.size() && up_next < up_queue_.size();) {
    for (NodeId s : succs_[down_queue_[down_next++]]) {
      if (on(up_stamp_[s], start, reached)) return true;
      if (down_stamp_[s] == reached || pos_[s] > max_pos || depth_[s] >= max_depth) continue;
      if (down_stamp_[s] != start) down_queue_.push_back(s);  // a seed reached again is already queued
      down_stamp_[s] = reached;
    }
    if (down_next == down_queue_.size()) break;
    for (NodeId p : preds_[up_queue_[up_next++]]) {
      if (on(down_stamp_[p], start, reached)) return true;
      if (up_stamp_[p] == reached || pos_[p] < min_pos || depth_[p] <= min_depth) continue;
      if (up_stamp_[p] != start) up_queue_.push_back(p);
      up_stamp_[p] = reached;
    }
  }
  return false;
}

bool Reachability::is_ancestor(NodeId a, NodeId b) const {
  if (a == b || pos_[a] >= pos_[b] || depth_[a] >= depth_[b]) return false;
  return any_ancestor({a}, {b});
}

std::vector<NodeId> Reachability::ancestors(NodeId v) const {
  std::vector<NodeId> out;
  std::vector<bool> seen(preds_.size(), false);
  std::vector<NodeId> stack{v};
  while (!stack.empty()) {
    NodeId x = stack.back();
    stack.pop_back();
    for (NodeId p : preds_[x])
      if (!seen[p]) {
        seen[p] = true;
        out.push_back(p);
        stack.push_back(p);
      }
  }
  std::sort(out.begin(), out.end(), [&](NodeId a, NodeId b) { return pos_[a] < pos_[b]; });
  return out;
}

}  // namespace schedlab
