// Cost model: hand-computed roofline and collective cases (docs/cost-model.md).
#include <catch2/catch.hpp>

#include <cmath>

#include "core/cost/cost_model.h"
#include "core/io/graph_reader.h"
#include "core/io/options.h"
#include "core/io/plan_writer.h"
#include "core/io/profiles.h"
#include "core/util/error.h"

using namespace schedlab;
using Catch::Detail::Approx;

namespace {

// A 2048x1024x1024 matmul in bf16 and a 1M-element f32 add, plus a collective.
const char* kCostGraph = R"({"format":"schedgraph/1","world_size":8,
  "inputs":[{"name":"a","bytes":4194304},{"name":"b","bytes":2097152},{"name":"x","bytes":4194304}],
  "outputs":["mm","add","ar","w"],
  "nodes":[
    {"name":"op_mm","kind":"extern","flops":4294967296,
     "outputs":[{"name":"mm","bytes":4194304,"dtype":"bf16"}],
     "reads":[{"name":"a","dep":"star","bytes":4194304},{"name":"b","dep":"star","bytes":2097152}],
     "writes":[{"name":"mm","dep":"star","bytes":4194304}]},
    {"name":"op_add","kind":"pointwise","group":[1048576,1],
     "outputs":[{"name":"add","bytes":4194304,"dtype":"f32"}],
     "reads":[{"name":"x","bytes":4194304},{"name":"mm","dep":"weak","bytes":999}],
     "writes":[{"name":"add","bytes":4194304}]},
    {"name":"op_ar","kind":"collective","collective":{"op":"all_reduce","bytes":1048576},
     "outputs":[{"name":"ar","bytes":1048576}],"reads":[{"name":"add","dep":"star","bytes":1048576}]},
    {"name":"op_w","kind":"wait","outputs":[{"name":"w","bytes":0,"layout":"none"}],"reads":[{"name":"ar","dep":"star"}]},
    {"name":"op_given","kind":"pointwise","runtime_us":42.5,"reads":[{"name":"x","bytes":4194304}]}
  ]})";

}  // namespace

TEST_CASE("roofline: compute-bound bf16 matmul and memory-bound f32 add", "[cost]") {
  Graph g = load_graph(kCostGraph);
  const HardwareProfile& h200 = builtin_profile("h200");
  // 4294967296 / 989.4e12 s = 4.3410 us; bytes 10485760 / 4.8e12 = 2.1845 us -> compute wins.
  RuntimeEstimate mm = estimate_node_runtime(g, 0, h200);
  CHECK(mm.source == "roofline");
  CHECK(mm.us == Approx(4294967296.0 / 989.4e12 * 1e6));
  CHECK(mm.us == Approx(4.3410).epsilon(1e-4));
  // add: no flops -> 8388608 bytes (the weak dep moves nothing) / 4.8e12 = 1.7476 us.
  RuntimeEstimate add = estimate_node_runtime(g, 1, h200);
  CHECK(add.us == Approx(8388608.0 / 4.8e12 * 1e6));
  // On an A100 the same matmul: 4294967296 / 312e12 = 13.766 us.
  CHECK(estimate_node_runtime(g, 0, builtin_profile("a100-80gb")).us == Approx(13.766).epsilon(1e-4));
}

TEST_CASE("runtime_us overrides the model unless told not to trust it", "[cost]") {
  Graph g = load_graph(kCostGraph);
  const HardwareProfile& hw = builtin_profile("h100-sxm");
  CHECK(estimate_node_runtime(g, 4, hw).us == 42.5);
  CHECK(estimate_node_runtime(g, 4, hw).source == "runtime_us");
  // Untrusted: 4194304 bytes read / 3.35e12.
  CHECK(estimate_node_runtime(g, 4, hw, false).us == Approx(4194304.0 / 3.35e12 * 1e6));
  CHECK(estimate_node_runtime(g, 3, hw).us == 0.0);
  CHECK(estimate_node_runtime(g, 3, hw).source == "none");
  auto all = estimate_runtimes_us(g, hw);
  REQUIRE(all.size() == 5);
  CHECK(all[2] == estimate_node_runtime(g, 2, hw).us);
}

