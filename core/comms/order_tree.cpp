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
                     const Adjacency& key_dependents)
    : key_sources_(&key_sources), key_dependents_(&key_dependents) {
  const std::size_t n = alloc.size();
  left_.assign(n, kNone);
  right_.assign(n, kNone);
  parent_.assign(n, kNone);
  priority_.resize(n);
  alloc_ = alloc;
  net_.resize(n);
  runtime_ = compute_runtime;
  role_ = role;
  count_.assign(n, 1);
  net_sum_.resize(n);
  max_post_alloc_.resize(n);
  min_net_.resize(n);
  max_net_.resize(n);
  runtime_sum_.resize(n);
  role_any_.resize(n);
  min_key_.resize(n);
  label_.assign(n, 0);
  key_.assign(n, kNoKey);
  const std::int64_t spacing = kLabelEnd / static_cast<std::int64_t>(n + 1);
  for (std::size_t i = 0; i < order.size(); ++i) label_[order[i]] = spacing * static_cast<std::int64_t>(i + 1);
  for (NodeId v = 0; v < static_cast<NodeId>(n); ++v) key_[v] = key_from_sources(v);
  for (std::size_t v = 0; v < n; ++v) {
    priority_[v] = priority_of(v);
    net_[v] = alloc[v] - freed[v];
  }
  // Linear-time build along the right spine (a Cartesian tree on priorities).
  std::vector<Index> spine;
  for (NodeId v : order) {
    Index last = kNone;
    while (!spine.empty() && priority_[spine.back()] < priority_[v]) {
      last = spine.back();
      spine.pop_back();
      pull(last);
    }
    left_[v] = last;
    if (last != kNone) parent_[last] = v;
    if (!spine.empty()) {
      right_[spine.back()] = v;
      parent_[v] = spine.back();
    }
    spine.push_back(v);
  }
  while (!spine.empty()) {
    pull(spine.back());
    if (spine.size() == 1) root_ = spine.back();
    spine.pop_back();
  }
}

void OrderTree::pull(Index t) {
  const Index l = left_[t], r = right_[t];
  count_[t] = 1 + count(l) + count(r);
  const std::int64_t before = net_sum(l);
  net_sum_[t] = before + net_[t] + net_sum(r);
  std::int64_t best = before + alloc_[t];
  std::int64_t lo = net_[t], hi = net_[t];
  double rt = runtime_[t];
  std::uint8_t roles = role_[t];
  std::int64_t key = key_[t];
  if (l != kNone) {
    key = std::min(key, min_key_[l]);
    best = std::max(best, max_post_alloc_[l]);
    lo = std::min(lo, min_net_[l]);
    hi = std::max(hi, max_net_[l]);
    rt = runtime_sum_[l] + rt;
    roles |= role_any_[l];
    parent_[l] = t;
  }
  if (r != kNone) {
    best = std::max(best, before + net_[t] + max_post_alloc_[r]);
    lo = std::min(lo, min_net_[r]);
    hi = std::max(hi, max_net_[r]);
    rt = rt + runtime_sum_[r];
    roles |= role_any_[r];
    key = std::min(key, min_key_[r]);
    parent_[r] = t;
  }
  min_key_[t] = key;
  max_post_alloc_[t] = best;
  min_net_[t] = lo;
  max_net_[t] = hi;
  runtime_sum_[t] = rt;
  role_any_[t] = roles;
}

std::pair<OrderTree::Index, OrderTree::Index> OrderTree::split(Index t, std::int32_t k) {
  if (t == kNone) return {kNone, kNone};
  parent_[t] = kNone;
  if (count(left_[t]) >= k) {
    auto [a, b] = split(left_[t], k);
    left_[t] = b;
    pull(t);
    if (a != kNone) parent_[a] = kNone;
    return {a, t};
  }
  auto [a, b] = split(right_[t], k - count(left_[t]) - 1);
  right_[t] = a;
  pull(t);
  if (b != kNone) parent_[b] = kNone;
  return {t, b};
}

