#include "core/comms/order_tree.h"

#include <algorithm>
#include <utility>

namespace schedlab::comms_detail {

namespace {

// Fixed priorities (a hash of the id): the same tree, hence the same sums, on every run and target.
std::uint64_t priority_of(std::uint64_t v) {
  std::uint64_t z = v + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

OrderTree::OrderTree(const Order& order, const std::vector<std::int64_t>& alloc, const std::vector<std::int64_t>& freed,
                     const std::vector<double>& compute_runtime, const std::vector<std::uint8_t>& role, const Adjacency& key_sources,
                     const Adjacency& key_dependents, Storage storage)
    : links_(std::move(storage.links)),
      items_(std::move(storage.items)),
      label_(std::move(storage.labels)),
      key_sources_(&key_sources),
      key_dependents_(&key_dependents),
      moved_(std::move(storage.moved)) {
  const std::size_t n = alloc.size();
  // Every field is written: the storage may hold a previous tree.
  items_.resize(n);
  links_.assign(n, Link{});
  label_.assign(n, 0);
  for (std::size_t v = 0; v < n; ++v)
    items_[v] = Item{.priority = priority_of(v), .alloc = alloc[v], .net = alloc[v] - freed[v], .runtime = compute_runtime[v], .role = role[v]};
  const std::int64_t spacing = kLabelEnd / static_cast<std::int64_t>(n + 1);
  for (std::size_t i = 0; i < order.size(); ++i) label_[order[i]] = spacing * static_cast<std::int64_t>(i + 1);
  for (NodeId v = 0; v < static_cast<NodeId>(n); ++v) items_[v].key = key_from_sources(v);
  // Linear-time build along the right spine (a Cartesian tree on priorities).
  std::vector<Index> spine;
  for (NodeId v : order) {
    Index last = kNone;
    while (!spine.empty() && items_[spine.back()].priority < items_[v].priority) {
      last = spine.back();
      spine.pop_back();
      pull(last);
    }
    links_[v].left = last;
    if (last != kNone) links_[last].parent = v;
    if (!spine.empty()) {
      links_[spine.back()].right = v;
      links_[v].parent = spine.back();
    }
    spine.push_back(v);
  }
  while (!spine.empty()) {
    pull(spine.back());
    if (spine.size() == 1) root_ = spine.back();
    spine.pop_back();
  }
}

OrderTree::Storage OrderTree::release() && {
  root_ = kNone;
  return {std::move(links_), std::move(items_), std::move(label_), std::move(moved_)};
}

void OrderTree::pull(Index t) {
  const Index l = links_[t].left, r = links_[t].right;
  links_[t].count = 1 + count(l) + count(r);
  Item& node = items_[t];
  const std::int64_t before = net_sum(l);
  node.net_sum = before + node.net + net_sum(r);
  std::int64_t best = before + node.alloc;
  std::int64_t lo = node.net, hi = node.net;
  double rt = node.runtime;
  std::uint8_t roles = node.role;
  std::int64_t key = node.key;
  if (l != kNone) {
    const Item& left = items_[l];
    key = std::min(key, left.min_key);
    best = std::max(best, left.max_post_alloc);
    lo = std::min(lo, left.min_net);
    hi = std::max(hi, left.max_net);
    rt = left.runtime_sum + rt;
    roles |= left.role_any;
    links_[l].parent = t;
  }
  if (r != kNone) {
    const Item& right = items_[r];
    best = std::max(best, before + node.net + right.max_post_alloc);
    lo = std::min(lo, right.min_net);
    hi = std::max(hi, right.max_net);
    rt = rt + right.runtime_sum;
    roles |= right.role_any;
    key = std::min(key, right.min_key);
    links_[r].parent = t;
  }
  node.min_key = key;
  node.max_post_alloc = best;
  node.min_net = lo;
  node.max_net = hi;
  node.runtime_sum = rt;
  node.role_any = roles;
}

std::pair<OrderTree::Index, OrderTree::Index> OrderTree::split(Index t, std::int32_t k) {
  if (t == kNone) return {kNone, kNone};
  links_[t].parent = kNone;
  if (count(links_[t].left) >= k) {
    auto [a, b] = split(links_[t].left, k);
    links_[t].left = b;
    pull(t);
    if (a != kNone) links_[a].parent = kNone;
    return {a, t};
  }
  auto [a, b] = split(links_[t].right, k - count(links_[t].left) - 1);
  links_[t].right = a;
  pull(t);
  if (b != kNone) links_[b].parent = kNone;
  return {t, b};
}

OrderTree::Index OrderTree::merge(Index a, Index b) {
  if (a == kNone) return b;
  if (b == kNone) return a;
  if (items_[a].priority > items_[b].priority) {
    links_[a].right = merge(links_[a].right, b);
    pull(a);
    links_[a].parent = kNone;
    return a;
  }
  links_[b].left = merge(a, links_[b].left);
  pull(b);
  links_[b].parent = kNone;
  return b;
}

OrderTree::Parts OrderTree::cut(std::int32_t first, std::int32_t last) {
  auto [before, rest] = split(root_, first);
  auto [middle, after] = split(rest, last - first + 1);
  root_ = kNone;
  return {before, middle, after};
}

void OrderTree::join(const Parts& p) { root_ = merge(merge(p.before, p.middle), p.after); }

std::int32_t OrderTree::position(NodeId v) const {
  std::int32_t pos = count(links_[v].left);
  for (Index t = v, p = links_[v].parent; p != kNone; t = p, p = links_[p].parent)
    if (links_[p].right == t) pos += count(links_[p].left) + 1;
  return pos;
}

NodeId OrderTree::at(std::int32_t pos) const {
  Index t = root_;
  while (t != kNone) {
    const std::int32_t l = count(links_[t].left);
    if (pos < l) {
      t = links_[t].left;
    } else if (pos == l) {
      return t;
    } else {
      pos -= l + 1;
      t = links_[t].right;
    }
  }
  return kNone;
}

std::int64_t OrderTree::memory_before(NodeId v) const {
  std::int64_t sum = net_sum(links_[v].left);
  for (Index t = v, p = links_[v].parent; p != kNone; t = p, p = links_[p].parent)
    if (links_[p].right == t) sum += net_sum(links_[p].left) + items_[p].net;
  return sum;
}

void OrderTree::set_freed(NodeId v, std::int64_t bytes) {
  items_[v].net = items_[v].alloc - bytes;
  for (Index t = v; t != kNone; t = links_[t].parent) pull(t);
}

void OrderTree::move_range(std::int32_t first, std::int32_t last, std::int32_t to) {
  if (to == first) return;
  // The moved nodes and the ones they pass form one span, cut out and
  // rotated on its own: the splits and merges inside it are only as deep as
  // its subtree, which for the usual short moves is shallow. (A treap's
  // shape depends only on its order and priorities, so it is the same tree
  // however it is reached.)
  const std::int32_t count = last - first + 1;
  Parts p = cut(std::min(first, to), std::max(last, to + count - 1));
  const bool earlier = to < first;
  auto [head, tail] = split(p.middle, earlier ? first - to : count);  // earlier: passed, moved; else moved, passed
  const Index moved = earlier ? tail : head, passed = earlier ? head : tail;
  moved_.clear();
  collect(moved, moved_);
  const NodeId before = earlier ? edge_node(p.before, true) : edge_node(passed, true);
  const NodeId after = earlier ? edge_node(passed, false) : edge_node(p.after, false);
  p.middle = earlier ? merge(moved, passed) : merge(passed, moved);
  join(p);
  // New labels between the neighbours' for the moved nodes only; when the
  // gap is too narrow, the smallest sparse enough window around them.
  std::int64_t lo = before == kNone ? 0 : label_[before];
  std::int64_t hi = after == kNone ? kLabelEnd : label_[after];
  const auto m = static_cast<std::int64_t>(moved_.size());
  // A move right before (after) the nodes moved last is most often one of a
  // chain into the same gap (sink_waits_iterative sinks wait after wait to
  // just before the one it moved last): the labels go to the end of the gap
  // next to them, taking 1/2^kChainShift of it, so the chain halves nothing
  // and the gap lasts for hundreds of such moves instead of about 40 (on
  // gen-dist fsdp --layers 6250, all passes: 4 relabelled windows instead of
  // 6756). Only the labels' values change, never their order.
  if (const std::int64_t part = (hi - lo) >> kChainShift; part / (m + 1) >= kMinLabelStep) {
    if (after != kNone && after == last_moved_first_) lo = hi - part;
    else if (before != kNone && before == last_moved_last_) hi = lo + part;
  }
  last_moved_first_ = moved_.front();
  last_moved_last_ = moved_.back();
  if ((hi - lo) / (m + 1) < kMinLabelStep) {
    relabel_around(to, to + static_cast<std::int32_t>(m) - 1);
    return;
  }
  const std::int64_t step = (hi - lo) / (m + 1);
  for (std::int64_t i = 0; i < m; ++i) label_[moved_[static_cast<std::size_t>(i)]] = lo + step * (i + 1);
  update_keys_of_dependents(moved_);
}

void OrderTree::relabel_around(std::int32_t first, std::int32_t last) {
  const std::int32_t n = size();
  for (std::int32_t reach = last - first + 2;; reach *= 2) {
    const std::int32_t lo_pos = std::max(0, first - reach), hi_pos = std::min(n - 1, last + reach);
    const std::int64_t lo = lo_pos > 0 ? label_[at(lo_pos - 1)] : 0;
    const std::int64_t hi = hi_pos < n - 1 ? label_[at(hi_pos + 1)] : kLabelEnd;
    const std::int64_t count = hi_pos - lo_pos + 1;
    // Leave the window sparse enough for many later moves into each of its
    // gaps (a move halves a gap): relabelling at the first density that
    // would do makes moves that keep landing in one place relabel every time.
    if ((hi - lo) / (count + 1) < kRelabelStep && !(lo_pos == 0 && hi_pos == n - 1)) continue;
    Parts p = cut(lo_pos, hi_pos);
    moved_.clear();
    collect(p.middle, moved_);
    join(p);
    const std::int64_t step = (hi - lo) / (count + 1);
    for (std::int64_t i = 0; i < count; ++i) label_[moved_[static_cast<std::size_t>(i)]] = lo + step * (i + 1);
    update_keys_of_dependents(moved_);
    return;
  }
}

NodeId OrderTree::edge_node(Index t, bool rightmost) const {
  if (t == kNone) return kNone;
  while ((rightmost ? links_[t].right : links_[t].left) != kNone) t = rightmost ? links_[t].right : links_[t].left;
  return t;
}

NodeId OrderTree::neighbour(NodeId v, bool after) const {
  // The first node of the subtree on that side, else the nearest ancestor
  // reached from the other side.
  if (const Index child = after ? links_[v].right : links_[v].left; child != kNone) return edge_node(child, !after);
  for (Index t = v, p = links_[v].parent; p != kNone; t = p, p = links_[p].parent)
    if ((after ? links_[p].left : links_[p].right) == t) return p;
  return kNone;
}

void OrderTree::collect(Index t, std::vector<NodeId>& out) const {
  std::vector<Index> stack;
  while (t != kNone || !stack.empty()) {
    while (t != kNone) {
      stack.push_back(t);
      t = links_[t].left;
    }
    t = stack.back();
    stack.pop_back();
    out.push_back(t);
    t = links_[t].right;
  }
}

std::int64_t OrderTree::key_from_sources(NodeId v) const {
  std::int64_t key = kNoKey;
  for (NodeId src : key_sources_->row(v)) key = std::min(key, label_[src]);
  return key;
}

// The keys of the sources' dependents from the sources' labels, then the
// subtree aggregates above every key that changed. A relabelled window
// changes many keys whose paths to the root share their upper parts: each
// node on the paths is pulled once, after its children on them and after
// every key is set (the aggregates pulling each path to the root in turn
// would leave: a node's aggregates are a function of its children's).
void OrderTree::update_keys_of_dependents(const std::vector<NodeId>& sources) {
  changed_.clear();
  for (NodeId source : sources)
    for (NodeId d : key_dependents_->row(source)) {
      const std::int64_t key = key_from_sources(d);
      if (key == items_[d].key) continue;
      items_[d].key = key;
      changed_.push_back(d);
    }
  if (changed_.size() <= 1) {
    for (Index d : changed_)
      for (Index t = d; t != kNone; t = links_[t].parent) pull(t);
    return;
  }
  if (mark_.size() != items_.size()) {
    mark_.assign(items_.size(), 0);
    marked_children_.assign(items_.size(), 0);
    pass_ = 0;
  }
  ++pass_;
  above_.clear();
  // Every ancestor of a marked node is marked (a walk stops at a marked node).
  for (Index d : changed_)
    for (Index t = d; t != kNone && mark_[t] != pass_; t = links_[t].parent) {
      mark_[t] = pass_;
      marked_children_[t] = 0;
      above_.push_back(t);
    }
  for (Index t : above_)
    if (const Index p = links_[t].parent; p != kNone) ++marked_children_[p];
  // Children first: a node is pulled once its marked children are.
  changed_.clear();  // now the nodes ready to pull
  for (Index t : above_)
    if (marked_children_[t] == 0) changed_.push_back(t);
  while (!changed_.empty()) {
    const Index t = changed_.back();
    changed_.pop_back();
    pull(t);
    if (const Index p = links_[t].parent; p != kNone && --marked_children_[p] == 0) changed_.push_back(p);
  }
}

double OrderTree::compute_sum(std::int32_t first, std::int32_t last) const {
  return first > last ? 0 : range_runtime_sum(root_, 0, first, last);
}

// Sum over the positions [first, last] of the subtree `t`, whose first node
// is at position `base`: whole subtrees inside the range by their sums, so
// O(depth) and the tree untouched.
double OrderTree::range_runtime_sum(Index t, std::int32_t base, std::int32_t first, std::int32_t last) const {
  double sum = 0;
  while (t != kNone) {
    const std::int32_t end = base + links_[t].count - 1;
    if (last < base || end < first) break;
    if (first <= base && end <= last) return sum + items_[t].runtime_sum;
    const std::int32_t own = base + count(links_[t].left);
    if (last < own) {
      t = links_[t].left;
    } else if (first > own) {
      base = own + 1;
      t = links_[t].right;
    } else {
      // The range holds this node: it splits into a suffix of the left subtree and a prefix of the right one.
      return sum + range_runtime_sum(links_[t].left, base, first, last) + items_[t].runtime + range_runtime_sum(links_[t].right, own + 1, first, last);
    }
  }
  return sum;
}

bool OrderTree::may_match(Index t, std::int64_t offset, const BlockQuery& q) const {
  return t != kNone && ((items_[t].role_any & q.role_mask) != 0 || items_[t].min_net < q.net_below || items_[t].max_net > q.net_above || items_[t].min_key < q.key_below ||
                        offset + items_[t].max_post_alloc > q.post_alloc_above);
}

bool OrderTree::matches(Index t, std::int64_t memory_before, const BlockQuery& q) const {
  return (items_[t].role & q.role_mask) != 0 || items_[t].net < q.net_below || items_[t].net > q.net_above || items_[t].key < q.key_below ||
         memory_before + items_[t].alloc > q.post_alloc_above;
}

// The last (or first) matching node of the subtree `t`, whose first node
// runs after `offset` bytes; `rank` gets its position within the subtree.
// The aggregates are exact, so a subtree that may match does: one descent.
OrderTree::Index OrderTree::find(Index t, std::int64_t offset, const BlockQuery& q, bool last, std::int32_t& rank) const {
  while (t != kNone) {
    const Index l = links_[t].left, r = links_[t].right;
    const std::int64_t before_t = offset + net_sum(l);
    if (last) {
      if (may_match(r, before_t + items_[t].net, q)) {
        rank += count(l) + 1;
        offset = before_t + items_[t].net;
        t = r;
        continue;
      }
      if (matches(t, before_t, q)) break;
      t = l;
    } else {
      if (may_match(l, offset, q)) {
        t = l;
        continue;
      }
      if (matches(t, before_t, q)) break;
      rank += count(l) + 1;
      offset = before_t + items_[t].net;
      t = r;
    }
  }
  if (t != kNone) rank += count(links_[t].left);
  return t;
}

std::int32_t OrderTree::nearest_match(std::int32_t first, std::int32_t last, const BlockQuery& q, bool from_end) const {
  return first > last ? -1 : find_in_range(root_, 0, 0, first, last, q, from_end);
}

// The last (or first) match at positions [first, last] of the subtree `t`,
// whose first node is at position `base` and runs after `offset` bytes. A
// subtree inside the range goes to `find` (one descent); only the nodes on
// the range's two boundary paths are visited otherwise, and nothing is
// restructured.
std::int32_t OrderTree::find_in_range(Index t, std::int32_t base, std::int64_t offset, std::int32_t first, std::int32_t last,
                                      const BlockQuery& q, bool from_end) const {
  if (t == kNone) return -1;
  const std::int32_t end = base + links_[t].count - 1;
  if (last < base || end < first || !may_match(t, offset, q)) return -1;
  if (first <= base && end <= last) {
    std::int32_t rank = 0;
    find(t, offset, q, from_end, rank);
    return base + rank;
  }
  const Index l = links_[t].left, r = links_[t].right;
  const std::int32_t own = base + count(l);
  const std::int64_t before_own = offset + net_sum(l);
  const auto in_left = [&] { return find_in_range(l, base, offset, first, last, q, from_end); };
  const auto in_right = [&] { return find_in_range(r, own + 1, before_own + items_[t].net, first, last, q, from_end); };
  const bool own_matches = own >= first && own <= last && matches(t, before_own, q);
  const std::int32_t nearer = from_end ? in_right() : in_left();
  if (nearer >= 0) return nearer;
  if (own_matches) return own;
  return from_end ? in_left() : in_right();
}

Order OrderTree::to_order() const {
  Order out;
  out.reserve(items_.size());
  collect(root_, out);
  return out;
}

}  // namespace schedlab::comms_detail
