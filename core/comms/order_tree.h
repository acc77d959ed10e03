// core/comms — an order of nodes as a balanced sequence (an implicit treap
// keyed by position) with per-subtree sums and extremes, so that the
// iterative passes can move a group of nodes any distance in O(log N), read a
// node's position and the memory before it in O(log N), and find the nearest
// node in a direction that blocks a move (a role, a net allocation or a
// memory level over a limit) without walking the nodes in between.
//
// Each node also has a label that grows along the order (order maintenance:
// only moved nodes are relabelled) and a key: the smallest label among its
// key sources (for a collective, its waits), so that "a collective whose
// wait comes before X" is one descent too.
//
// Memory follows Inductor's curr_memory bookkeeping: each node has
// `alloc` (bytes allocated at its step) and `net` (alloc minus what it
// frees); the memory after a node's allocations is the sum of `net` over
// the nodes before it plus its own `alloc`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/graph/graph.h"
#include "core/util/adjacency.h"

namespace schedlab::comms_detail {

// What makes a node block a move; a node matches when any part does.
struct BlockQuery {
  std::uint8_t role_mask = 0;                                          // any of these role bits
  std::int64_t net_below = std::numeric_limits<std::int64_t>::min();   // net < this
  std::int64_t net_above = std::numeric_limits<std::int64_t>::max();   // net > this
  std::int64_t post_alloc_above = std::numeric_limits<std::int64_t>::max();  // memory after its allocations > this
  std::int64_t key_below = std::numeric_limits<std::int64_t>::min();  // key < this (see OrderTree::label)
};

class OrderTree {
  static constexpr std::int64_t kNoKey = std::numeric_limits<std::int64_t>::max();
  using Index = std::int32_t;  // a NodeId, or kNone for the empty tree

  // The tree's shape, apart from the rest: walks from a node to the root
  // (position, neighbours) read these alone, four nodes to a cache line.
  struct Link {
    Index left = kNone, right = kNone, parent = kNone;
    std::int32_t count = 1;  // nodes in the subtree
  };
  // One node's subtree aggregates and its own values side by side: a move
  // or a query reads O(log N) of them. The aggregates fill the first cache
  // line (with the priority, which merges compare), so reading a child's
  // costs one line; the node's own values are in the second.
  struct alignas(64) Item {
    // Subtree aggregates; max_post_alloc is relative to the subtree's start.
    std::int64_t net_sum = 0, max_post_alloc = 0, min_net = 0, max_net = 0, min_key = kNoKey;
    double runtime_sum = 0;
    std::uint8_t role_any = 0;
    std::uint64_t priority = 0;
    std::int64_t alloc = 0, net = 0, key = kNoKey;
    double runtime = 0;
    std::uint8_t role = 0;
  };
  static_assert(offsetof(Item, priority) + sizeof(Item::priority) <= 64, "a child's aggregates and priority on one cache line");

 public:
  // A tree's arrays, handed to the next tree built by a caller that builds
  // many (overlap_schedule's runs of the iterative passes): at 100k nodes
  // they are 15 MB, and fresh memory costs a page fault per 4 KiB written.
  struct Storage {
    std::vector<Link> links;
    std::vector<Item> items;
    std::vector<std::int64_t> labels;
    std::vector<NodeId> moved;
  };

  // Per NodeId: bytes allocated, bytes freed, the runtime counted as compute
  // (0 for collectives), role bits, key sources and their reverse (the
  // nodes whose key each node is a source of; both must outlive the tree).
  // `order` is a permutation of the nodes.
  OrderTree(const Order& order, const std::vector<std::int64_t>& alloc, const std::vector<std::int64_t>& freed,
            const std::vector<double>& compute_runtime, const std::vector<std::uint8_t>& role, const Adjacency& key_sources,
            const Adjacency& key_dependents, Storage storage = {});
  // The arrays, for the next tree; this one is left empty.
  Storage release() &&;

