#include "core/comms/report.h"

namespace schedlab {

using nlohmann::json;

json overlap_stat_to_json(const Graph& g, const OverlapStat& s) {
  return {{"node", g.nodes[s.node].name},
          {"comm_time_us", s.comm_time_us},
          {"comp_time_us", s.comp_time_us},
          {"initial_exposed_us", s.initial_exposed_us},
          {"final_exposed_us", s.final_exposed_us},
          {"improvement_us", s.initial_exposed_us - s.final_exposed_us},
          {"moves", s.moves},
          {"grouped", s.grouped},
          {"limiting_factor", s.limiting_factor}};
}

json comm_pipeline_to_json(const Graph& g, const CommPipelineResult& r, const Simulation& before, const Simulation& after) {
  json steps = json::array();
  for (const auto& step : r.steps) {
    json stats = json::array();
    for (const auto& s : step.result.stats) stats.push_back(overlap_stat_to_json(g, s));
    json j = {{"pass", step.pass}, {"stats", stats}};
    if (step.result.peak_before >= 0) j["peak_before"] = step.result.peak_before;
    if (step.result.peak_after >= 0) j["peak_after"] = step.result.peak_after;
    if (!step.result.added_fake_deps.empty()) j["added_fake_deps"] = step.result.added_fake_deps.size();
    steps.push_back(std::move(j));
  }
  return {{"passes", steps},
          {"exposed_comm_before_us", before.exposed_comm_us},
          {"exposed_comm_after_us", after.exposed_comm_us},
          {"step_time_before_us", before.step_time_us},
          {"step_time_after_us", after.step_time_us}};
}

}  // namespace schedlab
