// defer_stalled_compute (core/comms/defer_stalled_compute.cpp): a node that
// reads a late collective early moves, with what must follow it, past the
// compute that does not need the collective; never a longer simulated step
// than its input, never above the memory budget; and on the real
// fsdp_fwd_bwd step it finds the order that won on 4 x H200
// (docs/gpu-validation.md, "On session 20's lease").
#include <catch2/catch.hpp>

#include <string>

#include "core/comms/passes.h"
#include "core/cost/cost_model.h"
#include "core/io/graph_reader.h"
#include "core/plan/plan.h"
#include "core/sim/simulate.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {

using Names = std::vector<std::string>;

CommPipelineResult run_on(const Graph& g, const CommKnobs& k = {}) {
  const auto rt = estimate_runtimes_us(g, builtin_profile(kDefaultHardwareProfile));
  return run_comm_passes(g, g.baseline_order(), {"defer_stalled_compute"}, k, rt);
}

}  // namespace

TEST_CASE("defer_stalled_compute moves an early reader of a late collective past independent compute", "[comms][defer]") {
  const Graph g = load_graph_file(test::data_path("comms/early_reader.json"));
  const CommPipelineResult r = run_on(g);
  // The all-gather (50 us) stalls `early` at once; wait and matmul go after
  // the chain k1..k4 (80 us) that needs neither, just before z, which needs both.
  CHECK(test::names(g, r.order) == Names{"ag", "k1", "k2", "k3", "k4", "wait_ag", "early", "z"});
  const CommPassResult& pass = r.steps.at(0).result;
  CHECK(pass.step_before_us == Approx(145.0));  // stall 50, then 10 + 80 + 5
  CHECK(pass.step_after_us == Approx(95.0));    // the gather hidden under the chain
  REQUIRE(pass.stats.size() == 1);
  CHECK(pass.stats[0].initial_exposed_us == Approx(50.0));
  CHECK(pass.stats[0].final_exposed_us == Approx(0.0));
  CHECK(pass.stats[0].moves == 2);
  CHECK(pass.stats[0].limiting_factor == "None");
}

TEST_CASE("defer_stalled_compute keeps its input where a move would break the memory budget", "[comms][defer]") {
  const Graph g = load_graph_file(test::data_path("comms/early_reader.json"));
  CommKnobs k;
  k.overlap_schedule_memory_budget_mib = 0;  // no order fits: nothing moves
  const CommPipelineResult r = run_on(g, k);
  CHECK(r.order == g.baseline_order());
  const CommPassResult& pass = r.steps.at(0).result;
  CHECK(pass.step_after_us == pass.step_before_us);
  REQUIRE(pass.stats.size() == 1);
  CHECK(pass.stats[0].limiting_factor == "peak memory budget");
}

TEST_CASE("defer_stalled_compute leaves an order without stalls as it is", "[comms][defer]") {
  // overlap_small and two_collectives: whatever stalls there has nothing independent to pass.
  for (const char* name : {"comms/two_collectives.json", "comms/fsdp2_forward_two_layers.json"}) {
    INFO(name);
    const Graph g = load_graph_file(test::data_path(name));
    const CommPipelineResult r = run_on(g);
    const CommPassResult& pass = r.steps.at(0).result;
    CHECK(pass.step_after_us <= pass.step_before_us);
    if (pass.step_after_us == pass.step_before_us) CHECK(r.order == g.baseline_order());
  }
}

TEST_CASE("defer_stalled_compute never simulates a longer step, and keeps to the budget, on real graphs", "[comms][defer]") {
  const std::vector<std::string> graphs = test::real_graphs_with_collectives({"exported", "dist4/steps/run1"});
  REQUIRE(graphs.size() >= 12);
  for (const std::string& path : graphs) {
    INFO(path);
    const PlanResult r = test::plan_file(path, {"overlap_schedule_step", "defer_stalled_compute"}, "h100-sxm");
    const CommPassResult& step = r.comm->steps.at(0).result;
    const CommPassResult& defer = r.comm->steps.at(1).result;
    // It prices its input (overlap_schedule_step's order) and its own as the plan simulates them.
    CHECK(defer.step_before_us == Approx(step.step_after_us).epsilon(1e-12));
    CHECK(defer.step_after_us == Approx(r.simulation.step_time_us).epsilon(1e-12));
    CHECK(defer.step_after_us <= defer.step_before_us);
    CHECK(static_cast<double>(defer.peak_after) <= static_cast<double>(defer.peak_before) * 1.2);
  }
}

TEST_CASE("defer_stalled_compute finds the fsdp_fwd_bwd order that won on 4 x H200", "[comms][defer]") {
  // The real step's graph (run1, 4 x H100 export; the same graph every lease):
  // overlap_schedule_step leaves the backward's first matmul (dy times the
  // last layer's gathered weight) where the memory planner set it, before
  // the forward, so the forward waits for every all-gather; deferred to just
  // before its fused reader, the forward runs beside them.
  const std::string path = test::data_path("dist4/steps/run1/fsdp_fwd_bwd/default/fsdp_fwd_bwd_0_inf.post.json");
  const PlanResult step = test::plan_file(path, {"overlap_schedule_step"}, "h200");
  const PlanResult deferred = test::plan_file(path, {"overlap_schedule_step", "defer_stalled_compute"}, "h200");
  // 22612 -> 21195 us simulated, exposed 3459 -> 1104 us, when written.
  CHECK(deferred.simulation.step_time_us < 0.95 * step.simulation.step_time_us);
  CHECK(deferred.simulation.exposed_comm_us < 0.5 * step.simulation.exposed_comm_us);
}
