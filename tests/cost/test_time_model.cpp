// Kernel classes from the graph alone, the calibrated time model in a
// profile, and the launch model's host and gaps in the simulation.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "core/cost/cost_model.h"
#include "core/cost/kernel_class.h"
#include "core/cost/law_features.h"
#include "core/io/graph_reader.h"
#include "core/io/profiles.h"
#include "core/predict/predicted.h"
#include "core/sim/simulate.h"
#include "core/util/error.h"
#include "tests/test_util.h"

using namespace schedlab;
using Catch::Detail::Approx;

namespace {

std::string law(double fixed, double c, double m, double k = 1) {
  return R"({"fixed_us":)" + std::to_string(fixed) + R"(,"compute_factor":)" + std::to_string(c) + R"(,"memory_factor":)" +
         std::to_string(m) + R"(,"kernels_per_node":)" + std::to_string(k) + "}";
}

std::string profile_text(const std::string& drop = "") {
  const std::pair<const char*, std::string> laws[] = {
      {"gemm", law(2, 1.25, 0)},          {"attention", law(5, 2, 0, 3)},        {"convolution", law(4, 2, 0)},
      {"attention_backward", law(5, 2, 0, 3)}, {"convolution_backward", law(4, 2, 0)},
      {"triton_pointwise", law(3, 0, 1.5)}, {"triton_reduction", law(3, 0, 1.5)}, {"extern", law(3, 0, 1.5)},
      {"copy", law(3, 0, 1.5)}};
  std::string text;
  for (const auto& [name, l] : laws)
    if (drop != name) text += std::string(text.empty() ? "" : ",") + "\"" + name + "\":" + l;
  return R"({"base":"h100-sxm","name":"fitted","time_model":{"laws":{)" + text +
         R"(},"launch_gap_us":1.5,"cudagraph_gap_us":0.5,"host_us_per_kernel":8,"host_us_per_extern":12,"host_call_us":20}})";
}

}  // namespace

TEST_CASE("kernel classes come from kind, kernel name and layouts", "[cost][time]") {
  Graph g = load_graph_file(test::data_path("exported/tp_block_0_fwd.post.json"));
  auto cls = [&](const char* name) { return std::string(to_string(classify_node(g, g.nodes[g.find_node(name)]))); };
  CHECK(cls("op5") == "gemm");          // extern_kernels.addmm
  CHECK(cls("op6") == "attention");     // _scaled_dot_product_cudnn_attention
  CHECK(cls("op7") == "none");          // a multi-output item: launches nothing
  CHECK(cls("op12") == "collective");
  CHECK(cls("op13") == "none");         // wait
  CHECK(cls("op20") == "triton_pointwise");
  CHECK(cls("op0_op1_op3_op4") == "triton_reduction");
  Graph conv = load_graph_file(test::data_path("exported/convnet_bn_1_bwd.post.json"));
  int convolutions = 0;
  for (const Node& n : conv.nodes) convolutions += classify_node(conv, n) == KernelClass::ConvolutionBackward;
  CHECK(convolutions > 0);
  for (KernelClass c : kKernelClassesWithLaws) CHECK(parse_kernel_class(to_string(c)) == c);
  // A random fill (stochastic depth's `aten.randint.low_out`) is one
  // elementwise kernel, a copy's kin, not a library algorithm like topk.
  Graph convnext = load_graph_file(test::data_path("exported/convnext_step_0_fwd.post.json"));
  CHECK(classify_node(convnext, convnext.nodes[convnext.find_node("op33")]) == KernelClass::Copy);
  Graph moe = load_graph_file(test::data_path("exported/moe_dropless_0_inf.post.json"));
  CHECK(classify_node(moe, moe.nodes[moe.find_node("op2")]) == KernelClass::Extern);  // topk
}

