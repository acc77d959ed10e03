// The per-node overlap view (Inductor's visualize_overlap / node_summary) on
// a hand-made graph timed by hand, and its CLI options.
#include <catch2/catch.hpp>

#include "core/sim/overlap_view.h"
#include "core/sim/simulate.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {

std::vector<double> graph_runtimes(const Graph& g) {
  std::vector<double> out;
  for (const Node& n : g.nodes) out.push_back(n.runtime_us.value_or(0));
  return out;
}

using schedlab::test::order_of;

}  // namespace

TEST_CASE("overlap view: Inductor's walk, its estimate and the simulation's stalls", "[sim][overlap_view]") {
  Graph g = load_graph_file(test::data_path("comms/two_collectives.json"));
  const auto rt = graph_runtimes(g);
  // sink_waits' order: mm1 5, other 6, rs 8 | pw2 2, ar 6 | late 7, wait_rs, wait_ar.
  const Order order = order_of(g, {"mm1", "other", "rs", "pw2", "ar", "late", "wait_rs", "wait_ar"});
  const Simulation sim = simulate_two_streams(g, order, rt);
  const OverlapView v = overlap_view(g, order, rt, sim);
  REQUIRE(v.rows.size() == 8);
  auto by = [&](std::size_t i) { return v.rows[i].overlapped_by == kNone ? std::string() : g.nodes[v.rows[i].overlapped_by].name; };
  // pw2 runs under rs; after ar is issued it is the collective in flight, so late runs under ar.
  CHECK(by(0).empty());
  CHECK(by(1).empty());
  CHECK(by(3) == "rs");
  CHECK(by(5) == "ar");
  CHECK(by(6).empty());
  // Collectives 8 + 6, exposed compute 5 + 6; pw2 and late are hidden.
  CHECK(v.inductor_estimate_us == Approx(25));
  CHECK(v.overlapped_compute_us == Approx(9));
  // Simulation: rs runs 11-19, ar 19-25; compute ends at 20 (late), so
  // wait_ar stalls 5 us on ar and wait_rs not at all.
  CHECK(v.rows[6].exposed_comm_us == 0);
  CHECK(v.rows[7].exposed_comm_us == Approx(5));
  CHECK(g.nodes[v.rows[7].exposed_collective].name == "ar");
  CHECK(v.rows[4].start_us == Approx(19));  // ar on the comm stream
  CHECK(v.simulation.step_time_us == Approx(25));
  CHECK(node_summary(g, g.find_node("rs")) == "collective reduce_scatter_tensor 2 ranks 256 B <- g1 -> rs_out 256 B");
  CHECK(node_summary(g, g.find_node("wait_ar")) == "wait <- ar_out -> r2 0 B");
  CHECK(node_summary(g, g.find_node("mm1")) == "extern extern_kernels.mm -> g1 512 B");
  const std::string text = overlap_view_to_text(g, v);
  CHECK(text.find("| rs") != std::string::npos);
  CHECK(text.find("waits 5.0 on ar") != std::string::npos);
  CHECK(text.find("Inductor's estimate (collectives + compute outside them): 25.0 us") != std::string::npos);
}

TEST_CASE("overlap view refuses an order that does not cover the graph", "[sim][overlap_view]") {
  Graph g = load_graph_file(test::data_path("comms/two_collectives.json"));
  const auto rt = graph_runtimes(g);
  const Simulation sim = simulate_two_streams(g, g.baseline_order(), rt);
  Order partial = g.baseline_order();
  partial.pop_back();
  CHECK_THROWS(overlap_view(g, partial, rt, sim));
}

#ifndef __EMSCRIPTEN__
TEST_CASE("plan and simulate print the overlap view with --overlap-view", "[sim][overlap_view][cli]") {
  const std::string graph = test::data_path("comms/fsdp2_forward_two_layers.json");
  auto plan = test::run_cli("plan " + graph + " --comm-passes enforce_comm_ordering_for_fsdp --overlap-view");
  CHECK(plan.code == 0);
  CHECK(plan.out.find("overlap view") != std::string::npos);
  CHECK(plan.out.find("collective all_gather_into_tensor_out 2 ranks") != std::string::npos);
  auto sim = test::run_cli("simulate " + graph + " --comm-passes enforce_comm_ordering_for_fsdp,sink_waits --overlap-view --runtime-source runtime_us");
  CHECK(sim.code == 0);
  CHECK(sim.out.find("| op11") != std::string::npos);  // layer 0's matmul runs under layer 1's all-gather
  // With -o the text report (and the view) goes to stdout; JSON alone has no place for it.
  CHECK(test::run_cli("plan " + graph + " --overlap-view --format json").code == 2);
  // Without the option the reports stay as they were.
  CHECK(test::run_cli("plan " + graph).out.find("overlap view") == std::string::npos);
}
#endif
