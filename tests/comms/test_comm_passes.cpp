// Hand-made distributed graphs (tests/data/comms) and generated ones: what
// each pass does on a case small enough to check by hand, the knobs, the
// registry, bad input, and the overlap scheduler's two promises (never above
// the memory budget, never more exposed than its input).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/gen/distributed.h"
#include "core/comms/passes.h"
#include "core/cost/cost_model.h"
#include "core/memory/estimate.h"
#include "core/memory/methods.h"
#include "core/io/options.h"
#include "core/io/plan_writer.h"
#include "core/plan/plan.h"
#include "core/sim/simulate.h"
#include "core/util/error.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {

std::vector<std::string> run_pass(const Graph& g, const std::string& pass) {
  auto rt = estimate_runtimes_us(g, builtin_profile(kDefaultHardwareProfile));
  return test::names(g, run_comm_passes(g, g.baseline_order(), {pass}, CommKnobs{}, rt).order);
}

using Names = std::vector<std::string>;

}  // namespace

TEST_CASE("comm passes on a hand-made two-collective graph", "[comms]") {
  Graph g = load_graph_file(test::data_path("comms/two_collectives.json"));
  // Waits rank last among ready nodes; otherwise input order.
  CHECK(run_pass(g, "sink_waits") == Names{"mm1", "other", "rs", "pw2", "ar", "late", "wait_rs", "wait_ar"});
  // Nodes rank by the first collective they block: mm1, rs (0), other, pw2, ar (1), the rest after.
  CHECK(run_pass(g, "raise_comms") == Names{"mm1", "rs", "other", "pw2", "ar", "wait_rs", "wait_ar", "late"});
  // After rs, ready compute fills its 8 us (other 6, pw2 2); after ar, late fills 6; waits go last.
  CHECK(run_pass(g, "reorder_compute_for_overlap") == Names{"mm1", "rs", "other", "pw2", "ar", "late", "wait_rs", "wait_ar"});
  // The unsafe reorder lets ar (with its group pw2, other) pass rs and gemm-like mm1 (not groupable).
  CHECK(run_pass(g, "reorder_communication_preserving_peak_memory") ==
        Names{"other", "pw2", "ar", "mm1", "rs", "wait_rs", "wait_ar", "late"});
  CHECK(run_pass(g, "sink_waits_iterative") == Names{"mm1", "other", "rs", "pw2", "wait_rs", "ar", "late", "wait_ar"});
  CHECK(run_pass(g, "decide_global_ordering_of_comms") == test::names(g, g.baseline_order()));
}

TEST_CASE("decide_global_ordering_of_comms chains collectives with fake deps", "[comms]") {
  Graph g = load_graph_file(test::data_path("comms/two_collectives.json"));
  auto rt = estimate_runtimes_us(g, builtin_profile(kDefaultHardwareProfile));
  auto r = run_comm_passes(g, g.baseline_order(), {"decide_global_ordering_of_comms"}, CommKnobs{}, rt);
  REQUIRE(r.steps[0].result.added_fake_deps.size() == 1);
  CHECK(g.nodes[r.steps[0].result.added_fake_deps[0].node].name == "ar");
  CHECK(g.buffers[r.steps[0].result.added_fake_deps[0].buf].name == "rs_out");
  CHECK(r.final_graph.added_fake_deps.size() == 1);
}

TEST_CASE("comm knobs and pass names are checked", "[comms]") {
  CHECK_THROWS_AS(parse_comm_knobs_json(R"({"nope": 1})"), OptionError);
  CHECK_THROWS_AS(parse_comm_knobs_json(R"({"sink_iterative_peak_memory_budget": "x"})"), OptionError);
  CHECK_THROWS_AS(parse_comm_knobs_json(R"({"reorder_iterative_use_runtime_estimations": 1})"), OptionError);
  CommKnobs k = parse_comm_knobs_json(R"({"reorder_iterative_debug_limit_to_reorder": 2, "sink_iterative_peak_memory_budget": 0.0})");
  CHECK(k.reorder_iterative_debug_limit_to_reorder == 2);
  CHECK(k.sink_iterative_peak_memory_budget == 0.0);
  const auto written = nlohmann::json::parse(plan_json(R"({"format":"schedgraph/1","inputs":[],"outputs":[],"nodes":[]})", ""));
  CHECK(written["options"]["comm"]["reorder_iterative_peak_memory_budget"] == 0.2);
  CHECK(written["options"]["comm"]["sink_waits_iterative_debug_limit_to_sink"].is_null());
  CHECK_THROWS_AS(check_comm_pass_names({"sink_waits", "bogus"}), OptionError);
  CHECK_THROWS_AS(parse_plan_options(R"({"comm": {"bad_knob": true}})"), OptionError);
  for (const auto& p : comm_passes()) CHECK(find_comm_pass(p.name) == &p);
}