TEST_CASE("a profile's time model prices nodes by class; missing fields are named", "[cost][time]") {
  HardwareProfile hw = parse_hardware_profile(profile_text());
  REQUIRE(hw.time_model);
  Graph g = load_graph_file(test::data_path("exported/tp_block_0_fwd.post.json"));
  const NodeId mm = g.find_node("op5");
  const CostFacts facts = cost_facts(g);
  RuntimeEstimate e = calibrated_node_runtime(g, mm, facts, hw);
  CHECK(e.source == "calibrated");
  const LawFeatures f = law_features(g, mm, facts, hw, {});
  const double compute = f[static_cast<std::size_t>(LawTerm::Compute)];
  CHECK(e.us == Approx(2 + 1.25 * compute));
  CHECK(compute == Approx(805306368.0 / peak_flops_for_dtype(hw, node_dtype(g, g.nodes[mm])) * 1e6));
  CHECK(calibrated_node_runtime(g, g.find_node("op7"), facts, hw).us == 0.0);
  CHECK(calibrated_runtimes_us(g, hw)[mm] == e.us);
  // Inductor's runtime_us is never what the calibrated model reads.
  CHECK(e.us != Approx(*g.nodes[mm].runtime_us));
  // A profile written before the f32 compute factor: f32 compute takes the
  // one compute factor; before the convolution family terms, depthwise and
  // grouped convolutions take the dense ones.
  const ClassLaw& gemm = hw.time_model->laws.at(KernelClass::Gemm);
  CHECK(gemm[LawTerm::Fp32Compute] == 1.25);
  CHECK_FALSE(gemm.routes_conv_families);
  // A profile written before the convolution host figures: a cuDNN call
  // costs the host what any extern call does.
  CHECK(hw.time_model->host_us_per_convolution == 12);
  CHECK(hw.time_model->host_us_per_convolution_backward == 12);
  CHECK(host_us_per_node(*hw.time_model, KernelClass::ConvolutionBackward) == 12);
  CHECK(host_us_per_node(*hw.time_model, KernelClass::TritonReduction) == 8);
  CHECK(host_us_per_node(*hw.time_model, KernelClass::None) == 0);
  // And before the collective and item figures: a collective call costs the
  // host what an extern call does, its own kernels and item nodes nothing.
  CHECK(hw.time_model->host_us_per_collective == 12);
  CHECK(host_us_per_node(*hw.time_model, KernelClass::Collective) == 12);
  CHECK(hw.time_model->host_us_per_collective_kernel == 0);
  CHECK(hw.time_model->host_us_per_item == 0);
  // And before the per-input figure: 0 (the call's figure holds it).
  CHECK(hw.time_model->host_us_per_input == 0);
  // And before the per-allocation figure: 0 (the other figures hold it).
  CHECK(hw.time_model->host_us_per_allocation == 0);
  // And before the call's epilogue: all of the call's own cost before its
  // first launch (0 after the last).
  CHECK(hw.time_model->host_call_epilogue_us == 0);
  // And before the host's speed: not known (0), which at_host_speed leaves alone.
  CHECK(hw.time_model->host_probe_us == 0);
  CHECK(at_host_speed(*hw.time_model, 120).host_us_per_kernel == hw.time_model->host_us_per_kernel);
  // And before the attention dropout term: no cost per score; the writer
  // then writes it (0), and reads back a factor it is given.
  const ClassLaw& attention = hw.time_model->laws.at(KernelClass::Attention);
  CHECK(attention[LawTerm::AttentionDropout] == 0);
  CHECK(hardware_profile_to_json(hw)["time_model"]["laws"]["attention"]["dropout_factor"] == 0.0);
  // Round trip.
  HardwareProfile back = hardware_profile_from_json(hardware_profile_to_json(hw));
  CHECK(hardware_profile_to_json(back) == hardware_profile_to_json(hw));
  hw.time_model->laws.at(KernelClass::AttentionBackward)[LawTerm::AttentionDropout] = 0.75;
  back = hardware_profile_from_json(hardware_profile_to_json(hw));
  CHECK(back.time_model->laws.at(KernelClass::AttentionBackward)[LawTerm::AttentionDropout] == 0.75);
  // Missing pieces are named.
  CHECK_THROWS_WITH(parse_hardware_profile(profile_text("copy")), Catch::Contains("time_model.laws: missing field \"copy\""));
  std::string negative_probe = profile_text();
  negative_probe.replace(negative_probe.find(R"("launch_gap_us":1.5,)"), 20, R"("launch_gap_us":1.5,"host_probe_us":-3,)");
  CHECK_THROWS_WITH(parse_hardware_profile(negative_probe), Catch::Contains("host_probe_us"));
  std::string huge_probe = profile_text();
  huge_probe.replace(huge_probe.find(R"("launch_gap_us":1.5,)"), 20, R"("launch_gap_us":1.5,"host_probe_us":1e300,)");
  CHECK_THROWS_WITH(parse_hardware_profile(huge_probe),
                    Catch::Contains("time_model.host_probe_us: expected 0 (not known) or µs between 0.001 and 1000000"));
  std::string long_epilogue = profile_text();  // a part of host_call_us, no more
  long_epilogue.replace(long_epilogue.find(R"("launch_gap_us":1.5,)"), 20, R"("launch_gap_us":1.5,"host_call_epilogue_us":1e9,)");
  CHECK_THROWS_WITH(parse_hardware_profile(long_epilogue), Catch::Contains("time_model.host_call_epilogue_us: 1000000000.000000 is more than host_call_us"));
  std::string negative_epilogue = profile_text();
  negative_epilogue.replace(negative_epilogue.find(R"("launch_gap_us":1.5,)"), 20, R"("launch_gap_us":1.5,"host_call_epilogue_us":-1,)");
  CHECK_THROWS_WITH(parse_hardware_profile(negative_epilogue), Catch::Contains("host_call_epilogue_us"));
  std::string no_gap = profile_text();
  no_gap.replace(no_gap.find(R"("launch_gap_us":1.5,)"), 20, "");
  CHECK_THROWS_WITH(parse_hardware_profile(no_gap), Catch::Contains("missing field \"launch_gap_us\""));
  std::string no_fixed = profile_text();
  no_fixed.replace(no_fixed.find(R"("fixed_us":2.000000,)"), 20, "");
  CHECK_THROWS_WITH(parse_hardware_profile(no_fixed), Catch::Contains("time_model.laws.gemm: missing field \"fixed_us\""));
}

