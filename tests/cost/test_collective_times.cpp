// Measured collective curves (core/cost/collective_times.h): interpolation,
// the size convention, group sizes never swept, and the profile reader's
// errors; and that the built-in profiles price the sweeps they were fitted
// from.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/cost/collective_times.h"
#include "core/cost/cost_model.h"
#include "core/cost/pricing.h"
#include "core/gen/distributed.h"
#include "core/io/profiles.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {

CollectiveTimes two_points() {
  CollectiveTimes t;
  t.curves[CollectiveOp::AllReduce][4] = {{1 << 20, 20.0}, {4 << 20, 80.0}};
  t.curves[CollectiveOp::ReduceScatter][4] = {{1 << 20, 10.0}, {2 << 20, 20.0}};
  return t;
}

}  // namespace

TEST_CASE("collective curves: log-log between sizes, a floor below, a slope above", "[cost][collectives]") {
  const CollectiveTimes t = two_points();
  CHECK(*measured_collective_us(t, CollectiveOp::AllReduce, 1 << 20, 4) == Approx(20));
  CHECK(*measured_collective_us(t, CollectiveOp::AllReduce, 4 << 20, 4) == Approx(80));
  CHECK(*measured_collective_us(t, CollectiveOp::AllReduce, 2 << 20, 4) == Approx(40));  // halfway in log size and log time
  CHECK(*measured_collective_us(t, CollectiveOp::AllReduce, 4096, 4) == Approx(20));      // the latency floor
  CHECK(*measured_collective_us(t, CollectiveOp::AllReduce, 7 << 20, 4) == Approx(140));  // 20 us per MiB past the sweep
  // reduce_scatter's payload is its shard: 512 KiB out of 4 ranks is the 2 MiB point.
  CHECK(*measured_collective_us(t, CollectiveOp::ReduceScatter, 512 << 10, 4) == Approx(20));
  // A group size never swept: the nearest one scaled by the ring's bus factor (2*7/8 over 2*3/4).
  CHECK(*measured_collective_us(t, CollectiveOp::AllReduce, 1 << 20, 8) == Approx(20 * (1.75 / 1.5)));
  CHECK(!measured_collective_us(t, CollectiveOp::AllGather, 1 << 20, 4));
  CHECK(!measured_collective_us(t, CollectiveOp::AllReduce, 1 << 20, 1));
}

TEST_CASE("peer wait: added to the curve's time at the group sizes measured, none at others", "[cost][collectives]") {
  CollectiveTimes t = two_points();
  t.peer_wait_us[CollectiveOp::AllReduce][4] = 55;
  CHECK(*measured_collective_us(t, CollectiveOp::AllReduce, 2 << 20, 4) == Approx(40 + 55));
  CHECK(*measured_collective_us(t, CollectiveOp::AllReduce, 4096, 4) == Approx(20 + 55));  // on the floor too
  // 8 ranks were never measured: the scaled curve alone, no wait.
  CHECK(*measured_collective_us(t, CollectiveOp::AllReduce, 1 << 20, 8) == Approx(20 * (1.75 / 1.5)));
  // An operation without a wait of its own: its curve alone.
  CHECK(*measured_collective_us(t, CollectiveOp::ReduceScatter, 512 << 10, 4) == Approx(20));
  // A wait without a curve prices nothing.
  t.peer_wait_us[CollectiveOp::AllGather][4] = 90;
  CHECK(!measured_collective_us(t, CollectiveOp::AllGather, 1 << 20, 4));
}

namespace {

// A profile whose collectives' `field` (a peer wait law) is `waits` is
// refused with a message holding `expect` and the file's name.
void refuse_peer_waits(const std::string& field, const std::string& waits, const std::string& expect) {
  HardwareProfile p = builtin_profile("h100-sxm-datasheet");
  CHECK_THROWS_WITH(apply_comm_sections(R"({"collectives": {"curves": {}, ")" + field + R"(": )" + waits + "}}", "x.json", p),
                    Catch::Contains(expect) && Catch::Contains("x.json"));
}

}  // namespace