TEST_CASE("overlap_schedule stays within budget and never exposes more than its input", "[comms]") {
  std::vector<DistributedGraphSpec> specs(4);
  specs[0].layers = 4;
  specs[1].layers = 4;
  specs[1].backward = false;
  specs[2].pattern = DistributedPattern::TensorParallel;
  specs[2].layers = 4;
  specs[3].pattern = DistributedPattern::TensorParallel;
  specs[3].microbatches = 1;
  specs[3].layers = 3;
  for (const auto& spec : specs) {
    Graph g = generate_distributed_graph(spec);
    INFO(g.name);
    auto rt = estimate_runtimes_us(g, builtin_profile(kDefaultHardwareProfile));
    Order input = reorder_for_peak_memory(g, g.baseline_order(), default_memory_methods()).order();
    auto r = run_comm_passes(g, input, {"overlap_schedule"}, CommKnobs{}, rt);
    auto info = compute_planning_info(g, input);
    const auto in_peak = estimate_peak_memory_allocfree(g, info, input).peak;
    const auto out_peak = estimate_peak_memory_allocfree(g, info, r.order).peak;
    CHECK(static_cast<double>(out_peak) <= static_cast<double>(in_peak) * 1.2);
    CHECK(simulate_two_streams(g, r.order, rt).exposed_comm_us <= simulate_two_streams(g, input, rt).exposed_comm_us);
    CHECK(is_valid_order(g, info, r.order));
  }
}

TEST_CASE("gen-dist specs out of range are refused", "[comms]") {
  DistributedGraphSpec s;
  s.layers = 0;
  CHECK_THROWS_AS(generate_distributed_graph(s), OptionError);
  CHECK_THROWS_AS(parse_distributed_pattern("pp"), OptionError);
}

TEST_CASE("runtime-estimation mode stops moves once a collective is hidden", "[comms]") {
  Graph g = load_graph_file(test::data_path("inductor/fsdp_1.post.json"));
  auto rt = estimate_runtimes_us(g, builtin_profile(kDefaultHardwareProfile));
  CommKnobs k;
  k.reorder_iterative_use_runtime_estimations = k.sink_iterative_use_runtime_estimations = true;
  auto r = run_comm_passes(g, g.baseline_order(), inductor_recommended_comm_passes(), k, rt);
  REQUIRE(r.steps.size() == 3);
  int unexposed = 0;
  for (const auto& step : r.steps)
    for (const auto& s : step.result.stats) unexposed += s.limiting_factor == "unexposed by runtime estimations";
  CHECK(unexposed > 0);
  CHECK(respects_comm_deps(r.final_graph, r.order));
}

TEST_CASE("plan options carry comm knobs; the plan has comm and simulation sections", "[comms][sim]") {
  std::string graph = read_text_file(test::data_path("comms/overlap_small.json"));
  auto plan = nlohmann::json::parse(plan_json(graph, R"({"fuse": false, "runtime_source": "runtime_us", "comm_passes": "sink_waits", "comm": {"sink_iterative_peak_memory_budget": 0.1}})"));
  CHECK(plan["options"]["comm"]["sink_iterative_peak_memory_budget"] == 0.1);
  CHECK(plan["comm"]["passes"][0]["pass"] == "sink_waits");
  CHECK(plan["comm"]["exposed_comm_before_us"] == Approx(10));
  CHECK(plan["comm"]["exposed_comm_after_us"] == Approx(2));
  CHECK(plan["simulation"]["step_time_us"] == Approx(13));
  CHECK(plan["order"] == nlohmann::json::array({"ag", "indep1", "indep2", "wait", "use"}));
}
