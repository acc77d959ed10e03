// Dependency analysis after Inductor's Scheduler (compute_dependencies,
// dead_node_elimination, topological_sort_schedule, compute_ancestors).
#include "core/deps/dependencies.h"

#include "core/util/postorder.h"
#include "core/util/short_stable_sort.h"

#include <algorithm>
#include <numeric>

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

  // Adds (user, weak) to the buffer's class once. A node adds all its uses
  // while it is scheduled (and kNone, the graph's outputs, comes last), so
  // its entries are the tail of the list, at most two of them (weak or not).
  void add_user(BufId b, NodeId user, bool weak) {
    std::vector<BufferUser>& users = info_.users[aliases_.find(rename(b))];
    for (auto it = users.rbegin(); it != users.rend() && it->node == user; ++it)
      if (it->weak == weak) return;
    users.push_back({user, weak});
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
  std::vector<std::int32_t> idx;  // one node's at a time, reused
  auto sorted_producers = [&](NodeId v, std::vector<NodeId>& out) {
    idx = deps.unmet[v];
    short_stable_sort(idx.begin(), idx.end(), [&](std::int32_t a, std::int32_t b) {
      return g.buffers[deps.reads[v][a].buf].name < g.buffers[deps.reads[v][b].buf].name;
    });
    for (std::int32_t i : idx) {
      NodeId p = g.buffers[deps.reads[v][i].buf].producer;
      if (in_set[p]) out.push_back(p);
    }
  };

  Order result;
  result.reserve(order.size());
  depth_first_postorder(
      order, [&](NodeId v) { return seen[v] ? false : (seen[v] = true); }, sorted_producers, [&](NodeId v) { result.push_back(v); });
  return result;
}

Reachability::Reachability(const Graph& g, const DependencyInfo& deps, const Order& schedule)
    : labels_(g.nodes.size()), stamp_(g.nodes.size()) {
  for (std::size_t i = 0; i < schedule.size(); ++i) labels_[schedule[i]].pos = static_cast<std::int32_t>(i);
  std::vector<std::pair<NodeId, NodeId>> edges, reversed;  // (node, predecessor), (node, successor)
  for (NodeId v : schedule) {
    for (NodeId p : producer_nodes(g, deps, v)) {
      if (labels_[p].pos < 0) continue;  // a removed node (only weak deps can name one)
      edges.emplace_back(v, p);
      reversed.emplace_back(p, v);
      labels_[v].depth = std::max(labels_[v].depth, labels_[p].depth + 1);
    }
  }
  const auto n = static_cast<std::int32_t>(g.nodes.size());
  preds_ = Adjacency::from_pairs(n, edges);
  succs_ = Adjacency::from_pairs(n, reversed);
  for (int t = 0; t < kTraversals; ++t) label_traversal(schedule, t);
}

// One GRAIL traversal: depth first from the sources, numbering nodes in
// postorder; low(v) is the least number among v and everything below it.
// The traversals differ in the order they take sources and successors
// (schedule order, reversed, rotated by a fixed pseudo-random offset), so
// that their intervals cut different false "maybe"s.
void Reachability::label_traversal(const Order& schedule, int traversal) {
  const std::size_t n = schedule.size();
  std::vector<NodeId> sources;
  for (NodeId v : schedule)
    if (preds_.degree(v) == 0) sources.push_back(v);
  if (traversal == 1) std::reverse(sources.begin(), sources.end());
  std::uint64_t rng = 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(traversal + 1);  // each traversal its own
  auto next_random = [&rng] {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };
  if (traversal >= 2)
    for (std::size_t i = sources.size(); i > 1; --i) std::swap(sources[i - 1], sources[static_cast<std::size_t>(next_random() % i)]);
  // Successor k of v, in this traversal's order.
  auto successor = [&](NodeId v, std::size_t k, std::size_t offset) {
    const auto s = succs_.row(v);
    if (traversal == 1) return s[s.size() - 1 - k];
    return s[(k + offset) % s.size()];
  };
  const std::uint32_t visited = ++epoch_;  // the stamps are fresh (construction)
  struct Frame {
    NodeId v;
    std::size_t next, offset;
  };
  std::vector<Frame> frames;
  std::int32_t counter = 0;
  for (NodeId root : sources) {
    if (stamp_[root].down == visited) continue;
    stamp_[root].down = visited;
    labels_[root].low[traversal] = static_cast<std::int32_t>(n);
    frames.push_back({root, 0, traversal >= 2 && succs_.degree(root) ? static_cast<std::size_t>(next_random() % static_cast<std::size_t>(succs_.degree(root))) : 0});
    while (!frames.empty()) {
      Frame& f = frames.back();
      Labels& lv = labels_[f.v];
      if (f.next < static_cast<std::size_t>(succs_.degree(f.v))) {
        NodeId c = successor(f.v, f.next++, f.offset);
        if (stamp_[c].down == visited) {
          lv.low[traversal] = std::min(lv.low[traversal], labels_[c].low[traversal]);
          continue;
        }
        stamp_[c].down = visited;
        labels_[c].low[traversal] = static_cast<std::int32_t>(n);
        frames.push_back({c, 0, traversal >= 2 && succs_.degree(c) ? static_cast<std::size_t>(next_random() % static_cast<std::size_t>(succs_.degree(c))) : 0});
        continue;
      }
      lv.post[traversal] = counter++;
      lv.low[traversal] = std::min(lv.low[traversal], lv.post[traversal]);
      const Labels& done = lv;
      frames.pop_back();
      if (!frames.empty()) {
        Labels& parent = labels_[frames.back().v];
        parent.low[traversal] = std::min(parent.low[traversal], done.low[traversal]);
      }
    }
  }
}

