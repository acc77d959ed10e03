// A topological order of the current (fused) nodes that survives fusions
// without renumbering: every node carries a 64-bit label, labels start far
// apart, and a fusion only moves the smaller of two sets into the gap next to
// one of the fused pair (see FusionEngine::fuse_two). A gap that runs out
// triggers one renumbering of the whole order.
//
// The live nodes are chained in label order through per-id links, so the
// gap beside a node is its neighbour's label and every change is O(1) per
// node moved (an ordered map did the same with a tree search and an
// allocation per node, 4-5 % of a 300k-node fusion).
//
// Each node's slot also holds what a search reads with the label at every
// step: a scratch mark and the caller's `Extra` (the fuser keeps its
// neighbour lists' spans there), so that a step costs one cache miss.
#pragma once

#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

namespace schedlab::fusion_detail {

struct NoExtra {};

template <typename Extra = NoExtra>
class GroupOrder {
 public:
  using Id = std::int32_t;

  // Labels in the order given, spaced kSpacing apart.
  void reset(const std::vector<Id>& order);
  std::int64_t label(Id id) const { return slot_[static_cast<std::size_t>(id)].label; }

  // A scratch mark per node, kept beside its label because the cycle
  // searches read both at every step (one cache miss instead of two). A node
  // is in the current set when its mark equals the epoch next_epoch returned.
  std::uint32_t next_epoch();
  std::uint32_t mark(Id id) const { return slot_[static_cast<std::size_t>(id)].mark; }
  void set_mark(Id id, std::uint32_t epoch) { slot_[static_cast<std::size_t>(id)].mark = epoch; }
  // Asks the cache for id's slot ahead of reading it.
  void prefetch(Id id) const { __builtin_prefetch(&slot_[static_cast<std::size_t>(id)]); }

  // The caller's data for id, kept across resets (value-initialized for a
  // new id; ids that never entered the order have none).
  Extra& extra(Id id) { return slot_[static_cast<std::size_t>(id)].extra; }
  bool has_slot(Id id) const { return static_cast<std::size_t>(id) < slot_.size(); }
  template <typename F>
  void for_each_extra(F f) {
    for (Slot& s : slot_) f(s.extra);
  }

  // Moves `nodes` (sorted by label) into the gap just before (or after)
  // `anchor`, keeping their relative order. None of them is `anchor`.
  void move_before(Id anchor, const std::vector<Id>& nodes) { move_next_to(anchor, nodes, false); }
  void move_after(Id anchor, const std::vector<Id>& nodes) { move_next_to(anchor, nodes, true); }

  // `replacement` takes the label of `kept`; `kept` and `dropped` leave the order.
  void replace(Id kept, Id dropped, Id replacement);

 private:
  static constexpr std::int64_t kSpacing = std::int64_t{1} << 32;
  static constexpr Id kEnd = -1;
  struct Slot {
    std::int64_t label = 0;
    std::uint32_t mark = 0;
    Extra extra{};
  };
  std::vector<Slot> slot_;           // by id (grown as ids appear)
  std::uint32_t epoch_ = 0;
  std::vector<Id> prev_, next_;      // by id: the live nodes' neighbours in label order (kEnd at the ends)
  Id first_ = kEnd, last_ = kEnd;

  void grow_to(Id id);
  void unlink(Id id);
  void link_after(Id at, Id id);  // at == kEnd: as the first node
  void move_next_to(Id anchor, const std::vector<Id>& nodes, bool after);
  void renumber();
};


template <typename Extra>
void GroupOrder<Extra>::grow_to(Id id) {
  if (slot_.size() > static_cast<std::size_t>(id)) return;
  const std::size_t size = static_cast<std::size_t>(id) + 1;
  slot_.resize(size);
  prev_.resize(size, kEnd);
  next_.resize(size, kEnd);
}

template <typename Extra>
void GroupOrder<Extra>::reset(const std::vector<Id>& order) {
  first_ = last_ = kEnd;
  std::int64_t next = 0;
  for (Id id : order) {
    grow_to(id);
    slot_[static_cast<std::size_t>(id)].label = next;
    next += kSpacing;
    link_after(last_, id);
  }
}

template <typename Extra>
std::uint32_t GroupOrder<Extra>::next_epoch() {
  if (++epoch_ == 0) {  // wrapped: no mark may equal a later epoch by accident
    for (Slot& s : slot_) s.mark = 0;
    epoch_ = 1;
  }
  return epoch_;
}

template <typename Extra>
void GroupOrder<Extra>::unlink(Id id) {
  const Id p = prev_[static_cast<std::size_t>(id)], n = next_[static_cast<std::size_t>(id)];
  (p == kEnd ? first_ : next_[static_cast<std::size_t>(p)]) = n;
  (n == kEnd ? last_ : prev_[static_cast<std::size_t>(n)]) = p;
}

template <typename Extra>
void GroupOrder<Extra>::link_after(Id at, Id id) {
  const Id n = at == kEnd ? first_ : next_[static_cast<std::size_t>(at)];
  prev_[static_cast<std::size_t>(id)] = at;
  next_[static_cast<std::size_t>(id)] = n;
  (at == kEnd ? first_ : next_[static_cast<std::size_t>(at)]) = id;
  (n == kEnd ? last_ : prev_[static_cast<std::size_t>(n)]) = id;
}

template <typename Extra>
void GroupOrder<Extra>::renumber() {
  std::int64_t next = 0;
  for (Id id = first_; id != kEnd; id = next_[static_cast<std::size_t>(id)]) {
    slot_[static_cast<std::size_t>(id)].label = next;
    next += kSpacing;
  }
}

template <typename Extra>
void GroupOrder<Extra>::move_next_to(Id anchor, const std::vector<Id>& nodes, bool after) {
  if (nodes.empty()) return;
  for (Id id : nodes) unlink(id);
  // The open gap (lo, hi) beside the anchor, between it and its neighbour
  // on that side; past either end of the order there is always room.
  auto bounds = [&] {
    const std::int64_t at = label(anchor);
    if (after) {
      const Id n = next_[static_cast<std::size_t>(anchor)];
      return std::pair{at, n == kEnd ? at + kSpacing : label(n)};
    }
    const Id p = prev_[static_cast<std::size_t>(anchor)];
    return std::pair{p == kEnd ? at - kSpacing : label(p), at};
  };
  auto [lo, hi] = bounds();
  const auto count = static_cast<std::int64_t>(nodes.size());
  if (hi - lo <= count) {
    renumber();  // the moved nodes are unlinked: they get labels below
    std::tie(lo, hi) = bounds();
  }
  const std::int64_t step = (hi - lo) / (count + 1);
  Id at = after ? anchor : prev_[static_cast<std::size_t>(anchor)];
  for (std::int64_t i = 0; i < count; ++i) {
    const Id id = nodes[static_cast<std::size_t>(i)];
    slot_[static_cast<std::size_t>(id)].label = lo + step * (i + 1);
    link_after(at, id);
    at = id;
  }
}

template <typename Extra>
void GroupOrder<Extra>::replace(Id kept, Id dropped, Id replacement) {
  grow_to(replacement);
  unlink(dropped);
  slot_[static_cast<std::size_t>(replacement)].label = label(kept);
  link_after(prev_[static_cast<std::size_t>(kept)], replacement);
  unlink(kept);
}


}  // namespace schedlab::fusion_detail
