// core/fusion internals: index expressions as sympy prints them (the `index`
// of a memory dep: "d1 + 384*(ModularIndexing(d2, 1, 14)) + 75264*((d0//196))"),
// evaluated at integer points, enough for Inductor's stride_hints, which the
// Triton backend's tiling reads (SIMDScheduling.candidate_tilings).
//
// Grammar: sums and differences of products; `*`, `//` (floor division),
// `**`, unary minus, parentheses; integers; ModularIndexing(x, div, mod)
// (floor(x / div) mod mod), FloorDiv(a, b), Min(...), Max(...). Symbols: loop
// variables d0..dN, indirect loads tmpN (0, as stride_hints substitutes),
// size symbols sN / psN (their hints), unbacked uN (no hint: a stride that
// depends on one is not known). Anything else does not parse.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace schedlab::fusion_detail {

// Size hints of backed symbols ("s50" -> 128), as the graph carries them.
using SymbolHints = std::map<std::string, std::int64_t, std::less<>>;

class IndexExpr {
 public:
  // nullopt when the text is outside the grammar above.
  static std::optional<IndexExpr> parse(const std::string& text);

  // Inductor's SizeVarAllocator.stride_hints(index, d0..d{num_vars-1}): per
  // variable, index(v = 1, others 0) - index(all 0). A stride that depends
  // on an unbacked symbol is 0 (stride_hints' fallback); nullopt when the
  // expression cannot be evaluated (a size symbol without a hint, a
  // variable numbered past num_vars, overflow, a division by zero).
  std::optional<std::vector<std::int64_t>> strides(std::size_t num_vars, const SymbolHints& hints) const;

  struct Node;  // the parsed tree (index_eval.cpp)

 private:
  std::shared_ptr<const Node> root_;
};

}  // namespace schedlab::fusion_detail