TEST_CASE("collectives: ring and tree inside a node", "[cost]") {
  // The datasheet model (the built-in h200 prices collectives by its measured curves instead).
  const HardwareProfile& hw = builtin_profile("h200-datasheet");  // NVLink 450 GB/s, 0.6 us per step
  const double mib = 1048576;
  // all-reduce, 8 ranks, 1 MiB: ring 14 steps * 0.6 + 1 MiB * 1.75 / 450e9
  auto ar = estimate_collective_algorithms(CollectiveOp::AllReduce, 1048576, 8, 8, hw);
  CHECK_FALSE(ar.crosses_nodes);
  CHECK(ar.ring_us == Approx(8.4 + mib * 1.75 / 450e9 * 1e6));
  // tree: 2 * 3 steps * 0.6 + 1 MiB * 2 / 450e9
  CHECK(ar.tree_us == Approx(3.6 + mib * 2 / 450e9 * 1e6));
  CHECK(estimate_collective_us(CollectiveOp::AllReduce, 1048576, 8, 8, hw) == Approx(std::min(ar.ring_us, ar.tree_us)));
  // 1 GiB: bandwidth dominates, ring (factor 1.75) beats tree (factor 2).
  auto big = estimate_collective_algorithms(CollectiveOp::AllReduce, 1 << 30, 8, 8, hw);
  CHECK(big.ring_us < big.tree_us);
  CHECK(estimate_collective_us(CollectiveOp::AllReduce, 1 << 30, 8, 8, hw) == Approx(8.4 + 1073741824.0 * 1.75 / 450e9 * 1e6));

  // all-gather, 4 ranks, 8 MiB output: 3 * 0.6 + 8 MiB * 3/4 / 450e9
  CHECK(estimate_collective_us(CollectiveOp::AllGather, 8 * 1048576, 4, 4, hw) == Approx(1.8 + 8 * mib * 0.75 / 450e9 * 1e6));
  // reduce-scatter, 4 ranks, 2 MiB output = 8 MiB input: same as the all-gather above.
  CHECK(estimate_collective_us(CollectiveOp::ReduceScatter, 2 * 1048576, 4, 4, hw) ==
        Approx(estimate_collective_us(CollectiveOp::AllGather, 8 * 1048576, 4, 4, hw)));
  // all-to-all (n-1)/n, broadcast factor 1.
  CHECK(estimate_collective_us(CollectiveOp::AllToAll, 1048576, 2, 2, hw) == Approx(0.6 + mib * 0.5 / 450e9 * 1e6));
  CHECK(estimate_collective_us(CollectiveOp::Broadcast, 1048576, 2, 2, hw) == Approx(0.6 + mib / 450e9 * 1e6));
  // One rank: nothing moves.
  CHECK(estimate_collective_us(CollectiveOp::AllReduce, 1048576, 1, 1, hw) == 0.0);
}

TEST_CASE("collectives across nodes use the network", "[cost]") {
  const HardwareProfile& hw = builtin_profile("h100-sxm");  // network 50 GB/s, 5 us per step
  auto ar = estimate_collective_algorithms(CollectiveOp::AllReduce, 1 << 30, 16, 16, hw);
  CHECK(ar.crosses_nodes);
  CHECK(ar.ring_us == Approx(30 * 5.0 + 1073741824.0 * (30.0 / 16) / 50e9 * 1e6));
  CHECK(ar.tree_us == Approx(8 * 5.0 + 1073741824.0 * 2 / 50e9 * 1e6));
  // A group of 8 in a 16-rank job stays inside one node.
  CHECK_FALSE(estimate_collective_algorithms(CollectiveOp::AllReduce, 1024, 8, 16, hw).crosses_nodes);
}

TEST_CASE("a node's collective uses the graph's world size and the op's group", "[cost]") {
  Graph g = load_graph(kCostGraph);
  const HardwareProfile& hw = builtin_profile("b200");
  RuntimeEstimate e = estimate_node_runtime(g, 2, hw);
  CHECK(e.source == "collective");
  CHECK(e.us == Approx(estimate_collective_us(CollectiveOp::AllReduce, 1048576, 8, 8, hw)));
}