TEST_CASE("a 16-bit matmul is priced at least its FLOPs at the sustained tensor-core rate", "[cost][time]") {
  HardwareProfile hw = parse_hardware_profile(profile_text());
  REQUIRE(hw.time_model);
  CHECK(hw.time_model->sustained_tensor_flops_per_s == 0);  // a profile written before it: the laws alone
  CHECK_FALSE(hardware_profile_to_json(hw)["time_model"].contains("sustained_tensor_flops_per_s"));
  Graph g = load_graph_file(test::data_path("exported/tp_block_0_fwd.post.json"));
  const NodeId mm = g.find_node("op5");  // bf16, 805,306,368 FLOPs
  const CostFacts facts = cost_facts(g);
  const double law = calibrated_node_runtime(g, mm, facts, hw).us;
  hw.time_model->sustained_tensor_flops_per_s = 1e14;  // 8.05 µs at this rate: above the law's ~3 µs
  CHECK(calibrated_node_runtime(g, mm, facts, hw).us == Approx(805306368.0 / 1e14 * 1e6));
  hw.time_model->sustained_tensor_flops_per_s = 1e15;  // 0.8 µs: the law's time stands
  CHECK(calibrated_node_runtime(g, mm, facts, hw).us == law);
  // Only 16-bit work of the matmul classes: f32 runs on other units, and
  // other classes keep their laws whatever their FLOPs.
  CHECK(sustained_us(*hw.time_model, KernelClass::GemmF32, 1.0, 0.0) == 1.0);
  CHECK(sustained_us(*hw.time_model, KernelClass::Attention, 1.0, 1e12) == 1.0);
  CHECK(sustained_us(*hw.time_model, KernelClass::GemmUnaligned, 1.0, 1e12) == Approx(1000.0));
  // The profile carries it, and refuses what is not a rate.
  const HardwareProfile back = hardware_profile_from_json(hardware_profile_to_json(hw));
  CHECK(back.time_model->sustained_tensor_flops_per_s == 1e15);
  std::string negative = profile_text();
  negative.replace(negative.find(R"("launch_gap_us":1.5,)"), 20, R"("launch_gap_us":1.5,"sustained_tensor_flops_per_s":-1,)");
  CHECK_THROWS_WITH(parse_hardware_profile(negative), Catch::Contains("time_model.sustained_tensor_flops_per_s: expected 0 (none) or FLOP/s"));
  std::string tiny = profile_text();  // 1e-300 FLOP/s would price any matmul past every finite time
  tiny.replace(tiny.find(R"("launch_gap_us":1.5,)"), 20, R"("launch_gap_us":1.5,"sustained_tensor_flops_per_s":1e-300,)");
  CHECK_THROWS_WITH(parse_hardware_profile(tiny), Catch::Contains("sustained_tensor_flops_per_s"));
  // fit-profile --sustained FILE: the fitted rate, set into the time model.
  HardwareProfile fitted = parse_hardware_profile(profile_text());
  apply_sustained_rate(R"({"sustained_tensor_flops_per_s": 8.1e14, "source": "s"})", "fit.json", fitted);
  CHECK(fitted.time_model->sustained_tensor_flops_per_s == 8.1e14);
  auto refuse = [](const std::string& text, const std::string& expect) {
    HardwareProfile p = parse_hardware_profile(profile_text());
    CHECK_THROWS_WITH(apply_sustained_rate(text, "fit.json", p), Catch::Contains("fit.json: ") && Catch::Contains(expect));
  };
  refuse("{}", "missing field \"sustained_tensor_flops_per_s\"");
  refuse(R"({"sustained_tensor_flops_per_s": 0})", "expected FLOP/s between 1e9 and 1e18");
  refuse(R"({"sustained_tensor_flops_per_s": "fast"})", "expected FLOP/s between 1e9 and 1e18");
  refuse(R"({"sustained_tensor_flops_per_s": 1e300})", "expected FLOP/s between 1e9 and 1e18");
  refuse("[1]", "expected a JSON object");
  refuse("{", "not valid JSON");
  HardwareProfile datasheet = builtin_profile("h100-sxm-datasheet");
  CHECK_THROWS_WITH(apply_sustained_rate(R"({"sustained_tensor_flops_per_s": 8e14})", "fit.json", datasheet),
                    Catch::Contains("fit.json: the profile has no time model"));
  // The built-in profiles carry the rate fitted on the first 4 x H100 lease's steps.
  CHECK(builtin_profile("h100-sxm").time_model->sustained_tensor_flops_per_s == Approx(8.16e14).epsilon(0.01));
  CHECK(builtin_profile("h200").time_model->sustained_tensor_flops_per_s == builtin_profile("h100-sxm").time_model->sustained_tensor_flops_per_s);
}

