// core/util — a segment tree over fixed slots holding (key, id) pairs, for
// "smallest key among the active slots in a range" in O(log n). Ties go to
// the smaller id, so callers get deterministic, reference-equal choices.
#pragma once

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace schedlab {

class MinTree {
 public:
  using Entry = std::pair<std::int64_t, std::int32_t>;  // (key, id)
  static constexpr Entry kEmpty{std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int32_t>::max()};

  explicit MinTree(std::int32_t slots) : size_(1) {
    while (size_ < slots) size_ <<= 1;
    tree_.assign(2 * static_cast<std::size_t>(size_), kEmpty);
  }

  void set(std::int32_t slot, Entry e) {
    std::size_t i = static_cast<std::size_t>(slot + size_);
    tree_[i] = e;
    for (i >>= 1; i >= 1; i >>= 1) tree_[i] = std::min(tree_[2 * i], tree_[2 * i + 1]);
  }
  void clear(std::int32_t slot) { set(slot, kEmpty); }

  // Smallest entry in slots [lo, hi); kEmpty when none is active.
  Entry min(std::int32_t lo, std::int32_t hi) const {
    Entry best = kEmpty;
    std::size_t l = static_cast<std::size_t>(lo + size_), r = static_cast<std::size_t>(hi + size_);
    while (l < r) {
      if (l & 1) best = std::min(best, tree_[l++]);
      if (r & 1) best = std::min(best, tree_[--r]);
      l >>= 1;
      r >>= 1;
    }
    return best;
  }

  // Lowest active slot, or -1.
  std::int32_t first_active() const {
    if (tree_[1] == kEmpty) return -1;
    std::size_t i = 1;
    while (i < static_cast<std::size_t>(size_)) i = (tree_[2 * i] != kEmpty) ? 2 * i : 2 * i + 1;
    return static_cast<std::int32_t>(i) - size_;
  }

 private:
  std::int32_t size_;
  std::vector<Entry> tree_;
};

}  // namespace schedlab