TEST_CASE("peer wait: the reader names the bad field; a profile without it writes back without it", "[cost][collectives][io]") {
  auto refuse = [](const std::string& waits, const std::string& expect) { refuse_peer_waits("peer_wait_us", waits, expect); };
  refuse("[]", "collectives.peer_wait_us: expected an object");
  refuse(R"({"all_sum": {"4": 1}})", "collectives.peer_wait_us: unknown operation \"all_sum\"");
  refuse(R"({"all_gather": 3})", "collectives.peer_wait_us.all_gather: expected an object");
  refuse(R"({"all_gather": {"1": 3}})", "collectives.peer_wait_us.all_gather: group size \"1\"");
  refuse(R"({"all_gather": {"four": 3}})", "group size \"four\"");
  refuse(R"({"all_gather": {"4": -3}})", "collectives.peer_wait_us.all_gather.4");
  refuse(R"({"all_gather": {"4": "x"}})", "collectives.peer_wait_us.all_gather.4");
  refuse(R"({"all_gather": {"4": 2e6}})", "collectives.peer_wait_us.all_gather.4: expected microseconds from 0 to 1e6");
  HardwareProfile p = builtin_profile("h100-sxm-datasheet");
  apply_comm_sections(R"({"collectives": {"curves": {"all_gather": {"4": [[4096, 6]]}}, "peer_wait_us": {"all_gather": {"4": 92.8}}}})",
                      "x.json", p);
  const HardwareProfile again = hardware_profile_from_json(hardware_profile_to_json(p));
  CHECK(again.collective_times->peer_wait_us.at(CollectiveOp::AllGather).at(4) == 92.8);
  CHECK(*measured_collective_us(*again.collective_times, CollectiveOp::AllGather, 4096, 4) == Approx(6 + 92.8));
  // The built-in profiles have none: they write back without the field.
  CHECK(!hardware_profile_to_json(builtin_profile("h200")).at("collectives").contains("peer_wait_us"));
}

TEST_CASE("peer wait beside compute: read, checked and written; priced per collective inside one node", "[cost][collectives][io]") {
  auto refuse = [](const std::string& waits, const std::string& expect) { refuse_peer_waits("peer_wait_beside_us", waits, expect); };
  refuse("[]", "collectives.peer_wait_beside_us: expected an object");
  refuse(R"({"all_sum": {"4": 1}})", "collectives.peer_wait_beside_us: unknown operation \"all_sum\"");
  refuse(R"({"all_gather": {"1": 3}})", "collectives.peer_wait_beside_us.all_gather: group size \"1\"");
  refuse(R"({"all_gather": {"4": -3}})", "collectives.peer_wait_beside_us.all_gather.4");
  refuse(R"({"all_gather": {"4": 2e6}})", "collectives.peer_wait_beside_us.all_gather.4: expected microseconds from 0 to 1e6");
  HardwareProfile p = builtin_profile("h200");
  apply_comm_sections(R"({"collectives": {"curves": {"all_gather": {"4": [[4096, 6], [1073741824, 3000]]}},
                          "peer_wait_beside_us": {"all_gather": {"4": 110}}}})", "x.json", p);
  const HardwareProfile again = hardware_profile_from_json(hardware_profile_to_json(p));
  CHECK(peer_wait_beside_us(*again.collective_times, CollectiveOp::AllGather, 4) == 110);
  CHECK(peer_wait_beside_us(*again.collective_times, CollectiveOp::AllGather, 2) == 0);  // never measured
  CHECK(peer_wait_beside_us(*again.collective_times, CollectiveOp::ReduceScatter, 4) == 0);
  // Priced: the all-gathers of a 4-rank FSDP graph get it, nothing else; the
  // curve's time is unchanged (the simulation adds it beside a kernel only).
  const Graph g = generate_distributed_graph({.layers = 2, .hidden = 512, .tokens = 256, .world_size = 4});
  const Pricing priced = price_graph(g, again);
  const Pricing plain = price_graph(g, builtin_profile("h200"));
  REQUIRE(priced.beside_wait_us.size() == g.nodes.size());
  CHECK(plain.beside_wait_us.empty());
  int gathers = 0;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& n = g.nodes[v];
    const bool gather = n.kind == NodeKind::Collective && n.collective->kind == CollectiveOp::AllGather;
    gathers += gather;
    CHECK(priced.beside_wait_us[v] == (gather ? 110.0 : 0.0));
  }
  CHECK(gathers > 0);
  // 8 ranks over two nodes of four: the datasheet prices them, no wait.
  const Graph wide = generate_distributed_graph({.layers = 2, .hidden = 512, .tokens = 256, .world_size = 8});
  HardwareProfile two_nodes = again;
  two_nodes.ranks_per_node = 4;
  for (double w : price_graph(wide, two_nodes).beside_wait_us) CHECK(w == 0.0);
}

