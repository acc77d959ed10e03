// core/util — saturating 64-bit arithmetic for values taken from a file
// (sizes, strides, byte counts) where a result past the range must neither
// wrap (undefined for signed integers) nor stop the pass: it sticks at the
// bound, which compares as "larger than anything real".
#pragma once

#include <cstdint>
#include <limits>

namespace schedlab {

inline std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

inline std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return (a < 0) != (b < 0) ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
}

// Exact arithmetic or nothing: false when the result does not fit.
inline bool exact_add(std::int64_t a, std::int64_t b, std::int64_t& out) { return !__builtin_add_overflow(a, b, &out); }
inline bool exact_mul(std::int64_t a, std::int64_t b, std::int64_t& out) { return !__builtin_mul_overflow(a, b, &out); }
// The smallest multiple of `unit` (> 0) at or above `v`: false when `v` is
// negative or the multiple does not fit.
inline bool exact_round_up(std::int64_t v, std::int64_t unit, std::int64_t& out) {
  if (v < 0 || v > std::numeric_limits<std::int64_t>::max() - (unit - 1)) return false;
  out = (v + unit - 1) / unit * unit;
  return true;
}

}  // namespace schedlab
