// core/util — affine index expressions as Inductor prints a memory dep's
// `index` ("131072*d0 + d1 + 1024*d2": an integer coefficient per loop
// variable, and an offset). Fusion's loop reordering and memory as
// executed's storage extents read them; anything not affine (Min, //,
// ModularIndexing, indirect tmpN, size symbols) is no AffineIndex.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace schedlab {

struct AffineIndex {
  std::vector<std::int64_t> strides;  // per loop variable 0..N-1 (0: unused)
  std::int64_t offset = 0;
};

// nullopt when the text is not an affine form over the loop variables
// 0..num_vars-1, each named by a letter of `loop_letters` and its number
// (Inductor names pointwise loops cK and reduction loops dK; a dep's index
// uses one kind).
std::optional<AffineIndex> parse_affine_index(std::string_view text, std::size_t num_vars, std::string_view loop_letters = "d");

}  // namespace schedlab
