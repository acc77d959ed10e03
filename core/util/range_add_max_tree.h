// core/util — a segment tree over a fixed array of int64 values with "add v
// to every value in [lo, hi]" and "largest value in [lo, hi]", both in
// O(log n): Inductor's SegmentedTree(values, operator.add, max, 0)
// (torch/_inductor/codegen/segmented_tree.py), which the wrapper's memory
// planning uses to price extending a buffer's life (EfficientPeakEstimate).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace schedlab {

class RangeAddMaxTree {
 public:
  explicit RangeAddMaxTree(const std::vector<std::int64_t>& values) : n_(static_cast<std::int32_t>(values.size())) {
    max_.assign(4 * std::max<std::size_t>(values.size(), 1), 0);
    pending_.assign(max_.size(), 0);
    if (n_ > 0) build(1, 0, n_ - 1, values);
  }

  // Largest value in [lo, hi] (inclusive); 0, the identity, for an empty range.
  std::int64_t max(std::int32_t lo, std::int32_t hi) { return lo > hi ? 0 : query(1, 0, n_ - 1, lo, hi); }
  // Adds `v` to every value in [lo, hi] (inclusive); nothing for an empty range.
  void add(std::int32_t lo, std::int32_t hi, std::int64_t v) {
    if (lo <= hi) update(1, 0, n_ - 1, lo, hi, v);
  }

 private:
  void build(std::size_t i, std::int32_t l, std::int32_t r, const std::vector<std::int64_t>& values) {
    if (l == r) {
      max_[i] = values[static_cast<std::size_t>(l)];
      return;
    }
    const std::int32_t m = l + (r - l) / 2;
    build(2 * i, l, m, values);
    build(2 * i + 1, m + 1, r, values);
    max_[i] = std::max(max_[2 * i], max_[2 * i + 1]);
  }
  void push(std::size_t i) {
    for (std::size_t c : {2 * i, 2 * i + 1}) {
      max_[c] += pending_[i];
      pending_[c] += pending_[i];
    }
    pending_[i] = 0;
  }
  std::int64_t query(std::size_t i, std::int32_t l, std::int32_t r, std::int32_t lo, std::int32_t hi) {
    if (hi < l || r < lo) return std::numeric_limits<std::int64_t>::min();
    if (lo <= l && r <= hi) return max_[i];
    push(i);
    const std::int32_t m = l + (r - l) / 2;
    return std::max(query(2 * i, l, m, lo, hi), query(2 * i + 1, m + 1, r, lo, hi));
  }
  void update(std::size_t i, std::int32_t l, std::int32_t r, std::int32_t lo, std::int32_t hi, std::int64_t v) {
    if (hi < l || r < lo) return;
    if (lo <= l && r <= hi) {
      max_[i] += v;
      pending_[i] += v;
      return;
    }
    push(i);
    const std::int32_t m = l + (r - l) / 2;
    update(2 * i, l, m, lo, hi, v);
    update(2 * i + 1, m + 1, r, lo, hi, v);
    max_[i] = std::max(max_[2 * i], max_[2 * i + 1]);
  }

  std::int32_t n_;
  std::vector<std::int64_t> max_, pending_;
};

}  // namespace schedlab
