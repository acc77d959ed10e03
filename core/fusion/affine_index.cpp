#include "core/fusion/affine_index.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <set>

#include "core/util/saturating.h"

namespace schedlab::fusion_detail {
namespace {

bool parse_int(const std::string& s, std::int64_t& out) {
  if (s.empty() || s.size() > 18) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  out = std::stoll(s);
  return true;
}

// Drops size-1 loops and loops the index does not use, and merges a loop
// into the next when they are contiguous (sizevars._simplify_loops). A
// product past 64 bits cannot equal a stride, and a merged size that would
// not fit is left unmerged: both are exact, neither wraps.
std::vector<std::pair<std::int64_t, std::int64_t>> simplify(std::vector<std::pair<std::int64_t, std::int64_t>> loops) {
  loops.erase(std::remove_if(loops.begin(), loops.end(), [](const auto& l) { return l.second == 1 || l.first == 0; }), loops.end());
  for (std::size_t i = 0; i + 1 < loops.size();) {
    std::int64_t span = 0, merged = 0;
    if (exact_mul(loops[i + 1].first, loops[i + 1].second, span) && loops[i].first == span &&
        exact_mul(loops[i + 1].second, loops[i].second, merged)) {
      loops[i + 1].second = merged;
      loops.erase(loops.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  return loops;
}

}  // namespace

std::vector<bool> vars_used(const std::string& text, std::size_t num_vars) {
  std::vector<bool> used(num_vars, false);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != 'd' || (i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_'))) continue;
    std::size_t j = i + 1;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j == i + 1 || (j < text.size() && (std::isalpha(static_cast<unsigned char>(text[j])) || text[j] == '_'))) continue;
    std::int64_t k = 0;
    if (parse_int(text.substr(i + 1, j - i - 1), k) && static_cast<std::size_t>(k) < num_vars) used[static_cast<std::size_t>(k)] = true;
    i = j - 1;
  }
  return used;
}

std::string format_affine_index(const AffineIndex& index) {
  std::string out;
  auto term = [&](std::int64_t value, const std::string& var) {
    if (value == 0) return;
    std::int64_t mag = value < 0 ? -value : value;
    if (out.empty()) out += value < 0 ? "-" : "";
    else out += value < 0 ? " - " : " + ";
    if (var.empty()) out += std::to_string(mag);
    else out += (mag == 1 ? "" : std::to_string(mag) + "*") + var;
  };
  for (std::size_t i = 0; i < index.strides.size(); ++i) term(index.strides[i], "d" + std::to_string(i));
  term(index.offset, "");
  return out.empty() ? "0" : out;
}

StrideOrderForm normalize_with_stride_order(const AffineIndex& index, const std::vector<std::int64_t>& sizes) {
  std::vector<std::size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), 0);
  // sorted(range(n), key=stride, reverse=True): stable, largest first.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return index.strides[a] > index.strides[b]; });
  std::vector<std::pair<std::int64_t, std::int64_t>> loops;
  for (std::size_t i : order) loops.emplace_back(index.strides[i], sizes[i]);
  return {simplify(std::move(loops)), index.offset};
}

std::optional<std::vector<int>> decide_loop_order_to_match(const AffineIndex& self, const std::vector<std::int64_t>& self_sizes,
                                                           const AffineIndex& other, const std::vector<std::int64_t>& other_sizes) {
  const std::size_t n = self_sizes.size();
  if (other_sizes.size() != n) return std::nullopt;
  // Every loop variable must appear (broadcasts give 0 strides).
  for (const auto* idx : {&self, &other})
    for (auto s : idx->strides)
      if (s == 0) return std::nullopt;
  for (const auto* sizes : {&self_sizes, &other_sizes})
    for (auto s : *sizes)
      if (s == 0 || s == 1) return std::nullopt;
  std::set<std::int64_t> a(self.strides.begin(), self.strides.end()), b(other.strides.begin(), other.strides.end());
  if (a.size() != n || b.size() != n || a != b) return std::nullopt;
  std::vector<int> order;
  for (auto s : other.strides)
    order.push_back(static_cast<int>(std::find(self.strides.begin(), self.strides.end(), s) - self.strides.begin()));
  return order;
}

NormalForm normalize_loops(const AffineIndex& index, const std::vector<std::int64_t>& sizes) {
  std::vector<std::pair<std::int64_t, std::int64_t>> loops;
  for (std::size_t i = 0; i < sizes.size(); ++i) loops.emplace_back(index.strides[i], sizes[i]);
  loops = simplify(std::move(loops));
  NormalForm out;
  AffineIndex merged;
  merged.offset = index.offset;
  for (const auto& [stride, size] : loops) {
    merged.strides.push_back(stride);
    out.sizes.push_back(size);
  }
  out.index = format_affine_index(merged);
  return out;
}

}  // namespace schedlab::fusion_detail