TEST_CASE("peer wait: the trial profiles are the built-in ones with the fitted wait", "[cost][collectives][io]") {
  for (const std::string name : {"h200", "h100-sxm"}) {
    const HardwareProfile trial = load_hardware_profile(test::data_path("../../profiles/" + name + "-peer-wait.json"));
    const HardwareProfile& built_in = builtin_profile(name);
    REQUIRE(trial.collective_times);
    CHECK(trial.name == name + "-peer-wait");
    CHECK(trial.collective_times->curves == built_in.collective_times->curves);
    CHECK(trial.collective_times->peer_wait_us.at(CollectiveOp::ReduceScatter).at(4) > 0);
    // Beside compute each operation waits longer (docs/cost-model.md, "Peer wait").
    for (CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter, CollectiveOp::AllReduce})
      CHECK(peer_wait_beside_us(*trial.collective_times, op, 4) > 0);
    // A 64 MiB all-gather at 4 ranks costs the built-in's time plus the wait; at 2 ranks, the same.
    CHECK(*measured_collective_us(*trial.collective_times, CollectiveOp::AllGather, 1 << 26, 4) ==
          Approx(*measured_collective_us(*built_in.collective_times, CollectiveOp::AllGather, 1 << 26, 4) +
                 trial.collective_times->peer_wait_us.at(CollectiveOp::AllGather).at(4)));
    CHECK(*measured_collective_us(*trial.collective_times, CollectiveOp::AllGather, 1 << 26, 2) ==
          Approx(*measured_collective_us(*built_in.collective_times, CollectiveOp::AllGather, 1 << 26, 2)));
  }
}

TEST_CASE("collective curves: the built-in profiles use them inside a node, the datasheet across nodes", "[cost][collectives]") {
  const HardwareProfile& hw = builtin_profile("h100-sxm");
  REQUIRE(hw.collective_times);
  const auto& curve = hw.collective_times->curves.at(CollectiveOp::AllReduce).at(4);
  for (const auto& [bytes, us] : curve)
    CHECK(estimate_collective_us(CollectiveOp::AllReduce, static_cast<std::int64_t>(bytes), 4, 4, hw) == Approx(us));
  // 16 ranks of a 2-node job cross the network: the datasheet model, not the curves.
  const HardwareProfile& sheet = builtin_profile("h100-sxm-datasheet");
  CHECK(estimate_collective_us(CollectiveOp::AllReduce, 1 << 26, 16, 16, hw) ==
        Approx(estimate_collective_us(CollectiveOp::AllReduce, 1 << 26, 16, 16, sheet)));
  // The measured 64 MiB all-reduce at 4 ranks (331 us) is 1.46 x the
  // datasheet's, a 4 KiB one (8.5 us) 2.5 x.
  CHECK(estimate_collective_us(CollectiveOp::AllReduce, 1 << 26, 4, 4, hw) >
        1.3 * estimate_collective_us(CollectiveOp::AllReduce, 1 << 26, 4, 4, sheet));
  CHECK(estimate_collective_us(CollectiveOp::AllReduce, 4096, 4, 4, hw) >
        2 * estimate_collective_us(CollectiveOp::AllReduce, 4096, 4, 4, sheet));
}