OrderTree::Index OrderTree::merge(Index a, Index b) {
  if (a == kNone) return b;
  if (b == kNone) return a;
  if (priority_[a] > priority_[b]) {
    right_[a] = merge(right_[a], b);
    pull(a);
    parent_[a] = kNone;
    return a;
  }
  left_[b] = merge(a, left_[b]);
  pull(b);
  parent_[b] = kNone;
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
  std::int32_t pos = count(left_[v]);
  for (Index t = v; parent_[t] != kNone; t = parent_[t])
    if (right_[parent_[t]] == t) pos += count(left_[parent_[t]]) + 1;
  return pos;
}

NodeId OrderTree::at(std::int32_t pos) const {
  Index t = root_;
  while (t != kNone) {
    const std::int32_t l = count(left_[t]);
    if (pos < l) {
      t = left_[t];
    } else if (pos == l) {
      return t;
    } else {
      pos -= l + 1;
      t = right_[t];
    }
  }
  return kNone;
}

std::int64_t OrderTree::memory_before(NodeId v) const {
  std::int64_t sum = net_sum(left_[v]);
  for (Index t = v; parent_[t] != kNone; t = parent_[t]) {
    const Index p = parent_[t];
    if (right_[p] == t) sum += net_sum(left_[p]) + net_[p];
  }
  return sum;
}

void OrderTree::set_freed(NodeId v, std::int64_t bytes) {
  net_[v] = alloc_[v] - bytes;
  for (Index t = v; t != kNone; t = parent_[t]) pull(t);
}

void OrderTree::move_range(std::int32_t first, std::int32_t last, std::int32_t to) {
  Parts p = cut(first, last);
  moved_.clear();
  collect(p.middle, moved_);
  const Index rest = merge(p.before, p.after);
  auto [a, b] = split(rest, to);
  const NodeId before = edge_node(a, true), after = edge_node(b, false);
  root_ = merge(merge(a, p.middle), b);
  // New labels between the neighbours' for the moved nodes only; when the
  // gap is too narrow, the smallest sparse enough window around them.
  const std::int64_t lo = before == kNone ? 0 : label_[before];
  const std::int64_t hi = after == kNone ? kLabelEnd : label_[after];
  const auto m = static_cast<std::int64_t>(moved_.size());
  if ((hi - lo) / (m + 1) < kMinLabelStep) {
    relabel_around(to, to + static_cast<std::int32_t>(m) - 1);
    return;
  }
  const std::int64_t step = (hi - lo) / (m + 1);
  for (std::int64_t i = 0; i < m; ++i) label_[moved_[static_cast<std::size_t>(i)]] = lo + step * (i + 1);
  for (NodeId v : moved_) update_keys_of_dependents(v);
}

void OrderTree::relabel_around(std::int32_t first, std::int32_t last) {
  const std::int32_t n = size();
  for (std::int32_t reach = last - first + 2;; reach *= 2) {
    const std::int32_t lo_pos = std::max(0, first - reach), hi_pos = std::min(n - 1, last + reach);
    const std::int64_t lo = lo_pos > 0 ? label_[at(lo_pos - 1)] : 0;
    const std::int64_t hi = hi_pos < n - 1 ? label_[at(hi_pos + 1)] : kLabelEnd;
    const std::int64_t count = hi_pos - lo_pos + 1;
    // Leave the window at least twice as sparse as a move needs.
    if ((hi - lo) / (count + 1) < 2 * kMinLabelStep && !(lo_pos == 0 && hi_pos == n - 1)) continue;
    Parts p = cut(lo_pos, hi_pos);
    moved_.clear();
    collect(p.middle, moved_);
    join(p);
    const std::int64_t step = (hi - lo) / (count + 1);
    for (std::int64_t i = 0; i < count; ++i) label_[moved_[static_cast<std::size_t>(i)]] = lo + step * (i + 1);
    for (NodeId v : moved_) update_keys_of_dependents(v);
    return;
  }
}

NodeId OrderTree::edge_node(Index t, bool rightmost) const {
  if (t == kNone) return kNone;
  while ((rightmost ? right_[t] : left_[t]) != kNone) t = rightmost ? right_[t] : left_[t];
  return t;
}

NodeId OrderTree::neighbour(NodeId v, bool after) const {
  // The first node of the subtree on that side, else the nearest ancestor
  // reached from the other side.
  if (const Index child = after ? right_[v] : left_[v]; child != kNone) return edge_node(child, !after);
  for (Index t = v; parent_[t] != kNone; t = parent_[t])
    if ((after ? left_[parent_[t]] : right_[parent_[t]]) == t) return parent_[t];
  return kNone;
}

