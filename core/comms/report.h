// core/comms — the `comm` section of a plan (docs/schedplan-1.md): per pass,
// the per-collective statistics (ReorderInfo / SinkWaitInfo), the peaks the
// iterative passes tracked, and the simulated effect of the whole stage.
#pragma once

#include <nlohmann/json.hpp>

#include "core/comms/passes.h"
#include "core/sim/simulate.h"

namespace schedlab {

nlohmann::json overlap_stat_to_json(const Graph& g, const OverlapStat& s);
nlohmann::json comm_pipeline_to_json(const Graph& g, const CommPipelineResult& r, const Simulation& before, const Simulation& after);

}  // namespace schedlab
