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

// A call that reads a device value back (LaunchModel::host_waits: nonzero,
// an embedding bag's backward) holds the host until its kernels are done,
// so the launches after it no longer run ahead of the GPU. By hand, one µs
// of host per node and no gaps, the loop with contention shares (neutral
// here): ag is issued at 1 and ends at 11; `use` (the wait's reader) runs
// 11-14, indep1 14-18, indep2 18-22. With `use` reading back, the host
// reaches indep1's launch at max(14, 3) + 1 = 15: indep1 runs 15-19,
// indep2 19-23. The loop without contention starts a collective from the
// compute stream's clock (ag at 0): 21, and 22 with the wait.
TEST_CASE("two-stream simulation: a host that waits for a call's kernels", "[sim][launch]") {
  Graph g = load_graph_file(test::data_path("comms/overlap_small.json"));
  const std::vector<double> rt = estimate_runtimes_us(g, builtin_profile(kDefaultHardwareProfile));
  LaunchModel launch;
  launch.host_us.assign(g.nodes.size(), 1.0);
  launch.gap_us.assign(g.nodes.size(), 0.0);
  const ContentionModel neutral{std::vector<ContentionShare>(g.nodes.size())};
  for (const ContentionModel& contention : {ContentionModel{}, neutral}) {
    const double ag_end = contention.empty() ? 10 : 11;
    INFO("contention shares: " << contention.shares.size());
    CHECK(simulate_two_streams(g, g.baseline_order(), rt, launch, contention).step_time_us == Approx(ag_end + 11));
    LaunchModel waiting = launch;
    waiting.host_waits.assign(g.nodes.size(), 0);
    waiting.host_waits[g.find_node("use")] = 1;
    const Simulation s = simulate_two_streams(g, g.baseline_order(), rt, waiting, contention);
    CHECK(s.step_time_us == Approx(ag_end + 12));
    CHECK(s.compute_idle_us == Approx(ag_end + 12 - 11));
    waiting.host_waits.pop_back();
    CHECK_THROWS_WITH(simulate_two_streams(g, g.baseline_order(), rt, waiting, contention), Catch::Contains("host waits"));
  }
}
