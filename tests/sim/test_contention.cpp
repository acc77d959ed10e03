// The simulation under contention (core/sim ContentionModel): processor
// sharing between a collective and the kernel beside it, and the start rule,
// timed by hand on a small graph; with neutral factors it is the two-stream
// model on real graphs.
#include <catch2/catch.hpp>

#include "core/cost/cost_model.h"
#include "core/cost/pricing.h"
#include "core/predict/predicted.h"
#include "core/sim/simulate.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {

struct Small {
  Graph g = load_graph_file(test::data_path("comms/overlap_small.json"));
  std::vector<double> rt = std::vector<double>(g.nodes.size(), 0.0);
  Small() {
    // ag 10 us on the comm stream; indep1 3 and indep2 4 beside it; the wait; use 4.
    rt[g.find_node("ag")] = 10;
    rt[g.find_node("indep1")] = 3;
    rt[g.find_node("indep2")] = 4;
    rt[g.find_node("use")] = 4;
  }
  Order sunk() const { return {g.find_node("ag"), g.find_node("indep1"), g.find_node("indep2"), g.find_node("wait"), g.find_node("use")}; }
  ContentionModel uniform(double comm, double compute, double start) const {
    ContentionShare share;
    share.comm_slowdown = comm;
    share.compute_slowdown = compute;
    share.start_fraction = start;
    return {std::vector<ContentionShare>(g.nodes.size(), share)};
  }
  // Every node's share with `field` set to `value`.
  static void set_all(ContentionModel& m, double ContentionShare::*field, double value) {
    for (ContentionShare& s : m.shares) s.*field = value;
  }
};

}  // namespace

TEST_CASE("contention: both sides slow while they overlap", "[sim][contention]") {
  Small s;
  Simulation free = simulate_two_streams(s.g, s.sunk(), s.rt);
  CHECK(free.step_time_us == Approx(14));  // ag 0-10, indep1 0-3, indep2 3-7, the wait stalls 3, use 10-14
  CHECK(free.exposed_comm_us == Approx(3));
  // The collective at half speed, the kernels at 1/1.5 beside it:
  // indep1 0-4.5 (ag did 2.25 of 10), indep2 4.5-10.5 (ag 3 more), the wait
  // stalls while ag's last 4.75 run alone, use 15.25-19.25.
  Simulation shared = simulate_two_streams(s.g, s.sunk(), s.rt, LaunchModel{}, s.uniform(2.0, 1.5, 0.0));
  CHECK(shared.step_time_us == Approx(19.25));
  CHECK(shared.exposed_comm_us == Approx(4.75));
  CHECK(shared.compute_busy_us == Approx(4.5 + 6 + 4));
  REQUIRE(shared.collectives.size() == 1);
  CHECK(shared.collectives[0].start_us == Approx(0));
  CHECK(shared.collectives[0].end_us == Approx(15.25));
  CHECK(shared.comm_busy_us == Approx(15.25));
}

TEST_CASE("contention: a collective ready as a kernel starts waits for its last wave", "[sim][contention]") {
  Small s;
  // ag is ready at 0 as indep1 starts; it gets SMs half-way through indep1.
  Simulation sim = simulate_two_streams(s.g, s.sunk(), s.rt, LaunchModel{}, s.uniform(1.0, 1.0, 0.5));
  REQUIRE(sim.collectives.size() == 1);
  CHECK(sim.collectives[0].start_us == Approx(1.5));
  CHECK(sim.collectives[0].end_us == Approx(11.5));
  CHECK(sim.exposed_comm_us == Approx(4.5));
  CHECK(sim.step_time_us == Approx(15.5));
  // At the kernel's end (fraction 1): ag runs after indep1.
  Simulation after = simulate_two_streams(s.g, s.sunk(), s.rt, LaunchModel{}, s.uniform(1.0, 1.0, 1.0));
  CHECK(after.collectives[0].start_us == Approx(3));
  // A model of the wrong size is refused.
  ContentionModel wrong = s.uniform(1.0, 1.0, 0.0);
  wrong.shares.pop_back();
  CHECK_THROWS_WITH(simulate_two_streams(s.g, s.sunk(), s.rt, LaunchModel{}, wrong), Catch::Contains("contention model"));
}

