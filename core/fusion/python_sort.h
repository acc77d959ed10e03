// core/fusion internals: Python's list.sort, for orders that must match
// Inductor's even when its comparison is not a strict weak order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace schedlab::fusion_detail {

// Python's list.sort(reverse=True) with a `less` that need not be a strict
// weak order (FusionScore's is not): reverse, sort ascending, reverse back.
// Below 64 items CPython's timsort is one natural run extended by binary
// insertion; that is reproduced comparison for comparison. Longer lists use
// a stable merge sort, identical whenever `less` is consistent on them.
template <typename T, typename Less>
void python_sort_descending(std::vector<T>& v, Less less) {
  std::reverse(v.begin(), v.end());
  const std::size_t n = v.size();
  if (n >= 64) {
    std::stable_sort(v.begin(), v.end(), less);
  } else if (n >= 2) {
    std::size_t run = 2;  // count_run
    if (less(v[1], v[0])) {
      while (run < n && less(v[run], v[run - 1])) ++run;
      std::reverse(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(run));
    } else {
      while (run < n && !less(v[run], v[run - 1])) ++run;
    }
    for (std::size_t start = run; start < n; ++start) {  // binarysort
      T pivot = std::move(v[start]);
      std::size_t l = 0, r = start;
      while (l < r) {
        std::size_t p = l + ((r - l) >> 1);
        if (less(pivot, v[p])) r = p;
        else l = p + 1;
      }
      std::move_backward(v.begin() + static_cast<std::ptrdiff_t>(l), v.begin() + static_cast<std::ptrdiff_t>(start),
                         v.begin() + static_cast<std::ptrdiff_t>(start) + 1);
      v[l] = std::move(pivot);
    }
  }
  std::reverse(v.begin(), v.end());
}


}  // namespace schedlab::fusion_detail