TEST_CASE("the host is a third resource: launch-bound graphs take the host's time", "[sim][time]") {
  HardwareProfile hw = parse_hardware_profile(profile_text());
  Graph g = load_graph_file(test::data_path("exported/tp_block_0_fwd.post.json"));
  Prediction p = predict(g, g.baseline_order(), hw);
  CHECK(p.runtime_source == "calibrated");
  // Kernel launches: every node but the multi-output items and the waits.
  int launched = 0, triton = 0;
  for (const Node& n : g.nodes) {
    KernelClass c = classify_node(g, n);
    if (c == KernelClass::None) continue;
    ++launched;
    triton += c == KernelClass::TritonPointwise || c == KernelClass::TritonReduction;
  }
  CHECK(launched == 11);
  // Host: 20 + 8 us per Triton launch + 12 us per extern call; the wall is at least the host's.
  CHECK(p.wall_time_us >= 20 + 8 * triton + 12 * (launched - triton));
  CHECK(p.wall_time_us > p.kernel_time_us);
  // CUDA graphs: no host, 0.5 us gaps.
  CHECK(p.wall_time_us_cudagraphs < p.wall_time_us);
  CHECK(p.wall_time_us_cudagraphs >= p.kernel_time_us - 1e-9 - p.class_time_us[KernelClass::Collective]);
  // A datasheet profile has no launch model: the wall is the two-stream step.
  Prediction d = predict(g, g.baseline_order(), builtin_profile("h100-sxm-datasheet"));
  CHECK(d.runtime_source == "roofline");
  CHECK(d.wall_time_us == Approx(d.wall_time_us_cudagraphs));
  REQUIRE(d.inductor_kernel_time_us);
}

TEST_CASE("the host pays each buffer the wrapper allocates afresh, not one it reuses", "[sim][time]") {
  HardwareProfile hw = parse_hardware_profile(profile_text());
  const Graph g = load_graph_file(test::data_path("exported/kv_decode_0_inf.post.json"));
  const ExecutedMemory executed = estimate_memory_as_executed(g, g.baseline_order());
  const std::vector<int> fresh = fresh_allocations_per_node(g, executed);
  int allocated = 0, reused = 0;
  for (const ExecutedEvent& e : executed.events) {
    allocated += e.kind == ExecutedEvent::Kind::Allocate && e.buf != kNone;
    reused += e.kind == ExecutedEvent::Kind::Reuse;
  }
  int counted = 0;
  for (int n : fresh) counted += n;
  CHECK(counted == allocated);
  CHECK(reused > 0);  // a KV-cache decode step reuses most of its buffers
  // 3 us per fresh allocation, at the allocating node, default mode only.
  const LaunchModel without = launch_path(g, price_graph(g, hw), false, &executed);
  hw.time_model->host_us_per_allocation = 3;
  const Pricing pricing = price_graph(g, hw);
  const LaunchModel with = launch_path(g, pricing, false, &executed);
  for (NodeId v = 0; v < g.num_nodes(); ++v) CHECK(with.host_us[v] == Approx(without.host_us[v] + 3.0 * fresh[v]));
  const LaunchModel no_memory = launch_path(g, pricing, false, nullptr);
  CHECK(no_memory.host_us == without.host_us);
  const LaunchModel graphs = launch_path(g, pricing, true, &executed);
  for (double us : graphs.host_us) CHECK(us == 0);
  // predict prices them over the order it is given.
  const double wall = predict(g, g.baseline_order(), hw).wall_time_us;
  hw.time_model->host_us_per_allocation = 0;
  CHECK(wall > predict(g, g.baseline_order(), hw).wall_time_us);
}

