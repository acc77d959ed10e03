// The front end's part of a schedplan/1 report.
#include "core/fusion/fusion.h"

namespace schedlab {

bool needs_fusion(const Graph& g) { return g.is_pre_fusion() && g.operations.empty(); }

nlohmann::json front_end_to_json(const Graph& pre, const FrontEndResult& fe) {
  using nlohmann::json;
  json eliminated = json::array();
  for (NodeId v : fe.eliminated) eliminated.push_back(pre.nodes[v].name);
  json groups = json::array();
  std::size_t fused = 0;
  for (const auto& grp : fe.fusion.groups) {
    if (grp.size() < 2) continue;
    ++fused;
    json members = json::array();
    std::string name;
    for (NodeId v : grp) {
      members.push_back(pre.nodes[v].name);
      name += (name.empty() ? "" : "_") + pre.nodes[v].name;
    }
    groups.push_back({{"name", name}, {"members", std::move(members)}});
  }
  return {{"stages", {"dependencies", "dead_code", "fusion"}},
          {"input_nodes", pre.nodes.size()},
          {"eliminated", std::move(eliminated)},
          {"output_nodes", fe.fusion.groups.size()},
          {"fused_groups", std::move(groups)},
          {"rounds", fe.fusion.rounds},
          {"pairs_considered", fe.fusion.pairs_considered},
          {"refusals", fe.fusion.refusal_counts}};
}

}  // namespace schedlab
