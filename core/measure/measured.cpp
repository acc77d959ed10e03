// Checking a measured file against the graph it measured.
#include "core/measure/measured.h"

#include "core/graph/builder.h"
#include "core/util/error.h"

namespace schedlab {

void check_matches(const MeasuredGraph& m, const Graph& g, const std::string& where) {
  if (m.graph != g.name)
    throw Error(where + ": graph: measured " + quoted_name(m.graph) + ", but the graph beside it is " + quoted_name(g.name));
  for (std::size_t i = 0; i < m.kernels.size(); ++i)
    if (!m.kernels[i].node.empty() && g.find_node(m.kernels[i].node) == kNone)
      throw Error(where + ": kernels[" + std::to_string(i) + "].node: no node " + quoted_name(m.kernels[i].node) + " in graph " + quoted_name(g.name));
  for (const auto& [node, bytes] : m.workspace_bytes)
    if (g.find_node(node) == kNone)
      throw Error(where + ": " + member_place("workspace_bytes", node) + ": no node " + quoted_name(node) + " in graph " + quoted_name(g.name));
}

void apply_observed_workspaces(const MeasuredGraph& m, Graph& g) {
  for (const auto& [node, bytes] : m.workspace_bytes) g.nodes[g.find_node(node)].workspace_bytes = bytes;
}

}  // namespace schedlab
