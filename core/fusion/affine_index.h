// core/fusion internals: the affine index expressions of memory deps
// ("131072*d0 + d1 + 1024*d2"), enough of Inductor's sympy handling for loop
// reordering (MemoryDep.normalize_with_stride_order, decide_loop_order_to_match,
// normalize). Anything not affine in d0..dN (Min, //, indirect tmpN) is left
// alone: the callers then compare the text as given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/util/affine_index.h"

namespace schedlab::fusion_detail {

// The form itself and its parser are shared (core/util/affine_index.h);
// fusion reads reduction loops d0..dN (the default letters).
using schedlab::AffineIndex;
using schedlab::parse_affine_index;

// Which of the loop variables d0..d{num_vars-1} the text names (its free
// symbols among them), affine or not.
std::vector<bool> vars_used(const std::string& text, std::size_t num_vars);

// Sympy's printing of such a form: terms by variable, the constant last.
std::string format_affine_index(const AffineIndex& index);

// Loops ordered by stride (largest first), size-1 loops dropped and
// contiguous neighbours merged: equal results mean the two accesses differ
// only in loop order. Pairs of (stride, size) plus the offset.
struct StrideOrderForm {
  std::vector<std::pair<std::int64_t, std::int64_t>> loops;
  std::int64_t offset = 0;
  bool operator==(const StrideOrderForm&) const = default;
};
StrideOrderForm normalize_with_stride_order(const AffineIndex& index, const std::vector<std::int64_t>& sizes);

// The loop permutation that makes `self` iterate like `other` (new loop i is
// old loop order[i]), or nullopt when it cannot be decided (broadcasts, sizes
// 0 or 1, repeated or different strides), as MemoryDep.decide_loop_order_to_match.
std::optional<std::vector<int>> decide_loop_order_to_match(const AffineIndex& self, const std::vector<std::int64_t>& self_sizes,
                                                           const AffineIndex& other, const std::vector<std::int64_t>& other_sizes);

// MemoryDep.normalize: merge contiguous loops (no reordering), drop size-1 loops.
struct NormalForm {
  std::string index;
  std::vector<std::int64_t> sizes;
};
NormalForm normalize_loops(const AffineIndex& index, const std::vector<std::int64_t>& sizes);

}  // namespace schedlab::fusion_detail
