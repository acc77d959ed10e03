// core/util — the one "is this order a permutation of all nodes" check:
// every pass, estimator and simulation that takes an order validates it
// here and gets each node's position back.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace schedlab {

// Position of each of the `num_nodes` nodes in `order`; nullopt unless
// `order` holds every node in 0..num_nodes-1 exactly once.
inline std::optional<std::vector<std::int32_t>> positions_in_permutation(const std::vector<std::int32_t>& order, std::int32_t num_nodes) {
  if (static_cast<std::int64_t>(order.size()) != num_nodes) return std::nullopt;
  std::vector<std::int32_t> position(static_cast<std::size_t>(num_nodes), -1);
  for (std::int32_t i = 0; i < num_nodes; ++i) {
    const std::int32_t v = order[static_cast<std::size_t>(i)];
    if (v < 0 || v >= num_nodes || position[static_cast<std::size_t>(v)] != -1) return std::nullopt;
    position[static_cast<std::size_t>(v)] = i;
  }
  return position;
}

}  // namespace schedlab