TEST_CASE("collective curves and contention: the profile reader names the field", "[cost][collectives][io]") {
  auto refuse = [](const std::string& sections, const std::string& expect) {
    HardwareProfile p = builtin_profile("h100-sxm-datasheet");
    CHECK_THROWS_WITH(apply_comm_sections(sections, "x.json", p), Catch::Contains(expect) && Catch::Contains("x.json"));
  };
  refuse(R"({"collectives": {"curves": {"all_sum": {}}}})", "unknown operation \"all_sum\"");
  refuse(R"({"collectives": {"curves": {"all_reduce": {"1": [[4096, 5]]}}}})", "group size \"1\"");
  refuse(R"({"collectives": {"curves": {"all_reduce": {"4": [[4096, 5], [4096, 6]]}}}})", "collectives.curves.all_reduce.4[1]: sizes must ascend");
  refuse(R"({"collectives": {"curves": {"all_reduce": {"4": [[4096, -5]]}}}})", "collectives.curves.all_reduce.4[0][1]");
  refuse(R"({"collectives": {"curves": {}, "host_us_per_issue": "x"}})", "host_us_per_issue");
  refuse(R"({"contention": {"classes": {"gemm": {"comm_slowdown": 0.5, "compute_slowdown": 1}}}})", "contention.classes.gemm");
  refuse(R"({"contention": {"classes": {"gemm": {"comm_slowdown": 1, "compute_slowdown": 1, "start_fraction": 2}}}})",
         "start_fraction");
  refuse(R"({"contention": {"classes": {"collective": {"comm_slowdown": 1, "compute_slowdown": 1}}}})", "unknown kernel class");
  refuse(R"({"bandwidth": 1})", "unknown field \"bandwidth\"");
  refuse("[", "not valid JSON");
  // A good one round-trips through the profile writer.
  HardwareProfile p = builtin_profile("h100-sxm-datasheet");
  apply_comm_sections(R"({"collectives": {"source": "s", "host_us_per_issue": 70, "curves": {"all_gather": {"2": [[4096, 6], [8192, 7]]}}},
                          "contention": {"classes": {"gemm": {"comm_slowdown": 1.3, "compute_slowdown": 1.4, "start_fraction": 0.9}}}})",
                      "x.json", p);
  const HardwareProfile again = hardware_profile_from_json(hardware_profile_to_json(p));
  REQUIRE(again.collective_times);
  CHECK(again.collective_times->host_us_per_issue == 70);
  CHECK(again.collective_times->curves.at(CollectiveOp::AllGather).at(2).size() == 2);
  CHECK(contention_share(*again.contention, KernelClass::Gemm).start_fraction == 0.9);
  // Classes the sweep never ran borrow from one they resemble, or contend with nothing.
  CHECK(contention_share(*again.contention, KernelClass::TritonPointwise).comm_slowdown == 1.0);
}