// Can a path of at least one edge lead from `from` to `to`?
bool Reachability::may_reach(const Labels& from, const Labels& to) {
  if (from.pos >= to.pos || from.depth >= to.depth) return false;
  for (int t = 0; t < kTraversals; ++t)
    if (from.low[t] > to.low[t] || from.post[t] <= to.post[t]) return false;
  return true;
}

Reachability::Box Reachability::box_of(const std::vector<NodeId>& nodes) const {
  const Labels& first = labels_[nodes[0]];
  Box box{first.pos, first.pos, first.depth, first.depth, {}, {}, {}, {}};
  for (int t = 0; t < kTraversals; ++t) {
    box.min_low[t] = box.max_low[t] = first.low[t];
    box.min_post[t] = box.max_post[t] = first.post[t];
  }
  for (NodeId v : nodes) {
    const Labels& l = labels_[v];
    box.min_pos = std::min(box.min_pos, l.pos);
    box.max_pos = std::max(box.max_pos, l.pos);
    box.min_depth = std::min(box.min_depth, l.depth);
    box.max_depth = std::max(box.max_depth, l.depth);
    for (int t = 0; t < kTraversals; ++t) {
      box.min_low[t] = std::min(box.min_low[t], l.low[t]);
      box.max_low[t] = std::max(box.max_low[t], l.low[t]);
      box.min_post[t] = std::min(box.min_post[t], l.post[t]);
      box.max_post[t] = std::max(box.max_post[t], l.post[t]);
    }
  }
  return box;
}

// A few nodes are checked one by one; a big set keeps its box alone.
constexpr std::size_t kCheckedOneByOne = 16;

bool Reachability::may_reach_some(NodeId v, const Box& targets, const std::vector<NodeId>& target_nodes) const {
  const Labels& l = labels_[v];
  if (l.pos >= targets.max_pos || l.depth >= targets.max_depth) return false;
  for (int t = 0; t < kTraversals; ++t)
    if (l.low[t] > targets.max_low[t] || l.post[t] <= targets.min_post[t]) return false;
  if (target_nodes.size() > kCheckedOneByOne) return true;
  for (NodeId b : target_nodes)
    if (may_reach(l, labels_[b])) return true;
  return false;
}

bool Reachability::may_be_reached(NodeId v, const Box& sources, const std::vector<NodeId>& source_nodes) const {
  const Labels& l = labels_[v];
  if (l.pos <= sources.min_pos || l.depth <= sources.min_depth) return false;
  for (int t = 0; t < kTraversals; ++t)
    if (l.low[t] < sources.min_low[t] || l.post[t] >= sources.max_post[t]) return false;
  if (source_nodes.size() > kCheckedOneByOne) return true;
  for (NodeId a : source_nodes)
    if (may_reach(labels_[a], l)) return true;
  return false;
}