  std::int32_t size() const { return static_cast<std::int32_t>(items_.size()); }
  std::int32_t position(NodeId v) const;
  NodeId at(std::int32_t pos) const;
  // The node right after (before) `v`; kNone at the end. O(1) on average.
  NodeId next(NodeId v) const { return neighbour(v, true); }
  NodeId prev(NodeId v) const { return neighbour(v, false); }
  // Memory before `v` runs; after its allocations; after its frees.
  std::int64_t memory_before(NodeId v) const;
  std::int64_t post_alloc(NodeId v) const { return memory_before(v) + items_[v].alloc; }
  std::int64_t post_free(NodeId v) const { return memory_before(v) + items_[v].net; }
  std::int64_t alloc(NodeId v) const { return items_[v].alloc; }
  std::int64_t freed(NodeId v) const { return items_[v].alloc - items_[v].net; }
  void set_freed(NodeId v, std::int64_t bytes);
  std::int64_t label(NodeId v) const { return label_[v]; }

  // Moves the nodes at positions [first, last] so that the first of them
  // lands at position `to` (counted in the order without them).
  void move_range(std::int32_t first, std::int32_t last, std::int32_t to);
  // Sum of compute runtimes over positions [first, last]; 0 when empty.
  double compute_sum(std::int32_t first, std::int32_t last) const;
  // The nearest position in [first, last] matching `q`: the last one, or
  // the first one; -1 when none.
  std::int32_t last_match(std::int32_t first, std::int32_t last, const BlockQuery& q) const { return nearest_match(first, last, q, true); }
  std::int32_t first_match(std::int32_t first, std::int32_t last, const BlockQuery& q) const { return nearest_match(first, last, q, false); }
  Order to_order() const;

 private:
  static constexpr std::int64_t kLabelEnd = std::int64_t{1} << 62;
  static constexpr std::int64_t kMinLabelStep = 2;
  static constexpr std::int64_t kRelabelStep = std::int64_t{1} << 20;  // the spacing a relabelled window gets
  static constexpr int kChainShift = 8;  // a chained move takes 1/256 of its gap (see move_range)

  struct Parts {
    Index before, middle, after;
  };

  std::int32_t nearest_match(std::int32_t first, std::int32_t last, const BlockQuery& q, bool from_end) const;
  std::int32_t find_in_range(Index t, std::int32_t base, std::int64_t offset, std::int32_t first, std::int32_t last, const BlockQuery& q,
                             bool from_end) const;
  double range_runtime_sum(Index t, std::int32_t base, std::int32_t first, std::int32_t last) const;
  void pull(Index t);
  std::pair<Index, Index> split(Index t, std::int32_t count);  // first `count` nodes, the rest
  Index merge(Index a, Index b);
  Parts cut(std::int32_t first, std::int32_t last);
  void join(const Parts& p);
  bool may_match(Index t, std::int64_t offset, const BlockQuery& q) const;
  bool matches(Index t, std::int64_t memory_before, const BlockQuery& q) const;
  Index find(Index t, std::int64_t offset, const BlockQuery& q, bool last, std::int32_t& rank) const;
  void relabel_around(std::int32_t first, std::int32_t last);
  void update_keys_of_dependents(const std::vector<NodeId>& sources);
  std::int64_t key_from_sources(NodeId v) const;
  NodeId edge_node(Index t, bool rightmost) const;
  NodeId neighbour(NodeId v, bool after) const;
  void collect(Index t, std::vector<NodeId>& out) const;
  std::int32_t count(Index t) const { return t == kNone ? 0 : links_[t].count; }
  std::int64_t net_sum(Index t) const { return t == kNone ? 0 : items_[t].net_sum; }

  Index root_ = kNone;
  std::vector<Link> links_;
  std::vector<Item> items_;
  std::vector<std::int64_t> label_;
  const Adjacency* key_sources_;
  const Adjacency* key_dependents_;
  std::vector<NodeId> moved_;  // scratch
  NodeId last_moved_first_ = kNone, last_moved_last_ = kNone;  // of the last move_range
  // Scratch of update_keys_of_dependents: the nodes whose key changed, the
  // nodes above them, and per node the pass that marked it and how many of
  // its children are marked and not yet pulled.
  std::vector<Index> changed_, above_;
  std::vector<std::uint32_t> mark_, marked_children_;
  std::uint32_t pass_ = 0;
};

}  // namespace schedlab::comms_detail