void OrderTree::collect(Index t, std::vector<NodeId>& out) const {
  std::vector<Index> stack;
  while (t != kNone || !stack.empty()) {
    while (t != kNone) {
      stack.push_back(t);
      t = left_[t];
    }
    t = stack.back();
    stack.pop_back();
    out.push_back(t);
    t = right_[t];
  }
}

std::int64_t OrderTree::key_from_sources(NodeId v) const {
  std::int64_t key = kNoKey;
  for (NodeId src : key_sources_->row(v)) key = std::min(key, label_[src]);
  return key;
}

void OrderTree::update_keys_of_dependents(NodeId source) {
  for (NodeId d : key_dependents_->row(source)) {
    const std::int64_t key = key_from_sources(d);
    if (key == key_[d]) continue;
    key_[d] = key;
    for (Index t = d; t != kNone; t = parent_[t]) pull(t);
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
    const std::int32_t end = base + count_[t] - 1;
    if (last < base || end < first) break;
    if (first <= base && end <= last) return sum + runtime_sum_[t];
    const std::int32_t own = base + count(left_[t]);
    if (last < own) {
      t = left_[t];
    } else if (first > own) {
      base = own + 1;
      t = right_[t];
    } else {
      // The range holds this node: it splits into a suffix of the left subtree and a prefix of the right one.
      return sum + range_runtime_sum(left_[t], base, first, last) + runtime_[t] + range_runtime_sum(right_[t], own + 1, first, last);
    }
  }
  return sum;
}

bool OrderTree::may_match(Index t, std::int64_t offset, const BlockQuery& q) const {
  return t != kNone && ((role_any_[t] & q.role_mask) != 0 || min_net_[t] < q.net_below || max_net_[t] > q.net_above || min_key_[t] < q.key_below ||
                        offset + max_post_alloc_[t] > q.post_alloc_above);
}

bool OrderTree::matches(Index t, std::int64_t memory_before, const BlockQuery& q) const {
  return (role_[t] & q.role_mask) != 0 || net_[t] < q.net_below || net_[t] > q.net_above || key_[t] < q.key_below ||
         memory_before + alloc_[t] > q.post_alloc_above;
}

// The last (or first) matching node of the subtree `t`, whose first node
// runs after `offset` bytes; `rank` gets its position within the subtree.
// The aggregates are exact, so a subtree that may match does: one descent.
OrderTree::Index OrderTree::find(Index t, std::int64_t offset, const BlockQuery& q, bool last, std::int32_t& rank) const {
  while (t != kNone) {
    const Index l = left_[t], r = right_[t];
    const std::int64_t before_t = offset + net_sum(l);
    if (last) {
      if (may_match(r, before_t + net_[t], q)) {
        rank += count(l) + 1;
        offset = before_t + net_[t];
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
      offset = before_t + net_[t];
      t = r;
    }
  }
  if (t != kNone) rank += count(left_[t]);
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
  const std::int32_t end = base + count_[t] - 1;
  if (last < base || end < first || !may_match(t, offset, q)) return -1;
  if (first <= base && end <= last) {
    std::int32_t rank = 0;
    find(t, offset, q, from_end, rank);
    return base + rank;
  }
  const Index l = left_[t], r = right_[t];
  const std::int32_t own = base + count(l);
  const std::int64_t before_own = offset + net_sum(l);
  const auto in_left = [&] { return find_in_range(l, base, offset, first, last, q, from_end); };
  const auto in_right = [&] { return find_in_range(r, own + 1, before_own + net_[t], first, last, q, from_end); };
  const bool own_matches = own >= first && own <= last && matches(t, before_own, q);
  const std::int32_t nearer = from_end ? in_right() : in_left();
  if (nearer >= 0) return nearer;
  if (own_matches) return own;
  return from_end ? in_left() : in_right();
}

Order OrderTree::to_order() const {
  Order out;
  out.reserve(left_.size());
  collect(root_, out);
  return out;
}

}  // namespace schedlab::comms_detail