TEST_CASE("contention: neutral factors give the two-stream model on real graphs", "[sim][contention]") {
  // Without a launch path: the two-stream model starts a collective when the
  // compute stream reaches it; under contention it also waits for the host's
  // issue (checked below with the launch path).
  for (const std::string& c : test::fixture_cases()) {
    if (c.rfind("inductor/", 0) != 0) continue;
    Graph g = load_graph_file(test::data_path(c + ".post.json"));
    INFO(c);
    const HardwareProfile& hw = builtin_profile("h100-sxm");
    const auto rt = estimate_runtimes_us(g, hw);
    const std::size_t n = g.nodes.size();
    const ContentionModel neutral{std::vector<ContentionShare>(n)};  // factors of 1, no start rule
    const Simulation a = simulate_two_streams(g, g.baseline_order(), rt);
    const Simulation b = simulate_two_streams(g, g.baseline_order(), rt, LaunchModel{}, neutral);
    CHECK(b.step_time_us == Approx(a.step_time_us));
    CHECK(b.exposed_comm_us == Approx(a.exposed_comm_us).margin(1e-6));
    CHECK(b.compute_busy_us == Approx(a.compute_busy_us));
    REQUIRE(b.collectives.size() == a.collectives.size());
    for (std::size_t i = 0; i < a.collectives.size(); ++i) CHECK(b.collectives[i].end_us == Approx(a.collectives[i].end_us));
    // With the launch path a collective starts no earlier than the host issues it.
    const Simulation hosted = simulate_two_streams(g, g.baseline_order(), rt, launch_path(g, price_graph(g, hw), false), neutral);
    for (const CollectiveTiming& ct : hosted.collectives) CHECK(ct.start_us >= ct.issue_us);
  }
}

TEST_CASE("contention: the built-in profiles' law per node", "[sim][contention]") {
  Graph g = load_graph_file(test::data_path("inductor/fsdp_1.post.json"));
  const ContentionModel m = contention_model(price_graph(g, builtin_profile("h100-sxm")));
  REQUIRE(m.shares.size() == g.nodes.size());
  for (const ContentionShare& s : m.shares) {
    CHECK(s.comm_slowdown >= 1.0);
    CHECK(s.compute_slowdown >= 1.0);
    CHECK(s.start_fraction >= 0.0);
    CHECK(s.start_fraction <= 1.0);
  }
  // A datasheet profile carries none: overlap stays free.
  CHECK(contention_model(price_graph(g, builtin_profile("h100-sxm-datasheet"))).empty());
  // Nor when collectives are not priced (the zoo's fake process group), nor
  // when the simulation times by what the comm passes read.
  CHECK(contention_model(price_graph(g, builtin_profile("h100-sxm"), {true, SimulatedTimes::Calibrated, false})).empty());
  CHECK(contention_model(price_graph(g, builtin_profile("h100-sxm"), {true, SimulatedTimes::PassTimes, true})).empty());
}

