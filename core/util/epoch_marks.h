// core/util — scratch marks cleared in O(1): an item is "in" the current set
// when its mark equals the current epoch, so starting a new set only bumps
// the epoch. The marks are zeroed only when the 32-bit epoch wraps.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace schedlab {

// Starts a new set over `marks` and returns its epoch (never 0, the value of
// a mark never set).
inline std::uint32_t next_epoch(std::vector<std::uint32_t>& marks, std::uint32_t& epoch) {
  if (++epoch == 0) {
    std::fill(marks.begin(), marks.end(), 0);
    epoch = 1;
  }
  return epoch;
}

}  // namespace schedlab