TEST_CASE("hardware profiles: built-ins and user files", "[cost]") {
  CHECK(builtin_profile_names() ==
        std::vector<std::string>{"h100-sxm", "h200", "h100-sxm-datasheet", "h200-datasheet", "a100-80gb", "b200"});
  CHECK(builtin_profile(kDefaultHardwareProfile).dram_bytes_per_s == 4.8e12);
  CHECK_THROWS_WITH(builtin_profile("h300"), Catch::Contains("h100-sxm, h200, h100-sxm-datasheet, h200-datasheet, a100-80gb, b200"));

  HardwareProfile p = parse_hardware_profile(R"({"base":"h100-sxm","name":"my-h100","dram_bytes_per_s":3e12,
      "flops_per_s":{"bf16":800e12},"kernel_launch_us":3})");
  CHECK(p.name == "my-h100");
  CHECK(p.dram_bytes_per_s == 3e12);
  CHECK(peak_flops_for_dtype(p, "bf16") == 800e12);
  CHECK(peak_flops_for_dtype(p, "f16") == 989.4e12);  // kept from the base
  CHECK(peak_flops_for_dtype(p, "i64") == 67e12);     // unknown dtype: the f32 peak
  CHECK(roofline_us(0, 3000000, "f32", p) == Approx(1.0 + 3.0));

  // Round trip through JSON.
  HardwareProfile q = parse_hardware_profile(hardware_profile_json(p));
  CHECK(q.flops_per_s == p.flops_per_s);
  CHECK(q.kernel_launch_us == 3.0);

  CHECK_THROWS_WITH(parse_hardware_profile(R"({"name":"x","dram_bytes_per_s":1})"), Catch::Contains("nvlink_bytes_per_s"));
  CHECK_THROWS_WITH(parse_hardware_profile(R"({"base":"h200","dram_bytes_per_s":-1})"), Catch::Contains("dram_bytes_per_s"));
  CHECK_THROWS_WITH(parse_hardware_profile(R"({"base":"h200","flops_per_s":{"bf16":"fast"}})"), Catch::Contains("flops_per_s.bf16"));
  CHECK_THROWS_WITH(parse_hardware_profile(R"({"base":"h200","dram_bandwidth":1})"), Catch::Contains("unknown field \"dram_bandwidth\""));
  CHECK_THROWS_WITH(parse_hardware_profile(R"({"base":"tpu"})"), Catch::Contains("base"));
  CHECK_THROWS_WITH(parse_hardware_profile("[1,"), Catch::Contains("not valid JSON"));
  CHECK_THROWS_WITH(parse_hardware_profile(R"({"base":"h200","ranks_per_node":0})"), Catch::Contains("ranks_per_node"));
}

TEST_CASE("huge group sizes, payloads and runtimes fail loudly or stay finite, never hang", "[cost]") {
  const HardwareProfile& hw = builtin_profile("h100-sxm");
  // Groups above 2^62 once overflowed the tree depth's doubling loop (a hang).
  const std::int64_t huge = (std::int64_t{1} << 62) + 1;
  auto ar = estimate_collective_algorithms(CollectiveOp::AllReduce, 1024, huge, huge, hw);
  CHECK(ar.tree_us == Approx(2 * 63 * 5.0 + 1024.0 * 2 / 50e9 * 1e6));
  CHECK(std::isfinite(estimate_collective_us(CollectiveOp::AllReduce, 1024, INT64_MAX, INT64_MAX, hw)));
  CHECK(std::isfinite(estimate_collective_us(CollectiveOp::ReduceScatter, INT64_MAX, INT64_MAX, INT64_MAX, hw)));
  // A profile slow enough to make a time infinite is an error naming the node.
  HardwareProfile slow = hw;
  slow.dram_bytes_per_s = 1e-300;
  Graph g = load_graph(kCostGraph);
  CHECK_THROWS_WITH(estimate_node_runtime(g, 1, slow), Catch::Contains("node \"op_add\"") && Catch::Contains("not a finite"));
  slow = hw;
  slow.nvlink_bytes_per_s = 1e-300;
  CHECK_THROWS_WITH(estimate_node_runtime(g, 2, slow), Catch::Contains("node \"op_ar\"") && Catch::Contains("not a finite"));
  // Finite runtimes whose sum is not.
  CHECK_THROWS_WITH(add_us(1.7e308, 1.7e308, "runtime total"), Catch::Contains("runtime total"));
}

