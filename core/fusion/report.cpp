// Whether a graph still needs the front end, and the name a fused group
// goes by (the report itself is written by core/io/plan_writer.cpp).
#include "core/fusion/fusion.h"

namespace schedlab {

bool needs_fusion(const Graph& g) { return g.is_pre_fusion() && g.operations.empty(); }

std::string fused_node_name(const Graph& g, const std::vector<NodeId>& members) {
  std::string name;
  for (NodeId m : members) {
    if (!name.empty()) name += '_';
    name += g.nodes[m].name;
  }
  return name;
}

}  // namespace schedlab
