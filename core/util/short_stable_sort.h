// core/util — a stable sort for the short lists sorted once per node (a
// node's unmet deps by buffer name): std::stable_sort allocates a buffer on
// every call, which on 100k-node graphs cost more than the comparisons.
#pragma once

#include <algorithm>
#include <iterator>
#include <utility>

namespace schedlab {

// Same result as std::stable_sort (both are stable); in place by insertion
// up to 16 elements, std::stable_sort beyond.
template <typename It, typename Less>
void short_stable_sort(It first, It last, Less less) {
  if (last - first > 16) {
    std::stable_sort(first, last, less);
    return;
  }
  for (It i = first; i != last; ++i) {
    auto value = std::move(*i);
    It j = i;
    for (; j != first && less(value, *std::prev(j)); --j) *j = std::move(*std::prev(j));
    *j = std::move(value);
  }
}

}  // namespace schedlab