TEST_CASE("contention: a collective's delay beside a kernel follows its size", "[sim][contention]") {
  Small s;
  // ag (10 us alone) beside kernels that slow it x1 + 10 us: a rate of 2,
  // as x2 without a delay (the first test case's timings).
  ContentionModel m = s.uniform(1.0, 1.5, 0.0);
  Small::set_all(m, &ContentionShare::comm_delay_us, 10.0);
  Simulation delayed = simulate_two_streams(s.g, s.sunk(), s.rt, LaunchModel{}, m);
  Simulation ratio = simulate_two_streams(s.g, s.sunk(), s.rt, LaunchModel{}, s.uniform(2.0, 1.5, 0.0));
  CHECK(delayed.collectives[0].end_us == Approx(ratio.collectives[0].end_us));
  CHECK(delayed.collectives[0].end_us == Approx(15.25));
  // Twice as long alone (20 us): a rate of 1.5. indep1 0-4.5 (ag did 3 of
  // 20), indep2 4.5-10.5 (4 more), ag's last 13 alone: it ends at 23.5.
  std::vector<double> rt = s.rt;
  rt[s.g.find_node("ag")] = 20;
  Simulation longer = simulate_two_streams(s.g, s.sunk(), rt, LaunchModel{}, m);
  CHECK(longer.collectives[0].end_us == Approx(23.5));
  // A model of the wrong size is refused.
  m.shares.pop_back();
  CHECK_THROWS_WITH(simulate_two_streams(s.g, s.sunk(), s.rt, LaunchModel{}, m), Catch::Contains("contention model"));
}

TEST_CASE("contention: a collective ready in the launch gap loses the SMs to the next kernel", "[sim][contention]") {
  Small s;
  // Each kernel launches 1 us after the one before (the device's launch
  // gap): ag, issued first, is ready at 0; indep1 starts at 1.
  const std::size_t n = s.g.nodes.size();
  LaunchModel launch;
  launch.host_us.assign(n, 0.0);
  launch.gap_us.assign(n, 1.0);
  ContentionModel m = s.uniform(1.0, 1.0, 0.5);
  // No start latency: ag starts at once in the gap.
  Simulation at_once = simulate_two_streams(s.g, s.sunk(), s.rt, launch, m);
  CHECK(at_once.collectives[0].start_us == Approx(0));
  // An NCCL kernel that starts 2 us after it is ready loses the race to
  // indep1 (1 us after): ag is ready beside indep1, so it starts half-way
  // through it (1 + 1.5).
  Small::set_all(m, &ContentionShare::start_latency_us, 2.0);
  Simulation lost = simulate_two_streams(s.g, s.sunk(), s.rt, launch, m);
  CHECK(lost.collectives[0].start_us == Approx(2.5));
  CHECK(lost.collectives[0].end_us == Approx(12.5));
  // A latency shorter than the gap: ag wins.
  Small::set_all(m, &ContentionShare::start_latency_us, 0.5);
  CHECK(simulate_two_streams(s.g, s.sunk(), s.rt, launch, m).collectives[0].start_us == Approx(0));
}

TEST_CASE("contention: a collective that starts beside a kernel waits longer for its peers", "[sim][contention]") {
  Small s;
  ContentionModel m = s.uniform(1.0, 1.0, 0.0);  // neutral factors: only the wait counts
  m.beside_wait_us.assign(s.g.nodes.size(), 0.0);
  m.beside_wait_us[s.g.find_node("ag")] = 5;
  // Sunk: ag starts beside indep1, 5 us more work (0-15); the wait stalls 7-15, use 15-19.
  const Simulation beside = simulate_two_streams(s.g, s.sunk(), s.rt, LaunchModel{}, m);
  REQUIRE(beside.collectives.size() == 1);
  CHECK(beside.collectives[0].end_us == Approx(15));
  CHECK(beside.exposed_comm_us == Approx(8));
  CHECK(beside.step_time_us == Approx(19));
  // Waited on at once: ag runs on an idle compute stream, no extra wait (0-10, then 3 + 4 + 4).
  const Order at_once = {s.g.find_node("ag"), s.g.find_node("wait"), s.g.find_node("indep1"), s.g.find_node("indep2"),
                         s.g.find_node("use")};
  const Simulation idle = simulate_two_streams(s.g, at_once, s.rt, LaunchModel{}, m);
  CHECK(idle.collectives[0].end_us == Approx(10));
  CHECK(idle.step_time_us == Approx(21));
  // A wait per node of the wrong size is refused.
  m.beside_wait_us.pop_back();
  CHECK_THROWS_WITH(simulate_two_streams(s.g, s.sunk(), s.rt, LaunchModel{}, m), Catch::Contains("contention model"));
}
