// The plan pipeline's stages, in the order every front end runs them.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "core/plan/plan.h"
#include "tests/test_util.h"

using namespace schedlab;

TEST_CASE("the plan pipeline is front end, memory, pricing, comms, simulation, predict, compare, ranks; the result owns its graphs", "[plan][pipeline]") {
  std::vector<std::string> names;
  for (const auto& s : plan_stages()) names.emplace_back(s.name);
  CHECK(names == std::vector<std::string>{"front_end", "memory", "pricing", "comms", "simulation", "predict", "compare", "ranks"});
  PlanResult r = run_plan(load_graph_file(test::data_path("inductor/gpt2_2.pre.json")), PlanOptions{});
  REQUIRE(r.input);
  REQUIRE(r.fused_graph);
  CHECK(&r.planned() == r.fused_graph.get());
  REQUIRE(r.pricing);
  CHECK(r.pricing->pass_us.size() == r.planned().nodes.size());
  CHECK(r.pricing->pass_sources.size() == r.planned().nodes.size());
  CHECK(r.pricing->calibrated_us.size() == r.planned().nodes.size());
  CHECK(r.compared.empty());
  CHECK(r.order.size() == r.planned().nodes.size());
}

// `simulate --compare` and schedplan/1 `compare` rows are the plan's own
// figures for those passes: the step, exposed communication and peak that
// `plan --comm-passes X` reports, over graphs with and without collectives,
// on both runtime sources and on a profile whose host pays per allocation.
TEST_CASE("compared comm passes equal plan --comm-passes with them", "[plan][pipeline][compare]") {
  const char* graphs[] = {"exported/ddp_step_0_inf.post.json", "exported/fsdp_train_1_bwd.post.json", "exported/tp_block_1_bwd.post.json",
                          "inductor/fsdp_1.post.json", "inductor/gpt2_2.pre.json"};
  for (const char* path : graphs) {
    for (const char* source : {"calibrated", "runtime_us"}) {
      for (const char* hardware : {"h100-sxm", "a100-80gb"}) {
        INFO(path << " " << source << " " << hardware);
        const auto graph = std::make_shared<const Graph>(load_graph_file(test::data_path(path)));
        PlanOptions opts;
        opts.runtime_source = source;
        opts.hardware = builtin_profile(hardware);
        opts.compare = true;
        const PlanResult compared = run_plan(graph, opts);
        const auto lists = compared_comm_passes();
        REQUIRE(compared.compared.size() == lists.size());
        for (std::size_t i = 0; i < lists.size(); ++i) {
          const ComparedPasses& row = compared.compared[i];
          CHECK(row.label == lists[i].first);
          CHECK(row.comm_passes == lists[i].second);
          PlanOptions alone = opts;
          alone.compare = false;
          alone.comm_passes = lists[i].second;
          const PlanResult plan = run_plan(graph, alone);
          CHECK(row.simulation.step_time_us == plan.simulation.step_time_us);
          CHECK(row.simulation.exposed_comm_us == plan.simulation.exposed_comm_us);
          CHECK(row.simulation.compute_idle_us == plan.simulation.compute_idle_us);
          CHECK(row.peak_bytes == plan.final_memory.peak);
        }
        // Comparing adds rows and changes nothing of the plan's own.
        PlanOptions plain = opts;
        plain.compare = false;
        const PlanResult without = run_plan(graph, plain);
        CHECK(without.compared.empty());
        CHECK(compared.simulation.step_time_us == without.simulation.step_time_us);
        CHECK(compared.predicted.wall_time_us == without.predicted.wall_time_us);
      }
    }
  }
}
