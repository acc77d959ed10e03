// Range maximum over a fixed array (sparse table): O(N log N) to build, O(1)
// per query. overlap_schedule's memory forecast and bucketing's memory
// budget ask it for the highest live bytes over a stretch of an order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace schedlab {

class RangeMax {
 public:
  RangeMax() = default;
  explicit RangeMax(const std::vector<std::int64_t>& a) {
    levels_.push_back(a);
    for (std::size_t w = 1; 2 * w <= a.size(); w *= 2) {
      const auto& prev = levels_.back();
      std::vector<std::int64_t> next(prev.size() - w);
      for (std::size_t i = 0; i < next.size(); ++i) next[i] = std::max(prev[i], prev[i + w]);
      levels_.push_back(std::move(next));
    }
  }
  // max of a[lo..hi], lo <= hi
  std::int64_t query(std::size_t lo, std::size_t hi) const {
    std::size_t level = 0;
    while ((std::size_t{2} << level) <= hi - lo + 1) ++level;
    return std::max(levels_[level][lo], levels_[level][hi + 1 - (std::size_t{1} << level)]);
  }

 private:
  std::vector<std::vector<std::int64_t>> levels_;
};

}  // namespace schedlab