// The law and host terms are one table each (core/cost/law_terms.def,
// host_terms.def): every row reaches the profile writer and reader, scales
// with the host's speed when it is a host term, and is named in the docs.
TEST_CASE("every law and host term is a row that profiles, host speed and docs follow", "[cost][time][terms]") {
  HardwareProfile hw = builtin_profile("h100-sxm");
  TimeModel& m = *hw.time_model;
  for (const HostTermInfo& t : kHostTermInfo) m.*t.member = 1.0 + static_cast<double>(t.term);
  m.host_call_epilogue_us = 0.5 * m.host_call_us;  // a part of the call's cost
  for (auto& [cls, law] : m.laws)
    for (const LawTermInfo& t : kLawTermInfo) law[t.term] = 0.5 + static_cast<double>(t.term);
  const HardwareProfile back = hardware_profile_from_json(hardware_profile_to_json(hw));
  CHECK(back.time_model->host_call_epilogue_us == m.host_call_epilogue_us);
  CHECK(at_host_speed(m, 2 * m.host_probe_us).host_call_epilogue_us == 2 * m.host_call_epilogue_us);
  for (const HostTermInfo& t : kHostTermInfo) {
    INFO(t.field);
    CHECK((*back.time_model).*t.member == m.*t.member);
    CHECK(at_host_speed(m, 2 * m.host_probe_us).*t.member == 2 * (m.*t.member));
  }
  for (const auto& [cls, law] : back.time_model->laws)
    for (const LawTermInfo& t : kLawTermInfo) {
      INFO(t.field);
      CHECK(law[t.term] == 0.5 + static_cast<double>(t.term));
    }
#ifndef __EMSCRIPTEN__
  std::ifstream in(test::data_path("../../docs/cost-model.md"));
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  for (const LawTermInfo& t : kLawTermInfo) {
    INFO(t.field);
    CHECK(doc.find("`" + std::string(t.field) + "`") != std::string::npos);
  }
  for (const HostTermInfo& t : kHostTermInfo) {
    INFO(t.field);
    CHECK(doc.find("`" + std::string(t.field) + "`") != std::string::npos);
  }
  CHECK(doc.find("`host_call_epilogue_us`") != std::string::npos);
#endif
}

// A node's host counts price the launch path and the fit alike: one call
// term per node by class, an item's statement, the fake group's copies.
TEST_CASE("host term counts per call and per node", "[cost][time][terms]") {
  const Graph g = load_graph_file(test::data_path("exported/fsdp_step_0_inf.post.json"));
  const HostCounts call = call_host_counts(g);
  CHECK(call[static_cast<std::size_t>(HostTerm::Call)] == 1);
  CHECK(call[static_cast<std::size_t>(HostTerm::Input)] == g.num_inputs);
  const TimeModel& m = *builtin_profile("h200").time_model;
  for (const Node& n : g.nodes) {
    const KernelClass c = classify_node(g, n);
    const HostCounts counts = node_host_counts(n, c, 3);
    double calls = 0;
    for (const HostTermInfo& t : kHostTermInfo)
      if (t.term != HostTerm::CollectiveKernel) calls += counts[static_cast<std::size_t>(t.term)];
    INFO(n.name);
    CHECK(calls == (c != KernelClass::None || is_item_node(g, n) ? 1 : 0));
    CHECK(counts[static_cast<std::size_t>(HostTerm::CollectiveKernel)] == (c == KernelClass::Collective ? 3 : 0));
    if (c != KernelClass::None) CHECK(host_us(m, node_host_counts(n, c, 0)) == host_us_per_node(m, c));
  }
}
