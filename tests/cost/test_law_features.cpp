// The features of the calibrated laws (core/cost/law_features.h) on real
// exported graphs: indirect bytes, dtypes of multi-output kernels, unaligned
// matmuls and the routing of convolutions by their geometry.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/cost/cost_model.h"
#include "core/cost/law_features.h"
#include "core/io/graph_reader.h"
#include "tests/test_util.h"

using namespace schedlab;
using Catch::Detail::Approx;

namespace {

struct Featured {
  Graph g;
  CostFacts facts;
  explicit Featured(const std::string& path) : g(load_graph_file(test::data_path(path))), facts(cost_facts(g)) {}
  LawFeatures of(const char* node, bool routes = true) const {
    const NodeId v = g.find_node(node);
    REQUIRE(v != kNone);
    return law_features(g, v, facts, builtin_profile("h100-sxm-datasheet"), {132, std::int64_t{50} << 20, routes});
  }
};

double at(const LawFeatures& f, LawTerm t) { return f[static_cast<std::size_t>(t)]; }

}  // namespace

TEST_CASE("features: a gather moves one element per iteration, not its buffer", "[cost][features]") {
  // GPT-2's loss: the nll_loss forward reads the [4096, 50264] logits through
  // the targets (index 50264*d0 + tmp0): 4096 bf16 elements, not 412 MB.
  Featured loss("outside_zoo/h100/gpt2_step_1_fwd.post.json");
  const Node& nll = loss.g.nodes[loss.g.find_node("op4_op6_op5_op7")];
  CHECK(node_dram_bytes(nll) > 400'000'000);  // what the roofline (Inductor's view) reads
  CHECK(priced_bytes(loss.g, nll) < 200'000);
  // The log-softmax before it reads every logit.
  const Node& softmax = loss.g.nodes[loss.g.find_node("op1_op2_op3")];
  CHECK(priced_bytes(loss.g, softmax) == node_dram_bytes(softmax));
}

TEST_CASE("features: a concatenation's masked input moves at most its buffer; a broadcast keeps its bytes", "[cost][features]") {
  // A gradient bucket of a Llama FSDP step (4 x H100, tests/data/dist4): one
  // pointwise kernel writes nine gradients into a 404 MB reduce-scatter
  // buffer, each input declared over the output's whole range (`d0 -
  // offset`, 202 M elements) and loaded under a mask: 90 MB, 33 MB and 16 KB
  // buffers, not 4.2 GB of reads.
  Featured bucket("dist4/ranks/concat_bucket.post.json");
  const Node& cat = bucket.g.nodes[bucket.g.find_node("op32_op33_op34")];
  std::int64_t buffers = 0;
  for (const Dep& d : cat.reads) buffers += bucket.g.buffers[d.buf].bytes;
  std::int64_t writes = 0;
  for (const Dep& d : cat.writes) writes += d.bytes;
  CHECK(node_dram_bytes(cat) > 4'000'000'000);  // what the roofline (Inductor's view) reads
  CHECK(priced_bytes(bucket.g, cat) == buffers + writes);
  // Grouped-query attention's key expansion reads a 4 MiB buffer four
  // times over (index with `c1//4`): a broadcast, priced as declared.
  Featured decode("exported/kv_decode_0_inf.post.json");
  const Node& expand = decode.g.nodes[decode.g.find_node("op5")];
  CHECK(priced_bytes(decode.g, expand) == node_dram_bytes(expand));
  CHECK(priced_bytes(decode.g, expand) == 2 * 16'777'216);
}

TEST_CASE("features: a multi-output kernel computes in its first item's dtype", "[cost][features]") {
  // attention_sweep's attention reads graph inputs that carry no dtype (an
  // export before inputs had one); its first item, the output, is bf16.
  Featured g("exported/attention_sweep_0_fwd.post.json");
  CHECK(g.facts.compute_dtype[g.g.find_node("op0")] == "bf16");
  const LawFeatures f = g.of("op0");
  CHECK(at(f, LawTerm::Compute) > 0);
  CHECK(at(f, LawTerm::Fp32Compute) == 0);
  CHECK(at(f, LawTerm::Fp32Fixed) == 0);
}

TEST_CASE("features: a 16-bit matmul with a misaligned row pitch is unaligned", "[cost][features]") {
  Featured g("exported/gemm_unaligned_sweep_0_inf.post.json");
  // [4096, 768] x [768, 50257]: the second operand's rows are 50257 elements.
  CHECK(at(g.of("op0"), LawTerm::Unaligned) == Approx(at(g.of("op0"), LawTerm::Compute)));
  // [50257, 4096] x [4096, 768]: an odd M is no pitch.
  CHECK(at(g.of("op1"), LawTerm::Unaligned) == 0);
  // [4096, 50257] x [50257, 768]: an odd K is the first operand's pitch.
  CHECK(at(g.of("op2"), LawTerm::Unaligned) > 0);
  CHECK(at(g.of("op4"), LawTerm::Unaligned) == 0);  // 8191 rows of 1024
  // f32 matmuls run on the CUDA cores at their own factor; never "unaligned".
  Featured f32("exported/gemm_sweep_0_inf.post.json");
  for (NodeId v = 0; v < f32.g.num_nodes(); ++v) {
    if (classify_node(f32.g, f32.g.nodes[v]) != KernelClass::Gemm || f32.facts.compute_dtype[v] != "f32") continue;
    const LawFeatures f = f32.of(f32.g.nodes[v].name.c_str());
    CHECK(at(f, LawTerm::Fp32Compute) > 0);
    CHECK(at(f, LawTerm::Compute) == 0);
    CHECK(at(f, LawTerm::Unaligned) == 0);
  }
}

TEST_CASE("features: convolutions are routed by their geometry", "[cost][features]") {
  Featured dense("exported/conv_grid_dense_0_fwd.post.json");
  // A 3x3 convolution: the implicit-GEMM terms.
  const LawFeatures three = dense.of("op0");
  CHECK(at(three, LawTerm::Fixed) == 1);
  CHECK(at(three, LawTerm::Compute) > 0);
  CHECK(at(three, LawTerm::Wave) >= at(three, LawTerm::Compute));
  CHECK(at(three, LawTerm::PointwiseConvFixed) == 0);
  // A 1x1 stride-1 convolution: a matmul's floor instead of the dense one.
  const LawFeatures one = dense.of("op16");
  CHECK(at(one, LawTerm::Fixed) == 0);
  CHECK(at(one, LawTerm::PointwiseConvFixed) == 1);
  // A strided 1x1 is no plain matmul.
  CHECK(at(dense.of("op24"), LawTerm::PointwiseConvFixed) == 0);
  // The RGB stem: 3 channels, padded.
  CHECK(at(dense.of("op48"), LawTerm::Narrow) > 0);

  Featured grouped("exported/conv_grid_grouped_0_fwd.post.json");
  // Depthwise (groups = channels): its own terms, none of the dense ones.
  const LawFeatures dw = grouped.of("op0");
  CHECK(at(dw, LawTerm::DepthwiseFixed) == 1);
  CHECK(at(dw, LawTerm::DepthwiseMemory) > 0);
  CHECK(at(dw, LawTerm::DepthwiseCompute) > 0);
  for (LawTerm t : {LawTerm::Compute, LawTerm::Memory, LawTerm::Spill, LawTerm::Wave, LawTerm::Narrow}) CHECK(at(dw, t) == 0);
  // Grouped (32 groups of 4 channels): one GEMM per group.
  const LawFeatures grp = grouped.of("op28");
  CHECK(at(grp, LawTerm::GroupedFixed) == 1);
  CHECK(at(grp, LawTerm::GroupedWave) > 0);
  CHECK(at(grp, LawTerm::Compute) == 0);
  // A law from before the family terms prices them as dense convolutions.
  const LawFeatures old = grouped.of("op0", false);
  CHECK(at(old, LawTerm::DepthwiseFixed) == 0);
  CHECK(at(old, LawTerm::Compute) > 0);

  // NCHW (layout optimization off): cuDNN transposes the operands of a 3x3,
  // not of a 1x1; ATen's own depthwise kernels transpose nothing.
  Featured nchw("exported/conv_grid_nchw_0_fwd.post.json");
  bool transposed = false, one_by_one = false, native = false;
  for (NodeId v = 0; v < nchw.g.num_nodes(); ++v) {
    const Node& n = nchw.g.nodes[v];
    if (!n.convolution) continue;
    CHECK(n.convolution->memory_format == MemoryFormat::Contiguous);
    const LawFeatures f = nchw.of(n.name.c_str());
    const bool unit = at(f, LawTerm::PointwiseConvFixed) > 0;
    const bool own_kernel = classify_kernel(nchw.g, n) == KernelClass::DepthwiseConvolutionNative;
    CHECK((at(f, LawTerm::Transpose) > 0) == (!unit && !own_kernel));
    CHECK(at(f, LawTerm::TransposeFixed) == (unit || own_kernel ? 0 : 1));
    transposed = transposed || (!unit && !own_kernel);
    one_by_one = one_by_one || unit;
    native = native || own_kernel;
  }
  CHECK(transposed);
  CHECK(one_by_one);
  CHECK(native);
}

TEST_CASE("features: a narrow NCHW input's transpose costs per pixel", "[cost][features]") {
  // conv_grid's NCHW stem: [8, 3, 224, 224], 7x7 at stride 2; cuDNN's
  // nchwToNhwc of its input took 19.1 µs on the H200 (401,408 pixels).
  Featured nchw("exported/conv_grid_nchw_0_fwd.post.json");
  const Node& stem = nchw.g.nodes[nchw.g.find_node("op12")];
  REQUIRE(stem.convolution->input == std::vector<std::int64_t>{8, 3, 224, 224});
  CHECK(at(nchw.of("op12"), LawTerm::NarrowInputPixels) == Approx(8.0 * 224 * 224 * 1e-6));
  // Wider inputs: their transposes are priced by their bytes alone.
  for (NodeId v = 0; v < nchw.g.num_nodes(); ++v) {
    const Node& n = nchw.g.nodes[v];
    if (n.convolution && n.convolution->input[1] > 4) CHECK(at(nchw.of(n.name.c_str()), LawTerm::NarrowInputPixels) == 0);
  }
  // A backward reads the input only for the weight's gradient.
  Graph g = nchw.g;
  const NodeId v = g.find_node("op12");
  g.nodes[v].convolution->output_mask = std::array<bool, 3>{true, false, false};
  const auto features = [&] { return law_features(g, v, cost_facts(g), builtin_profile("h100-sxm-datasheet"), {132, std::int64_t{50} << 20, true}); };
  CHECK(at(features(), LawTerm::NarrowInputPixels) == 0);
  g.nodes[v].convolution->output_mask = std::array<bool, 3>{false, true, false};
  CHECK(at(features(), LawTerm::NarrowInputPixels) == Approx(8.0 * 224 * 224 * 1e-6));
  // Channels-last: no transpose.
  g.nodes[v].convolution->memory_format = MemoryFormat::ChannelsLast;
  CHECK(at(features(), LawTerm::NarrowInputPixels) == 0);
}

TEST_CASE("built-in profiles: one rate for a narrow input's transpose in every convolution class", "[cost][features]") {
  // Fitted on convolution_backward (core/measure/fit.cpp) and pinned in the
  // others: 35.6 ps a pixel on the H200, 37.9 on the H100 (its 1-D
  // forward law carried from the H200 with the H200's rate).
  for (const char* name : {"h200", "h100-sxm"}) {
    INFO(name);
    const TimeModel& tm = *builtin_profile(name).time_model;
    const double rate = tm.laws.at(KernelClass::ConvolutionBackward)[LawTerm::NarrowInputPixels];
    CHECK(rate > 30);
    CHECK(rate < 45);
    CHECK(tm.laws.at(KernelClass::Convolution)[LawTerm::NarrowInputPixels] == rate);
  }
}

TEST_CASE("features: ATen's own depthwise kernels cost per element at the f32 peak, whatever the dtype", "[cost][features]") {
  // The depthwise sweep's first 1-D call ([8, 768, 1024], 31 taps) in bf16
  // and in f32: 122.7 and 111.9 µs on the H200, one feature vector.
  Featured bf16("class_sweep/h200/depthwise_conv_sweep_0_fwd.post.json");
  Featured f32("class_sweep/h200/depthwise_conv_sweep_2_fwd.post.json");
  const Node& n = bf16.g.nodes[bf16.g.find_node("op3")];
  REQUIRE(classify_kernel(bf16.g, n) == KernelClass::DepthwiseConvolutionNative);
  REQUIRE(n.convolution->input == std::vector<std::int64_t>{8, 768, 1024});
  const LawFeatures a = bf16.of("op3"), b = f32.of("op3");
  CHECK(at(a, LawTerm::DepthwiseCompute) == Approx(at(b, LawTerm::DepthwiseCompute)));
  CHECK(at(a, LawTerm::DepthwiseMemory) == Approx(at(b, LawTerm::DepthwiseMemory)));
  CHECK(at(a, LawTerm::DepthwiseCompute) == Approx(static_cast<double>(*n.flops) / peak_flops_for_dtype(builtin_profile("h100-sxm-datasheet"), "f32") * 1e6));
  CHECK(at(a, LawTerm::Transpose) == 0);
}

TEST_CASE("features: a narrow-channel convolution whose windows do not overlap is a patch", "[cost][features]") {
  // ResNet-50's stem: 7x7 windows at stride 2 overlap; 3 channels padded to 8.
  Featured resnet("exported/resnet50_step_0_fwd.post.json");
  const LawFeatures stem = resnet.of("op0");
  CHECK(at(stem, LawTerm::Narrow) > 0);
  CHECK(at(stem, LawTerm::NarrowPatch) == 0);
  // ConvNeXt's stem: 4x4 windows at stride 4, each input pixel read once.
  Featured convnext("exported/convnext_step_0_fwd.post.json");
  const LawFeatures patch = convnext.of("op5");
  CHECK(at(patch, LawTerm::Narrow) == 0);
  CHECK(at(patch, LawTerm::NarrowPatch) > 0);
  // Its downsampling layers (2x2 at stride 2) do not overlap either, but
  // their 96 channels need no padding: no narrow term of either kind.
  const LawFeatures down = convnext.of("op56");
  CHECK(at(down, LawTerm::Narrow) == 0);
  CHECK(at(down, LawTerm::NarrowPatch) == 0);
}

TEST_CASE("features: an online softmax pays its elements at the f32 peak", "[cost][features]") {
  // lm_head_ce's loss: the online max-and-sum over [2048, 32000] bf16 logits
  // (reduction_types: online_softmax_reduce).
  Featured loss("exported/lm_head_ce_0_fwd.post.json");
  const double f32_peak = peak_flops_for_dtype(builtin_profile("h100-sxm-datasheet"), "f32");
  const NodeId v = loss.g.find_node("op4_op5_op6");
  REQUIRE(v != kNone);
  CHECK(at(loss.of("op4_op5_op6"), LawTerm::OnlineSoftmax) == Approx(2048.0 * 32000 * 1e6 / f32_peak));
  // The same kernel without the exporter's reduction types (older graphs),
  // and a plain sum: no term.
  loss.g.nodes[v].reduction_types.clear();
  CHECK(at(loss.of("op4_op5_op6"), LawTerm::OnlineSoftmax) == 0);
  Featured backward("exported/lm_head_ce_1_bwd.post.json");
  for (NodeId u = 0; u < backward.g.num_nodes(); ++u) CHECK(at(backward.of(backward.g.nodes[u].name.c_str()), LawTerm::OnlineSoftmax) == 0);
}

TEST_CASE("features: a convolution operand in the other layout is converted first", "[cost][features]") {
  // conv_grid's backward: the gradient of each output comes from the loss's
  // mean as an NCHW tensor, while the convolution runs channels-last; ATen
  // copies it (a direct_copy kernel in the measured timeline).
  Featured bwd("exported/conv_grid_dense_1_bwd.post.json");
  const Node& n = bwd.g.nodes[bwd.g.find_node("op41")];
  REQUIRE(n.convolution);
  CHECK(n.convolution->memory_format == MemoryFormat::ChannelsLast);
  const Buffer& grad_output = bwd.g.buffers[n.reads[0].buf];
  REQUIRE(grad_output.shape == n.convolution->output);
  // Both gradients are asked for: the input's and the weight's cuDNN calls
  // each copy it.
  CHECK(at(bwd.of("op41"), LawTerm::LayoutConvert) == Approx(2.0 * 2.0 * grad_output.bytes / 3.35e12 * 1e6));
  CHECK(at(bwd.of("op41"), LawTerm::Fixed) == 0);                // a 1x1: ...
  CHECK(at(bwd.of("op41"), LawTerm::PointwiseConvFixed) == 2);  // ... both gradients, a matmul each
  // ResNet-50's backward gets its gradients channels-last from the batch
  // norms: nothing to convert.
  Featured resnet("exported/resnet50_step_1_bwd.post.json");
  for (NodeId v = 0; v < resnet.g.num_nodes(); ++v)
    if (resnet.g.nodes[v].convolution) CHECK(at(resnet.of(resnet.g.nodes[v].name.c_str()), LawTerm::LayoutConvert) == 0);
}

TEST_CASE("features: a 1-d convolution's permuted operands are made contiguous, the output's gradient once per gradient call", "[cost][features]") {
  // The 1-D layout sweep's backward: [batch, time, channels] activations
  // read as [batch, channels, time]. op12 (5 taps, 512 -> 256 channels):
  // its input (13.1 MB) and the output's gradient (6.6 MB) both come
  // channels-innermost; ATen copies the input once and the gradient for
  // each of the two gradient calls (six kernels beside the GEMMs).
  Featured bwd("class_sweep/h200/conv1d_layout_sweep_1_bwd.post.json");
  const double dram = builtin_profile("h100-sxm-datasheet").dram_bytes_per_s;
  CHECK(at(bwd.of("op12"), LawTerm::LayoutConvert) == Approx(2.0 * (13107200.0 + 2 * 6553600.0) / dram * 1e6));
  // Every convolution of the sweep's backward copies something.
  for (NodeId v = 0; v < bwd.g.num_nodes(); ++v)
    if (bwd.g.nodes[v].convolution) CHECK(at(bwd.of(bwd.g.nodes[v].name.c_str()), LawTerm::LayoutConvert) > 0);
  // A Conformer's gradient, a [time, batch, channels] buffer read as [batch,
  // channels, time]: the view is known from the permuted shape, and it is
  // neither layout cuDNN runs in.
  Graph g = bwd.g;
  const NodeId v = g.find_node("op12");
  const BufId grad = g.nodes[v].reads[0].buf;
  REQUIRE(g.buffers[grad].shape == std::vector<std::int64_t>{8, 256, 800});
  g.buffers[grad].shape = {800, 8, 256};
  g.buffers[grad].stride = {2048, 256, 1};
  CHECK(at(law_features(g, v, cost_facts(g), builtin_profile("h100-sxm-datasheet"), {132, std::int64_t{50} << 20, true}), LawTerm::LayoutConvert) ==
        Approx(at(bwd.of("op12"), LawTerm::LayoutConvert)));
  // The same buffer contiguous as the operand: the input's copy alone.
  g.buffers[grad].shape = {8, 256, 800};
  g.buffers[grad].stride = {204800, 800, 1};
  CHECK(at(law_features(g, v, cost_facts(g), builtin_profile("h100-sxm-datasheet"), {132, std::int64_t{50} << 20, true}), LawTerm::LayoutConvert) ==
        Approx(2.0 * 13107200.0 / dram * 1e6));
}

TEST_CASE("features: attention with dropout pays one f32 op per unmasked score", "[cost][features]") {
  Featured fwd("exported/attention_dropout_sweep_0_fwd.post.json");
  Featured bwd("exported/attention_dropout_sweep_1_bwd.post.json");
  auto first_of = [](const Featured& f, KernelClass c) {
    for (NodeId v = 0; v < f.g.num_nodes(); ++v)
      if (classify_node(f.g, f.g.nodes[v]) == c) return v;
    FAIL("no node of the class");
    return kNone;
  };
  const double f32_peak = peak_flops_for_dtype(builtin_profile("h100-sxm-datasheet"), "f32");
  const AttentionCall causal{{8, 12, 512, 64}, {8, 12, 512, 64}, {8, 12, 512, 64}, true, false, 0.1};
  for (auto [f, c] : {std::pair{&fwd, KernelClass::Attention}, std::pair{&bwd, KernelClass::AttentionBackward}}) {
    INFO(to_string(c));
    Featured& g = *f;
    const NodeId v = first_of(g, c);
    const char* name = g.g.nodes[v].name.c_str();
    // The exporter's record prices the node; graphs exported before the
    // `attention` record have no term.
    REQUIRE(g.g.nodes[v].attention);
    CHECK(at(g.of(name), LawTerm::AttentionDropout) == Approx(attention_scores(*g.g.nodes[v].attention) * 1e6 / f32_peak));
    g.g.nodes[v].attention.reset();
    CHECK(at(g.of(name), LawTerm::AttentionDropout) == 0);
    g.g.nodes[v].attention = causal;
    CHECK(at(g.of(name), LawTerm::AttentionDropout) == Approx(96.0 * 512 * 513 / 2 * 1e6 / f32_peak));
    // The other terms are unchanged: the scores' random numbers are work of their own.
    LawFeatures with = g.of(name);
    g.g.nodes[v].attention->dropout_p = 0;
    LawFeatures without = g.of(name);
    CHECK(at(without, LawTerm::AttentionDropout) == 0);
    with[static_cast<std::size_t>(LawTerm::AttentionDropout)] = 0;
    CHECK(with == without);
  }
  // Only the attention classes: the same record on a matmul prices nothing.
  Featured mm("exported/gemm_sweep_0_inf.post.json");
  const NodeId gemm = first_of(mm, KernelClass::Gemm);
  mm.g.nodes[gemm].attention = causal;
  CHECK(at(mm.of(mm.g.nodes[gemm].name.c_str()), LawTerm::AttentionDropout) == 0);
}

TEST_CASE("features: attention with a bias pays one f32 op per score, and its bias bytes apart", "[cost][features]") {
  Featured fwd("exported/attention_bias_sweep_0_fwd.post.json");
  Featured bwd("exported/attention_bias_sweep_1_bwd.post.json");
  const double f32_peak = peak_flops_for_dtype(builtin_profile("h100-sxm-datasheet"), "f32");
  const double dram = builtin_profile("h100-sxm-datasheet").dram_bytes_per_s;
  int biased = 0;
  for (Featured* f : {&fwd, &bwd})
    for (NodeId v = 0; v < f->g.num_nodes(); ++v) {
      Node& n = f->g.nodes[v];
      const KernelClass c = classify_node(f->g, n);
      if (c != KernelClass::Attention && c != KernelClass::AttentionBackward) continue;
      INFO(n.name);
      REQUIRE(n.attention);
      REQUIRE(n.attention->bias);
      ++biased;
      const char* name = n.name.c_str();
      const LawFeatures with = f->of(name);
      CHECK(at(with, LawTerm::AttentionBias) == Approx(attention_scores(*n.attention) * 1e6 / f32_peak));
      // The mask: the one read of [.., Sq, Sk] (a query of [B, H, S, D] with D < S).
      const std::int64_t s = n.attention->query[2];
      std::int64_t mask = 0;
      for (const Dep& d : n.reads) {
        const auto& shape = f->g.buffers[d.buf].shape;
        if (shape.size() == 4 && shape[2] == s && shape[3] == s) mask += d.bytes;
      }
      CHECK(mask > 0);
      CHECK(at(with, LawTerm::AttentionBiasMemory) == Approx(mask / dram * 1e6));
      // Without the bias: no bias terms, and its bytes back in the memory terms.
      n.attention->bias = false;
      const LawFeatures without = f->of(name);
      CHECK(at(without, LawTerm::AttentionBias) == 0);
      CHECK(at(without, LawTerm::AttentionBiasMemory) == 0);
      CHECK(at(without, LawTerm::Memory) + at(without, LawTerm::Spill) ==
            Approx(at(with, LawTerm::Memory) + at(with, LawTerm::Spill) + at(with, LawTerm::AttentionBiasMemory)));
    }
  CHECK(biased == 14);
  // The dropout sweep's attention reads no bias: neither term.
  Featured dropout("exported/attention_dropout_sweep_0_fwd.post.json");
  for (NodeId v = 0; v < dropout.g.num_nodes(); ++v) {
    CHECK(at(dropout.of(dropout.g.nodes[v].name.c_str()), LawTerm::AttentionBias) == 0);
    CHECK(at(dropout.of(dropout.g.nodes[v].name.c_str()), LawTerm::AttentionBiasMemory) == 0);
  }
}

TEST_CASE("features: every attention call pays its scores, and the compute its last wave leaves idle", "[cost][features]") {
  // The H200's attention grid sweep: bf16 calls without mask or dropout
  // (forward over query tiles, backward over key tiles), then f32 ones.
  const double f32_peak = peak_flops_for_dtype(builtin_profile("h100-sxm-datasheet"), "f32");
  int calls = 0, partial = 0;
  for (const char* path : {"class_sweep/h200/attention_grid_sweep_0_fwd.post.json", "class_sweep/h200/attention_grid_sweep_1_bwd.post.json",
                           "class_sweep/h200/attention_grid_sweep_2_fwd.post.json"}) {
    Featured f(path);
    for (NodeId v = 0; v < f.g.num_nodes(); ++v) {
      Node& n = f.g.nodes[v];
      const KernelClass c = classify_node(f.g, n);
      if (c != KernelClass::Attention && c != KernelClass::AttentionBackward) continue;
      INFO(path << " " << n.name);
      REQUIRE(n.attention);
      ++calls;
      const AttentionCall a = *n.attention;
      const LawFeatures with = f.of(n.name.c_str());
      // f32 calls (the memory-efficient kernels) pay their scores at a factor of their own.
      const bool f32 = at(with, LawTerm::Fp32Compute) > 0;
      const LawTerm score = f32 ? LawTerm::AttentionScoreF32 : LawTerm::AttentionScore;
      CHECK(at(with, score) == Approx(attention_scores(a) * 1e6 / f32_peak));
      CHECK(at(with, f32 ? LawTerm::AttentionScore : LawTerm::AttentionScoreF32) == 0);
      const double compute = at(with, LawTerm::Compute) + at(with, LawTerm::Fp32Compute);
      const double rows = static_cast<double>(c == KernelClass::AttentionBackward ? a.key[2] : a.query[2]);
      const double tiles = static_cast<double>(a.query[0] * a.query[1]) * std::ceil(rows / (f32 ? 64.0 : 128.0));
      CHECK(at(with, LawTerm::AttentionWave) == Approx(compute * (std::ceil(tiles / 132) * 132 / tiles - 1)).margin(1e-9));
      if (tiles < 132) ++partial;
      // Exported before the record: the same features from the flops and
      // the first item (the output or the query's gradient), where the
      // call is not causal (a causal call reads as half its keys).
      n.attention.reset();
      const LawFeatures inferred = f.of(n.name.c_str());
      if (!a.causal) {
        CHECK(at(inferred, score) == Approx(at(with, score)));
        CHECK(at(inferred, LawTerm::AttentionWave) == Approx(at(with, LawTerm::AttentionWave)).margin(1e-9));
      } else {
        CHECK(at(inferred, score) == Approx(at(with, score)).epsilon(0.01));
      }
    }
  }
  CHECK(calls == 41);
  CHECK(partial >= 6);  // the decoder-style calls: under one wave
  // A decoder's 128 queries over 1,500 keys: 48 tiles on 132 SMs, idle 132/48 - 1 of the compute.
  Featured fwd("class_sweep/h200/attention_grid_sweep_0_fwd.post.json");
  for (NodeId v = 0; v < fwd.g.num_nodes(); ++v) {
    const Node& n = fwd.g.nodes[v];
    if (!n.attention || n.attention->query != std::vector<std::int64_t>{8, 6, 128, 64} || n.attention->key[2] != 1500) continue;
    const LawFeatures f = fwd.of(n.name.c_str());
    CHECK(at(f, LawTerm::AttentionWave) == Approx(at(f, LawTerm::Compute) * 1.75));
  }
  // Not an attention call: neither term.
  Featured mm("exported/gemm_sweep_0_inf.post.json");
  int gemms = 0;
  for (NodeId v = 0; v < mm.g.num_nodes(); ++v) {
    if (classify_node(mm.g, mm.g.nodes[v]) != KernelClass::Gemm) continue;
    ++gemms;
    const LawFeatures gemm = mm.of(mm.g.nodes[v].name.c_str());
    CHECK(at(gemm, LawTerm::AttentionScore) == 0);
    CHECK(at(gemm, LawTerm::AttentionWave) == 0);
  }
  CHECK(gemms > 0);
}

TEST_CASE("features: an f32 attention call's bias is a term of its own", "[cost][features]") {
  // The memory-efficient kernels' mask costs several times cuDNN's per score.
  const double f32_peak = peak_flops_for_dtype(builtin_profile("h100-sxm-datasheet"), "f32");
  int f32_calls = 0;
  for (const char* path : {"class_sweep/h200/attention_f32_mask_sweep_0_fwd.post.json", "class_sweep/h200/attention_f32_mask_sweep_1_bwd.post.json"}) {
    Featured f(path);
    for (NodeId v = 0; v < f.g.num_nodes(); ++v) {
      const Node& n = f.g.nodes[v];
      const KernelClass c = classify_node(f.g, n);
      if (c != KernelClass::Attention && c != KernelClass::AttentionBackward) continue;
      INFO(path << " " << n.name);
      REQUIRE(n.attention);
      REQUIRE(n.attention->bias);
      ++f32_calls;
      const LawFeatures x = f.of(n.name.c_str());
      CHECK(at(x, LawTerm::Fp32Compute) > 0);
      CHECK(at(x, LawTerm::AttentionBiasF32) == Approx(attention_scores(*n.attention) * 1e6 / f32_peak));
      CHECK(at(x, LawTerm::AttentionBias) == 0);
    }
  }
  CHECK(f32_calls == 14);
  // 16-bit calls with a bias keep bias_factor's term.
  Featured bf16("exported/attention_bias_sweep_0_fwd.post.json");
  for (NodeId v = 0; v < bf16.g.num_nodes(); ++v)
    CHECK(at(bf16.of(bf16.g.nodes[v].name.c_str()), LawTerm::AttentionBiasF32) == 0);
}

TEST_CASE("features: a reduction whose rows are not 16-byte aligned pays its bytes again at its own factor", "[cost][features]") {
  // loss_vocab_sweep's backward: the log-softmax gradient over bf16 logits,
  // one kernel per vocabulary, in pairs a few logits apart.
  Featured g("exported/loss_vocab_sweep_1_bwd.post.json");
  auto unaligned = [&](const char* node) {
    const LawFeatures f = g.of(node);
    const double bytes_us = at(f, LawTerm::Memory) + at(f, LawTerm::Spill);
    CHECK(bytes_us > 0);
    const double u = at(f, LawTerm::UnalignedRows);
    CHECK((u == 0 || u == bytes_us));
    return u > 0;
  };
  CHECK(unaligned("op14_op15"));        // 50,257 logits: 100,514-byte rows
  CHECK_FALSE(unaligned("op12_op13"));  // 50,264: 100,528 bytes, a multiple of 16
  CHECK(unaligned("op2_op3"));          // 151,937
  CHECK_FALSE(unaligned("op0_op1"));    // 151,936
  CHECK(unaligned("op10_op11"));        // 30,522: 61,044 bytes
  CHECK_FALSE(unaligned("op8_op9"));    // 30,528
  // GPT-2's loss backward reads its logits through a padded pitch (50,264)
  // but writes the gradient at 50,257: still unaligned rows.
  Featured gpt2("outside_zoo/h100/gpt2_step_2_bwd.post.json");
  CHECK(at(gpt2.of("op0_op1"), LawTerm::UnalignedRows) > 0);
  // A pointwise kernel has no rows.
  Featured vit("exported/vit_0_fwd.post.json");
  CHECK(at(vit.of("op1"), LawTerm::UnalignedRows) == 0);
}

TEST_CASE("features: a reduction's operands along another axis than most of its bytes, and the length it walks", "[cost][features]") {
  // The transposed reduction sweep's layer norm over 128 tokens of a
  // transposed view: the weight gradient ([512, 128 x 256] kept x reduced,
  // a nest of three axes) reads its operands along the channels and writes
  // the input gradient along the tokens: 512 x 128 x 256 elements, one
  // sector each, and 32,768 reduction steps a row.
  Featured sweep("class_sweep/h200/transposed_reduction_sweep_2_bwd.post.json");
  const LawFeatures grad = sweep.of("op38_op39_op40");
  CHECK(at(grad, LawTerm::TransposedElements) == Approx(512.0 * 128 * 256 * 1e-6));
  CHECK(at(grad, LawTerm::TransposedWalk) == Approx(32768 * 1e-3));
  // A plain transpose beside a row sum (two axes): Triton tiles both.
  Featured strided("class_sweep/h200/strided_triton_sweep_0_inf.post.json");
  CHECK(at(strided.of("op28_op29"), LawTerm::TransposedElements) == 0);
  CHECK(at(strided.of("op28_op29"), LawTerm::TransposedWalk) == 0);
  // BERT's layer norm backward fused with a weight-gradient partial sum of
  // another nest: the nest of most bytes runs along its channels but for
  // the rows' statistics, broadcast over them (the same sectors again).
  Featured bert("outside_zoo/h100/hf_bert_step_1_bwd.post.json");
  CHECK(at(bert.of("op59_op60_op65_op68_op61_op63"), LawTerm::TransposedElements) == 0);
  CHECK(at(bert.of("op59_op60_op65_op68_op61_op63"), LawTerm::TransposedWalk) == 0);
}

TEST_CASE("features: an embedding bag's lookups and chunks per warp of ATen's kernel", "[cost][features]") {
  // The embedding-bag sweep's calls: 8,192 warps take bags x ceil(columns /
  // 32) chunks. 4,096 bags of 256 columns: 32,768 chunks, 4 a warp, of 8
  // lookups each; 1,024 bags of 64 columns: 2,048 chunks, one a warp (the
  // other warps idle), of 100 lookups; 16,384 bags of 16 columns: 2 a warp
  // of one lookup.
  Featured sweep("class_sweep/h100/embedding_bag_sweep_0_fwd.post.json");
  CHECK(at(sweep.of("op35"), LawTerm::BagChunks) == Approx(4 * 1e-3));
  CHECK(at(sweep.of("op35"), LawTerm::BagSteps) == Approx(32 * 1e-3));
  CHECK(at(sweep.of("op28"), LawTerm::BagChunks) == Approx(1 * 1e-3));
  CHECK(at(sweep.of("op28"), LawTerm::BagSteps) == Approx(100 * 1e-3));
  CHECK(at(sweep.of("op21"), LawTerm::BagChunks) == Approx(2 * 1e-3));
  CHECK(at(sweep.of("op21"), LawTerm::BagSteps) == Approx(2 * 1e-3));
  // The backward (a scatter into the table's gradient) walks no bag.
  Featured backward("class_sweep/h100/embedding_bag_sweep_1_bwd.post.json");
  CHECK(at(backward.of("op0"), LawTerm::BagSteps) == 0);
  CHECK(at(backward.of("op0"), LawTerm::BagChunks) == 0);
}

TEST_CASE("features: what a Triton scatter writes to DRAM, apart from what it reads", "[cost][features]") {
  // The message-passing sweep (class_sweep/h200): 524,288 rows of 128
  // floats gathered from an 8 MiB table and added into another; the L2
  // (50 MiB here) holds both tables, so no atomic line goes back to DRAM.
  const double dram = builtin_profile("h100-sxm-datasheet").dram_bytes_per_s;
  Featured plain("class_sweep/h200/message_passing_sweep_1_inf.post.json");
  CHECK(at(plain.of("op1"), LawTerm::WriteBack) == 0);
  CHECK(at(plain.of("op1"), LawTerm::IndirectSpill) == 0);
  // The same with the messages written out (268 MB): what the L2 cannot
  // hold dirty at the kernel's end goes to DRAM while it runs.
  Featured kept("class_sweep/h200/message_passing_sweep_2_inf.post.json");
  CHECK(at(kept.of("op0_op2"), LawTerm::WriteBack) == Approx((268'435'456.0 - (50 << 20)) / dram * 1e6));
  // Updates into a 512 MiB table (the traffic sweep): each missed line is
  // read and written back, and the written half is what the term prices.
  Featured traffic("class_sweep/h200/scatter_traffic_sweep_0_inf.post.json");
  const LawFeatures big = traffic.of("op7");
  CHECK(at(big, LawTerm::WriteBack) > 0);
  CHECK(at(big, LawTerm::IndirectSpill) == Approx(2 * at(big, LawTerm::WriteBack)));
  // A kernel that is not a Triton scatter has no such term.
  CHECK(at(plain.of("op2"), LawTerm::WriteBack) == 0);
}
