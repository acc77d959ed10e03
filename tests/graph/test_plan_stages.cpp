// The plan pipeline's stages, in the order every front end runs them.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/plan/plan.h"
#include "tests/test_util.h"

using namespace schedlab;

TEST_CASE("the plan pipeline is front end, memory, runtimes, comms, simulation; the result owns its graphs", "[plan][pipeline]") {
  std::vector<std::string> names;
  for (const auto& s : plan_stages()) names.emplace_back(s.name);
  CHECK(names == std::vector<std::string>{"front_end", "memory", "runtimes", "comms", "simulation"});
  PlanResult r = run_plan(load_graph_file(test::data_path("inductor/gpt2_2.pre.json")), PlanOptions{});
  REQUIRE(r.input);
  REQUIRE(r.fused_graph);
  CHECK(&r.planned() == r.fused_graph.get());
  CHECK(r.runtimes_us.size() == r.planned().nodes.size());
  CHECK(r.runtime_sources.size() == r.planned().nodes.size());
  CHECK(r.order.size() == r.planned().nodes.size());
}