TEST_CASE("in-place collectives are priced by the buffer they mutate", "[cost]") {
  // all_reduce_ as DTensor / functional collectives export it: 0 payload
  // bytes, the reduced buffer named by the output's mutation_of.
  Graph g = load_graph(R"({"format":"schedgraph/1","world_size":4,
    "inputs":[{"name":"x","bytes":8388608}],"outputs":["w"],
    "nodes":[
      {"name":"mm","kind":"extern","outputs":[{"name":"buf0","bytes":8388608}],"reads":[{"name":"x","dep":"star","bytes":8388608}],
       "writes":[{"name":"buf0","dep":"star","bytes":8388608}]},
      {"name":"ar","kind":"collective","collective":{"op":"_c10d_functional.all_reduce_.default","group_size":4,"bytes":0},
       "outputs":[{"name":"buf1","bytes":0,"layout":"none","aliases":["buf0"]},{"name":"buf2","bytes":0,"layout":"none","mutation_of":"buf0"}],
       "reads":[{"name":"buf0","dep":"star","bytes":8388608}]},
      {"name":"w","kind":"wait","outputs":[{"name":"w","bytes":0,"layout":"none"}],"reads":[{"name":"buf2","dep":"star"}]},
      {"name":"ag","kind":"collective","collective":{"op":"all_gather_into_tensor","group_size":4,"bytes":0},
       "outputs":[{"name":"buf3","bytes":0,"layout":"none"}],"reads":[{"name":"x","dep":"star","bytes":8388608}]},
      {"name":"given","kind":"collective","collective":{"op":"all_reduce","group_size":4,"bytes":1024},
       "outputs":[{"name":"buf4","bytes":0,"layout":"none"}],"reads":[{"name":"x","dep":"star","bytes":8388608}]}
    ]})");
  const HardwareProfile& hw = builtin_profile("h100-sxm-datasheet");
  CollectivePayload p = collective_payload(g, g.nodes[1]);
  CHECK(p.bytes == 8388608);
  CHECK(p.source == "mutated_buffer");
  // 8 MiB over 4 ranks: ring 6 steps x 0.6 + 8 MiB x 1.5 / 450 GB/s = 31.56 us (it was 2.4 us of latency alone).
  CHECK(estimate_node_runtime(g, 1, hw).us == Approx(6 * 0.6 + 8388608.0 * 1.5 / 450e9 * 1e6));
  // Nothing written has a size: the input, times the group for a gather.
  CHECK(collective_payload(g, g.nodes[3]).bytes == 4 * 8388608);
  CHECK(collective_payload(g, g.nodes[3]).source == "read_buffer");
  // A payload the file gives wins.
  CHECK(collective_payload(g, g.nodes[4]).bytes == 1024);
  CHECK(collective_payload(g, g.nodes[4]).source == "collective.bytes");
}

TEST_CASE("an inline hardware profile in the options is read by the one profile reader", "[cost][options]") {
  // A fitted profile file as the page's "Load profile…" sends it: time_model included.
  const std::string fitted = read_text_file(std::string(SCHEDLAB_TEST_DATA) + "/../../profiles/h200.json");
  PlanOptions opts = parse_plan_options(R"({"hardware": )" + fitted + "}");
  CHECK(opts.hardware.name == load_hardware_profile("h200").name);
  CHECK(opts.hardware.dram_bytes_per_s == load_hardware_profile("h200").dram_bytes_per_s);
  CHECK_THROWS_WITH(parse_plan_options(R"({"hardware": {"name": "x"}})"), Catch::Contains("options.hardware"));
  CHECK_THROWS_AS(parse_plan_options(R"({"hardware": {"name": "x", "dram_bytes_per_s": 1e400}})"), OptionError);
}