// Two breadth-first searches, one node at a time each: forward from `as`,
// backward from `bs`, each entering only nodes whose labels still allow a
// path to (from) the other end. Yes when one reaches the other's start or
// the two meet; no when either runs out, so a "no" costs at most twice the
// smaller pruned side, and short paths show early.
bool Reachability::any_ancestor(const std::vector<NodeId>& as, const std::vector<NodeId>& bs) const {
  if (as.empty() || bs.empty()) return false;
  // Position and depth first: they settle most queries before any box is built.
  std::int32_t min_pos = labels_[as[0]].pos, min_depth = labels_[as[0]].depth, max_pos = labels_[bs[0]].pos, max_depth = labels_[bs[0]].depth;
  for (NodeId a : as) {
    min_pos = std::min(min_pos, labels_[a].pos);
    min_depth = std::min(min_depth, labels_[a].depth);
  }
  for (NodeId b : bs) {
    max_pos = std::max(max_pos, labels_[b].pos);
    max_depth = std::max(max_depth, labels_[b].depth);
  }
  if (min_pos >= max_pos || min_depth >= max_depth) return false;
  const Box from = box_of(as), to = box_of(bs);
  // The seeds the labels keep, found before any stamp is touched: more than
  // a third of the queries that get this far end here on the fuser's
  // irregular DAGs, and a stamp costs a cache miss per seed.
  down_queue_.clear();
  up_queue_.clear();
  for (NodeId a : as)
    if (may_reach_some(a, to, bs)) down_queue_.push_back(a);
  if (down_queue_.empty()) return false;
  for (NodeId b : bs)
    if (may_be_reached(b, from, as)) up_queue_.push_back(b);
  if (up_queue_.empty()) return false;
  epoch_ += 2;
  if (epoch_ < 2) {  // wrapped: reset the stamps
    std::fill(stamp_.begin(), stamp_.end(), Stamps{});
    epoch_ = 2;
  }
  // Per side: `start` marks a seed (reached by no edge yet), `reached` a node
  // reached through at least one edge. Meeting needs an edge on one side: a
  // node in both `as` and `bs` is not its own ancestor.
  const std::uint32_t start = epoch_ - 1, reached = epoch_;
  auto on = [](std::uint32_t stamp, std::uint32_t s, std::uint32_t r) { return stamp == s || stamp == r; };
  // Every seed is stamped, kept or not: a search reaching any node of `bs`
  // has found a path, and one reaching a seed of its own side again has
  // nothing new to queue. (A seed listed twice is queued twice, harmlessly.)
  for (NodeId a : as) stamp_[a].down = start;
  for (NodeId b : bs) stamp_[b].up = start;
  for (std::size_t down_next = 0, up_next = 0; down_next < down_queue_.size() && up_next < up_queue_.size();) {
    for (NodeId s : succs_.row(down_queue_[down_next++])) {
      Stamps& st = stamp_[s];
      if (on(st.up, start, reached)) return true;
      if (st.down == reached) continue;
      const bool seed = st.down == start;  // a seed reached again is already queued (or pruned)
      st.down = reached;
      if (!seed && may_reach_some(s, to, bs)) down_queue_.push_back(s);
    }
    if (down_next == down_queue_.size()) break;
    for (NodeId p : preds_.row(up_queue_[up_next++])) {
      Stamps& st = stamp_[p];
      if (on(st.down, start, reached)) return true;
      if (st.up == reached) continue;
      const bool seed = st.up == start;
      st.up = reached;
      if (!seed && may_be_reached(p, from, as)) up_queue_.push_back(p);
    }
  }
  return false;
}

bool Reachability::is_ancestor(NodeId a, NodeId b) const {
  if (a == b || !may_reach(labels_[a], labels_[b])) return false;
  return any_ancestor({a}, {b});
}

std::vector<NodeId> Reachability::ancestors(NodeId v) const {
  std::vector<NodeId> out;
  std::vector<bool> seen(static_cast<std::size_t>(preds_.rows()), false);
  std::vector<NodeId> stack{v};
  while (!stack.empty()) {
    NodeId x = stack.back();
    stack.pop_back();
    for (NodeId p : preds_.row(x))
      if (!seen[p]) {
        seen[p] = true;
        out.push_back(p);
        stack.push_back(p);
      }
  }
  std::sort(out.begin(), out.end(), [&](NodeId a, NodeId b) { return labels_[a].pos < labels_[b].pos; });
  return out;
}

}  // namespace schedlab
