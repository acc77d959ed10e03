#include "core/fusion/group_order.h"

#include <iterator>
#include <tuple>
#include <utility>

namespace schedlab::fusion_detail {

void GroupOrder::reset(const std::vector<Id>& order) {
  by_label_.clear();
  std::int64_t next = 0;
  for (Id id : order) {
    set_label(id, next);
    next += kSpacing;
  }
}

void GroupOrder::set_label(Id id, std::int64_t label) {
  if (label_.size() <= static_cast<std::size_t>(id)) label_.resize(static_cast<std::size_t>(id) + 1, 0);
  label_[static_cast<std::size_t>(id)] = label;
  // reset() sets labels in increasing order, so the end is the right hint and
  // saves each search there; elsewhere a wrong hint costs what a plain insert does.
  by_label_.insert_or_assign(by_label_.end(), label, id);
}

void GroupOrder::renumber() {
  std::vector<Id> order;
  order.reserve(by_label_.size());
  for (const auto& entry : by_label_) order.push_back(entry.second);
  reset(order);
}

void GroupOrder::move_next_to(Id anchor, const std::vector<Id>& nodes, bool after) {
  if (nodes.empty()) return;
  for (Id id : nodes) by_label_.erase(label(id));
  // The open gap (lo, hi) beside the anchor; past either end of the order
  // there is always room.
  auto bounds = [&] {
    auto at = by_label_.find(label(anchor));
    std::int64_t lo, hi;
    if (after) {
      lo = at->first;
      auto next = std::next(at);
      hi = next == by_label_.end() ? lo + kSpacing : next->first;
    } else {
      hi = at->first;
      lo = at == by_label_.begin() ? hi - kSpacing : std::prev(at)->first;
    }
    return std::pair{lo, hi};
  };
  auto [lo, hi] = bounds();
  const auto count = static_cast<std::int64_t>(nodes.size());
  if (hi - lo <= count) {
    renumber();  // the moved nodes are out of the map: they get labels below
    std::tie(lo, hi) = bounds();
  }
  const std::int64_t step = (hi - lo) / (count + 1);
  for (std::int64_t i = 0; i < count; ++i) set_label(nodes[static_cast<std::size_t>(i)], lo + step * (i + 1));
}

void GroupOrder::replace(Id kept, Id dropped, Id replacement) {
  const std::int64_t at = label(kept);
  by_label_.erase(label(dropped));
  by_label_.erase(at);
  set_label(replacement, at);
}

}  // namespace schedlab::fusion_detail
