// core/util — compressed adjacency lists (CSR): one flat array per relation
// instead of a vector per row, so large graphs stay cache-friendly.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace schedlab {

class Adjacency {
 public:
  Adjacency() = default;

  // Builds rows from (row, item) pairs, keeping the pairs' order within a row.
  static Adjacency from_pairs(std::int32_t rows, const std::vector<std::pair<std::int32_t, std::int32_t>>& pairs) {
    Adjacency a;
    a.offsets_.assign(static_cast<std::size_t>(rows) + 1, 0);
    for (auto& [r, _] : pairs) ++a.offsets_[static_cast<std::size_t>(r) + 1];
    for (std::size_t i = 1; i < a.offsets_.size(); ++i) a.offsets_[i] += a.offsets_[i - 1];
    a.items_.resize(pairs.size());
    std::vector<std::int32_t> fill(a.offsets_.begin(), a.offsets_.end() - 1);
    for (auto& [r, v] : pairs) a.items_[static_cast<std::size_t>(fill[static_cast<std::size_t>(r)]++)] = v;
    return a;
  }

  // The same rows, each sorted ascending without repeats: what sorting the
  // pairs first would give, at the cost of sorting each (short) row alone.
  static Adjacency sorted_unique_rows(std::int32_t rows, const std::vector<std::pair<std::int32_t, std::int32_t>>& pairs) {
    Adjacency a = from_pairs(rows, pairs);
    std::int32_t kept = 0;
    for (std::size_t r = 0; r + 1 < a.offsets_.size(); ++r) {
      auto first = a.items_.begin() + a.offsets_[r], last = a.items_.begin() + a.offsets_[r + 1];
      std::sort(first, last);
      const auto end = std::unique(first, last);
      a.offsets_[r] = kept;
      kept = static_cast<std::int32_t>(std::copy(first, end, a.items_.begin() + kept) - a.items_.begin());
    }
    a.offsets_.back() = kept;
    a.items_.resize(static_cast<std::size_t>(kept));
    return a;
  }

  std::span<const std::int32_t> row(std::int32_t r) const {
    auto b = static_cast<std::size_t>(offsets_[static_cast<std::size_t>(r)]);
    auto e = static_cast<std::size_t>(offsets_[static_cast<std::size_t>(r) + 1]);
    return {items_.data() + b, e - b};
  }
  std::int32_t degree(std::int32_t r) const {
    return offsets_[static_cast<std::size_t>(r) + 1] - offsets_[static_cast<std::size_t>(r)];
  }
  std::int32_t rows() const { return offsets_.empty() ? 0 : static_cast<std::int32_t>(offsets_.size() - 1); }
  std::size_t size() const { return items_.size(); }

 private:
  std::vector<std::int32_t> offsets_;
  std::vector<std::int32_t> items_;
};

}  // namespace schedlab
