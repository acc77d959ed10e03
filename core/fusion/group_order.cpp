#include "core/fusion/group_order.h"

#include <tuple>
#include <utility>

namespace schedlab::fusion_detail {

void GroupOrder::grow_to(Id id) {
  if (slot_.size() > static_cast<std::size_t>(id)) return;
  const std::size_t size = static_cast<std::size_t>(id) + 1;
  slot_.resize(size);
  prev_.resize(size, kEnd);
  next_.resize(size, kEnd);
}

void GroupOrder::reset(const std::vector<Id>& order) {
  first_ = last_ = kEnd;
  std::int64_t next = 0;
  for (Id id : order) {
    grow_to(id);
    slot_[static_cast<std::size_t>(id)].label = next;
    next += kSpacing;
    link_after(last_, id);
  }
}

std::uint32_t GroupOrder::next_epoch() {
  if (++epoch_ == 0) {  // wrapped: no mark may equal a later epoch by accident
    for (Slot& s : slot_) s.mark = 0;
    epoch_ = 1;
  }
  return epoch_;
}

void GroupOrder::unlink(Id id) {
  const Id p = prev_[static_cast<std::size_t>(id)], n = next_[static_cast<std::size_t>(id)];
  (p == kEnd ? first_ : next_[static_cast<std::size_t>(p)]) = n;
  (n == kEnd ? last_ : prev_[static_cast<std::size_t>(n)]) = p;
}

void GroupOrder::link_after(Id at, Id id) {
  const Id n = at == kEnd ? first_ : next_[static_cast<std::size_t>(at)];
  prev_[static_cast<std::size_t>(id)] = at;
  next_[static_cast<std::size_t>(id)] = n;
  (at == kEnd ? first_ : next_[static_cast<std::size_t>(at)]) = id;
  (n == kEnd ? last_ : prev_[static_cast<std::size_t>(n)]) = id;
}

void GroupOrder::renumber() {
  std::int64_t next = 0;
  for (Id id = first_; id != kEnd; id = next_[static_cast<std::size_t>(id)]) {
    slot_[static_cast<std::size_t>(id)].label = next;
    next += kSpacing;
  }
}

void GroupOrder::move_next_to(Id anchor, const std::vector<Id>& nodes, bool after) {
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

void GroupOrder::replace(Id kept, Id dropped, Id replacement) {
  grow_to(replacement);
  unlink(dropped);
  slot_[static_cast<std::size_t>(replacement)].label = label(kept);
  link_after(prev_[static_cast<std::size_t>(kept)], replacement);
  unlink(kept);
}

}  // namespace schedlab::fusion_detail
