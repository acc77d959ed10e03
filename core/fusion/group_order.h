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
#pragma once

#include <cstdint>
#include <vector>

namespace schedlab::fusion_detail {

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
  // Asks the cache for id's label and mark ahead of reading them.
  void prefetch(Id id) const { __builtin_prefetch(&slot_[static_cast<std::size_t>(id)]); }

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

}  // namespace schedlab::fusion_detail