TEST_CASE("contention law: a collective's delay beside a class and the start latency", "[cost][collectives][contention]") {
  ContentionShare s;
  s.comm_slowdown = 1.2;
  s.comm_delay_us = 30;
  // 100 us alone beside the class: 1.2 x 100 + 30 = 150 us, a rate of 1.5;
  // 1000 us alone: 1230 us; a collective of no time keeps the ratio.
  CHECK(contended_comm_slowdown(s, 100) == Approx(1.5));
  CHECK(contended_comm_slowdown(s, 1000) == Approx(1.23));
  CHECK(contended_comm_slowdown(s, 0) == 1.2);
  s.comm_delay_us = 0;
  CHECK(contended_comm_slowdown(s, 100) == 1.2);  // a law without the delay: exactly its ratio
  // The law's start latency rides on every class with a share; a class with
  // none (collectives, nodes that launch nothing) contends with nothing.
  ContentionLaw law;
  law.start_latency_us = 2.5;
  law.classes[KernelClass::Gemm] = {1.3, 1.4, 0.9, 12.0};
  law.classes[KernelClass::TritonPointwise] = {2.3, 1.1, 1.0};
  const ContentionShare gemm = contention_share(law, KernelClass::Gemm);
  CHECK(gemm.comm_delay_us == 12.0);
  CHECK(gemm.start_latency_us == 2.5);
  CHECK(contention_share(law, KernelClass::Copy).comm_slowdown == 2.3);  // copies: pointwise's
  CHECK(contention_share(law, KernelClass::Copy).start_latency_us == 2.5);
  CHECK(contention_share(law, KernelClass::Collective).start_latency_us == 0.0);
  CHECK(contention_share(law, KernelClass::None).comm_slowdown == 1.0);
}

TEST_CASE("contention law: the reader takes the new fields or names the bad one; profiles without them are as before",
          "[cost][collectives][io][contention]") {
  auto refuse = [](const std::string& sections, const std::string& expect) {
    HardwareProfile p = builtin_profile("h100-sxm-datasheet");
    CHECK_THROWS_WITH(apply_comm_sections(sections, "x.json", p), Catch::Contains(expect) && Catch::Contains("x.json"));
  };
  const std::string gemm = R"("gemm": {"comm_slowdown": 1.3, "compute_slowdown": 1.4, "start_fraction": 0.9)";
  refuse(R"({"contention": {"classes": {)" + gemm + R"(, "comm_delay_us": -1}}}})", "contention.classes.gemm.comm_delay_us");
  refuse(R"({"contention": {"classes": {)" + gemm + R"(, "comm_delay_us": "x"}}}})", "contention.classes.gemm.comm_delay_us");
  refuse(R"({"contention": {"classes": {)" + gemm + R"(, "comm_delay_us": 2e6}}}})", "contention.classes.gemm.comm_delay_us");
  refuse(R"({"contention": {"classes": {)" + gemm + R"(}}, "start_latency_us": -0.5}})", "contention.start_latency_us");
  refuse(R"({"contention": {"classes": {)" + gemm + R"(}}, "start_latency_us": null}})", "contention.start_latency_us");
  refuse(R"({"contention": {"classes": {)" + gemm + R"(}}, "start_latency_us": 1e7}})", "contention.start_latency_us");
  refuse(R"({"contention": {"classes": {)" + gemm + R"(, "comm_delay": 3}}}})", "unknown field \"comm_delay\"");
  // Read and written back.
  HardwareProfile p = builtin_profile("h100-sxm-datasheet");
  apply_comm_sections(R"({"contention": {"classes": {)" + gemm + R"(, "comm_delay_us": 14.5}}, "start_latency_us": 2.9}})", "x.json", p);
  HardwareProfile again = hardware_profile_from_json(hardware_profile_to_json(p));
  CHECK(again.contention->start_latency_us == 2.9);
  CHECK(contention_share(*again.contention, KernelClass::Gemm).comm_delay_us == 14.5);
  // Without them: zeros, and the profile writes back without them.
  HardwareProfile old = builtin_profile("h100-sxm-datasheet");
  apply_comm_sections(R"({"contention": {"classes": {)" + gemm + R"(}}}})", "x.json", old);
  CHECK(old.contention->start_latency_us == 0.0);
  CHECK(contention_share(*old.contention, KernelClass::Gemm).comm_delay_us == 0.0);
  const auto written = hardware_profile_to_json(old);
  CHECK(!written.at("contention").contains("start_latency_us"));
  CHECK(!written.at("contention").at("classes").at("gemm").contains("comm_delay_us"));
}
