// The tile terms of the calibrated time model (core/cost/implicit_gemm.h):
// implicit-GEMM shapes read off exported graphs, wave quantization, narrow
// input channels, and the law fields that carry them.
#include <catch2/catch.hpp>

#include "core/cost/cost_model.h"
#include "core/cost/implicit_gemm.h"
#include "core/cost/law_features.h"
#include "core/io/graph_reader.h"
#include "core/io/profiles.h"
#include "core/util/error.h"
#include "tests/test_util.h"

using namespace schedlab;
using Catch::Detail::Approx;

namespace {

ImplicitGemm shape_of(const Graph& g, const char* node) {
  const Node& n = g.nodes[g.find_node(node)];
  auto s = implicit_gemm_shape(g, n, classify_node(g, n));
  REQUIRE(s);
  return *s;
}

}  // namespace

TEST_CASE("matmul and convolution shapes come from outputs, flops and the buffers read", "[cost][time]") {
  // addmm [1024, 384] with K = 1024.
  Graph tp = load_graph_file(test::data_path("exported/tp_block_0_fwd.post.json"));
  ImplicitGemm mm = shape_of(tp, "op5");
  CHECK(mm.batch == 1);
  CHECK(mm.m == 1024);
  CHECK(mm.n == 384);
  CHECK(mm.k == 1024);
  CHECK(narrow_channel_k(mm) == 0);
  // ViT's patch embedding: 8 x 3 x 224 x 224 -> 8 x 384 x 14 x 14, 16 x 16
  // patches. Its input is a node's buffer with a shape: 3 channels, 6 bytes
  // in bf16, padded to 8 channels: K = 8 x 256.
  Graph vit = load_graph_file(test::data_path("exported/vit_0_fwd.post.json"));
  ImplicitGemm patch = shape_of(vit, "op2");
  CHECK(patch.m == 8 * 14 * 14);
  CHECK(patch.n == 384);
  CHECK(patch.k == 3 * 16 * 16);
  CHECK(patch.in_channels == 3);
  CHECK(patch.elem_bytes == 2);
  CHECK(narrow_channel_k(patch) == 8 * 256);
  CHECK(tile_waves(patch, 132) == 1);  // 13 x 3 tiles
  // A graph input carries bytes only: 4 x 3 x 64 x 64 f32 images, 3 x 3
  // kernel, stride 1 -> 3 channels; f32 pads to 4.
  Graph unet = load_graph_file(test::data_path("exported/unet_gn_0_fwd.post.json"));
  ImplicitGemm stem = shape_of(unet, "op0");
  CHECK(stem.in_channels == 3);
  CHECK(stem.k == 27);
  CHECK(narrow_channel_k(stem) == 4 * 9);
  // A convolution backward computing both gradients: the forward's shape
  // (grad output [4, 96, 64, 64], 6 input channels, 5 x 5 kernel), twice.
  Graph bwd = load_graph_file(test::data_path("exported/conv_narrow_sweep_1_bwd.post.json"));
  ImplicitGemm grad = shape_of(bwd, "op1");
  CHECK(grad.products == 2);
  CHECK(grad.m == 4 * 64 * 64);
  CHECK(grad.n == 96);
  CHECK(grad.k == 6 * 25);
  CHECK(grad.in_channels == 6);
  CHECK(narrow_channel_k(grad) == 8 * 25);
}

TEST_CASE("wave quantization pads the compute to whole waves of tiles", "[cost][time]") {
  ImplicitGemm s;
  s.m = 1024;
  s.n = 256;
  s.k = 512;  // 8 x 2 = 16 tiles: one wave on 132 SMs
  const double peak = 1e15;
  CHECK(tile_waves(s, 132) == 1);
  CHECK(wave_us(s, s.k, 132, peak) == Approx(132.0 * 2 * 128 * 128 * 512 / peak * 1e6));
  s.m = 128 * 133;  // 133 tiles: two waves
  s.n = 128;
  CHECK(tile_waves(s, 132) == 2);
  s.products = 2;
  CHECK(wave_us(s, s.k, 132, peak) == Approx(2 * 2 * 132.0 * 2 * 128 * 128 * 512 / peak * 1e6));
  // Aligned channels are not narrow; unknown ones are not either.
  ImplicitGemm c;
  c.k = 64 * 9;
  c.in_channels = 64;
  c.elem_bytes = 2;
  CHECK(narrow_channel_k(c) == 0);
  c.in_channels = 0;
  CHECK(narrow_channel_k(c) == 0);
}

