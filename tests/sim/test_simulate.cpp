// The two-stream model on a hand-made graph small enough to time by hand,
// and the structure of its Chrome trace.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <limits>

#include "core/comms/passes.h"
#include "core/cost/cost_model.h"
#include "core/io/plan_writer.h"
#include "core/sim/simulate.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {
using Names = std::vector<std::string>;
}  // namespace

TEST_CASE("two-stream simulation: exposed time, idle time, step time", "[sim]") {
  Graph g = load_graph_file(test::data_path("comms/overlap_small.json"));
  auto rt = estimate_runtimes_us(g, builtin_profile(kDefaultHardwareProfile));
  // Baseline: ag (10 us) then its wait at once: 10 us exposed, then 3 + 4 + 4 us of compute.
  Simulation base = simulate_two_streams(g, g.baseline_order(), rt);
  CHECK(base.step_time_us == Approx(21));
  CHECK(base.exposed_comm_us == Approx(10));
  CHECK(base.compute_idle_us == Approx(10));
  REQUIRE(base.collectives.size() == 1);
  CHECK(g.nodes[base.collectives[0].blocked].name == "wait");
  // Sinking the wait hides 8 of the 10 us behind indep1 and indep2.
  auto r = run_comm_passes(g, g.baseline_order(), {"sink_waits"}, CommKnobs{}, rt);
  CHECK(test::names(g, r.order) == Names{"ag", "indep1", "indep2", "wait", "use"});
  Simulation sunk = simulate_two_streams(g, r.order, rt);
  CHECK(sunk.exposed_comm_us == Approx(2));
  CHECK(sunk.step_time_us == Approx(13));
  // The trace: metadata for two lanes, one complete event per node, one for the stall.
  auto trace = nlohmann::json::parse(chrome_trace_json(g, sunk));
  REQUIRE(trace["traceEvents"].is_array());
  int complete = 0, lanes = 0, exposed = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") ++complete;
    if (e["ph"] == "M" && e["name"] == "thread_name") ++lanes;
    if (e.value("cat", "") == "exposed") ++exposed;
  }
  CHECK(lanes == 2);
  CHECK(exposed == 1);
  CHECK(complete == 5 + 1);
}

TEST_CASE("simulation refuses runtimes that are not finite or sum past a double", "[sim]") {
  Graph g = load_graph_file(test::data_path("comms/overlap_small.json"));
  std::vector<double> rt(g.nodes.size(), 1.0);
  rt[1] = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(simulate_two_streams(g, g.baseline_order(), rt), Catch::Contains("node \"" + g.nodes[1].name + "\""));
  std::fill(rt.begin(), rt.end(), 1.7e308);
  CHECK_THROWS_WITH(simulate_two_streams(g, g.baseline_order(), rt), Catch::Contains("finite"));
}
