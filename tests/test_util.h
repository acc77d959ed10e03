// Shared helpers for the suite: fixture paths and small graph builders.
#pragma once

#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/graph/loader.h"

namespace schedlab::test {

inline std::string data_path(const std::string& rel) { return std::string(SCHEDLAB_TEST_DATA) + "/" + rel; }

// Names of the nodes of `order`, for readable assertions.
inline std::vector<std::string> names(const Graph& g, const Order& order) {
  std::vector<std::string> out;
  for (NodeId v : order) out.push_back(g.nodes[v].name);
  return out;
}

}  // namespace schedlab::test