TEST_CASE("the tile, f32 and L2 terms of a profile's laws price nodes and round-trip", "[cost][time]") {
  auto law = [](const char* extra) {
    return std::string(R"({"fixed_us":2,"compute_factor":1,"memory_factor":1,"kernels_per_node":1)") + extra + "}";
  };
  std::string laws;
  for (const char* c : {"gemm", "attention", "attention_backward", "convolution", "convolution_backward", "triton_pointwise", "triton_reduction",
                        "extern", "copy"})
    laws += std::string(laws.empty() ? "" : ",") + "\"" + c + "\":" +
            law(std::string(c) == "convolution" ? R"(,"wave_factor":0.5,"narrow_factor":3,"fp32_fixed_us":7,"spill_factor":2)" : "");
  const std::string text = R"({"base":"h100-sxm","name":"t","time_model":{"laws":{)" + laws +
                           R"(},"launch_gap_us":1,"cudagraph_gap_us":1,"host_us_per_kernel":1,"host_us_per_extern":1,"host_call_us":1,"sm_count":132,"l2_bytes":1048576}})";
  HardwareProfile hw = parse_hardware_profile(text);
  REQUIRE(hw.time_model);
  CHECK(hw.time_model->sm_count == 132);
  CHECK(hw.time_model->l2_bytes == 1048576);
  CHECK(hardware_profile_to_json(hardware_profile_from_json(hardware_profile_to_json(hw))) == hardware_profile_to_json(hw));
  // ViT's patch embedding: every term of the convolution law.
  Graph vit = load_graph_file(test::data_path("exported/vit_0_fwd.post.json"));
  const NodeId conv = vit.find_node("op2");
  const CostFacts facts = cost_facts(vit);
  const LawFeatures f = law_features(vit, conv, facts, hw, {hw.time_model->sm_count, hw.time_model->l2_bytes, true});
  auto at = [&](LawTerm t) { return f[static_cast<std::size_t>(t)]; };
  CHECK(at(LawTerm::Wave) > at(LawTerm::Compute));  // 39 tiles on 132 SMs
  // A patch embedding (16x16 windows at stride 16 do not overlap): the narrow
  // channels' padded K loop is the patch term's.
  CHECK(at(LawTerm::Narrow) == 0);
  CHECK(at(LawTerm::NarrowPatch) == Approx(at(LawTerm::Wave) * 2048 / 768));
  CHECK(at(LawTerm::Fp32Fixed) == 0);  // bf16
  CHECK(at(LawTerm::Spill) > 0);        // 4.2 MB moved, 1 MiB of "L2"
  CHECK(at(LawTerm::Memory) + at(LawTerm::Spill) == Approx(priced_bytes(vit, vit.nodes[conv]) / hw.dram_bytes_per_s * 1e6));
  CHECK(calibrated_node_runtime(vit, conv, facts, hw).us ==
        Approx(2 + at(LawTerm::Compute) + at(LawTerm::Memory) + 2 * at(LawTerm::Spill) + 0.5 * at(LawTerm::Wave) + 3 * at(LawTerm::NarrowPatch)));
  // A law without `narrow_patch_factor` (written before the term) prices patches by `narrow_factor`.
  CHECK(hw.time_model->laws.at(KernelClass::Convolution)[LawTerm::NarrowPatch] == 3.0);
  // Laws written before the tile terms read as 0; bad values are named.
  std::string old = text;
  old.replace(old.find(R"(,"wave_factor":0.5,"narrow_factor":3,"fp32_fixed_us":7,"spill_factor":2)"), 71, "");
  HardwareProfile before = parse_hardware_profile(old);
  CHECK(before.time_model->laws.at(KernelClass::Convolution)[LawTerm::Narrow] == 0.0);
  CHECK(before.time_model->laws.at(KernelClass::Convolution)[LawTerm::Spill] == 0.0);
  std::string negative = text;
  negative.replace(negative.find(R"("narrow_factor":3)"), 17, R"("narrow_factor":-3)");
  CHECK_THROWS_WITH(parse_hardware_profile(negative), Catch::Contains("time_model.laws.convolution.narrow_factor"));
  std::string bad_sm = text;
  bad_sm.replace(bad_sm.find(R"("sm_count":132)"), 14, R"("sm_count":-1)");
  CHECK_THROWS_WITH(parse_hardware_profile(bad_sm), Catch::Contains("time_model.sm_count"));
}
