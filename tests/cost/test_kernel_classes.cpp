// The finer kernel classes (core/cost/kernel_class.h, issue 27) and the
// law of the externs nobody fitted: an embedding bag, a scatter in place and
// an unknown extern priced by the bytes they move at the copy law's
// efficiency; sorts keep the extern law; the other finer classes priced by
// their base class's law until a profile has their own.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "core/cost/cost_model.h"
#include "core/cost/law_features.h"
#include "core/cost/pricing.h"
#include "core/io/graph_reader.h"
#include "core/io/profiles.h"
#include "core/predict/predicted.h"
#include "tests/test_util.h"

using namespace schedlab;
using Catch::Detail::Approx;

namespace {

// A DLRM-style lookup: 81,920 indices into a [100000, 64] f32 table (25.6 MB)
// in 4,096 bags; the four items of its tuple result.
const char* kEmbeddingBag = R"({"format":"schedgraph/1","name":"bag",
  "inputs":[{"name":"primals_1","bytes":25600000,"dtype":"f32","shape":[100000,64]},
            {"name":"primals_2","bytes":655360,"dtype":"i64","shape":[81920]},
            {"name":"primals_3","bytes":32776,"dtype":"i64","shape":[4097]}],
  "outputs":["buf1"],
  "nodes":[
    {"name":"op0","kind":"extern","kernel":"torch.ops.aten._embedding_bag.default",
     "outputs":[{"name":"buf0","bytes":0,"layout":"multi_output"}],
     "reads":[{"name":"primals_1","dep":"star","bytes":25600000},{"name":"primals_2","dep":"star","bytes":655360},
              {"name":"primals_3","dep":"star","bytes":32776}],
     "writes":[{"name":"buf0","dep":"star","bytes":0}]},
    {"name":"op1","kind":"extern",
     "outputs":[{"name":"buf1","bytes":1048576,"layout":"multi_output_item","dtype":"f32","shape":[4096,64]},
                {"name":"buf2","bytes":655360,"layout":"multi_output_item","dtype":"i64","shape":[81920]},
                {"name":"buf3","bytes":32768,"layout":"multi_output_item","dtype":"i64","shape":[4096]},
                {"name":"buf4","bytes":32768,"layout":"multi_output_item","dtype":"i64","shape":[4096]}],
     "reads":[{"name":"buf0","dep":"star","bytes":0}]}
  ]})";

// index_add_ of 4,096 rows into the same table, in place; and an extern
// no rule names.
const char* kScatterAndUnknown = R"({"format":"schedgraph/1","name":"scatter",
  "inputs":[{"name":"buf_t","bytes":25600000,"dtype":"f32","shape":[100000,64]},
            {"name":"idx","bytes":32768,"dtype":"i64","shape":[4096]},
            {"name":"src","bytes":1048576,"dtype":"f32","shape":[4096,64]}],
  "outputs":["buf0","buf1"],
  "nodes":[
    {"name":"op0","kind":"extern","kernel":"torch.ops.aten.index_add_.default",
     "outputs":[{"name":"buf0","bytes":25600000,"dtype":"f32","shape":[100000,64],"mutation_of":"buf_t"}],
     "reads":[{"name":"buf_t","dep":"star","bytes":25600000},{"name":"idx","dep":"star","bytes":32768},
              {"name":"src","dep":"star","bytes":1048576}],
     "writes":[{"name":"buf0","dep":"star","bytes":25600000}]},
    {"name":"op1","kind":"extern","kernel":"torch.ops.mylib.shuffle.default",
     "outputs":[{"name":"buf1","bytes":1048576,"dtype":"f32","shape":[4096,64]}],
     "reads":[{"name":"src","dep":"star","bytes":1048576}],
     "writes":[{"name":"buf1","dep":"star","bytes":1048576}]}
  ]})";

double us(const Graph& g, const char* node, const HardwareProfile& hw) {
  const NodeId v = g.find_node(node);
  REQUIRE(v != kNone);
  return calibrated_node_runtime(g, v, cost_facts(g), hw).us;
}

// What the profile's law of class `c` gives node `v` with the features it has.
double priced_by(const Graph& g, const char* node, KernelClass c, const HardwareProfile& hw) {
  const NodeId v = g.find_node(node);
  const TimeModel& tm = *hw.time_model;
  const ClassLaw& law = tm.laws.at(c);
  return law_us(law, law_features(g, v, cost_facts(g), hw, {tm.sm_count, tm.l2_bytes, law.routes_conv_families}));
}

}  // namespace

TEST_CASE("kernel classes: every class has a name that reads back", "[cost][classes]") {
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < kKernelClasses; ++i) {
    const auto c = static_cast<KernelClass>(i);
    CHECK(parse_kernel_class(to_string(c)) == c);
    CHECK(names.insert(to_string(c)).second);
    // The first eleven are their own base; a finer class has a base among them.
    CHECK(!is_fine_class(base_class(c)));
    CHECK(law_parent(c).has_value() == is_fine_class(c));
  }
  CHECK(law_parent(KernelClass::Indexing) == KernelClass::Copy);
  CHECK(law_parent(KernelClass::DepthwiseConvolutionBackwardNative) == KernelClass::ConvolutionBackward);
}

TEST_CASE("kernel classes: an embedding bag is indexing, priced by the rows it gathers", "[cost][classes]") {
  const Graph g = load_graph(kEmbeddingBag);
  const Node& bag = g.nodes[g.find_node("op0")];
  CHECK(classify_kernel(g, bag) == KernelClass::Indexing);
  CHECK(classify_node(g, bag) == KernelClass::Extern);  // host terms, plans' class_time_us
  // 81,920 rows of 256 bytes (20.97 MB, not the 25.6 MB table), the indices
  // and offsets, and the four items written.
  const std::int64_t rows = 81920LL * 256;
  CHECK(moved_bytes(g, bag, KernelClass::Indexing, cost_facts(g)) == rows + 655360 + 32776 + 1048576 + 655360 + 32768 + 32768);
  const HardwareProfile& hw = builtin_profile("h100-sxm");
  // The indexing law prices it (fitted on the embedding bags of
  // tests/data/class_sweep/h100): 8.3 µs and 1.9 x its rows at DRAM speed,
  // 21.6 µs, where the measured gathers ran 15-18 µs, the copy law gives
  // 7.4 and the extern law fitted on sorts gave 423 µs for the table.
  CHECK(law_class(*hw.time_model, KernelClass::Indexing) == KernelClass::Indexing);
  const double t = us(g, "op0", hw);
  CHECK(t == Approx(priced_by(g, "op0", KernelClass::Indexing, hw)));
  CHECK(t > 10);
  CHECK(t < 25);
  CHECK(priced_by(g, "op0", KernelClass::Copy, hw) < 10);
  CHECK(priced_by(g, "op0", KernelClass::Extern, hw) > 250);
  // One kernel launched, not the sort law's ten.
  const Pricing p = price_graph(g, hw, {});
  CHECK(p.kernel_classes[g.find_node("op0")] == KernelClass::Indexing);
  CHECK(p.launch.gap_us[g.find_node("op0")] == Approx(hw.time_model->launch_gap_us));
}

TEST_CASE("kernel classes: a scatter in place touches the rows it updates; an unknown extern its bytes", "[cost][classes]") {
  const Graph g = load_graph(kScatterAndUnknown);
  const Node& add = g.nodes[g.find_node("op0")];
  CHECK(classify_kernel(g, add) == KernelClass::Scatter);
  // The table read and written at the updates' 1 MiB each, the index and the updates.
  CHECK(moved_bytes(g, add, KernelClass::Scatter, cost_facts(g)) == 1048576 * 2 + 32768 + 1048576);
  const Node& unknown = g.nodes[g.find_node("op1")];
  CHECK(classify_kernel(g, unknown) == KernelClass::ExternMemory);
  CHECK(moved_bytes(g, unknown, KernelClass::ExternMemory, cost_facts(g)) == 2 * 1048576);
  // The H200 fits its own scatter law from its own sweep
  // (tests/data/class_sweep/h200); no sweep runs an unknown extern, which
  // the copy law prices.
  const HardwareProfile& hw = builtin_profile("h200");
  CHECK(law_class(*hw.time_model, KernelClass::Scatter) == KernelClass::Scatter);
  CHECK(hw.time_model->laws.at(KernelClass::Scatter).factor != builtin_profile("h100-sxm").time_model->laws.at(KernelClass::Scatter).factor);
  CHECK(us(g, "op0", hw) == Approx(priced_by(g, "op0", KernelClass::Scatter, hw)));
  CHECK(law_class(*hw.time_model, KernelClass::ExternMemory) == KernelClass::Copy);
  CHECK(us(g, "op1", hw) == Approx(priced_by(g, "op1", KernelClass::Copy, hw)));
  CHECK(us(g, "op1", hw) < 10);
}

TEST_CASE("kernel classes: sorts and selections keep the extern law", "[cost][classes]") {
  const Graph g = load_graph_file(test::data_path("exported/extern_sweep_0_inf.post.json"));
  const HardwareProfile& hw = builtin_profile("h100-sxm");
  int sorts = 0;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& n = g.nodes[v];
    if (n.kernel.find("topk") == std::string::npos && n.kernel.find("sort") == std::string::npos && n.kernel.find("nonzero") == std::string::npos)
      continue;
    ++sorts;
    CHECK(classify_kernel(g, n) == KernelClass::Extern);
    CHECK(calibrated_node_runtime(g, v, cost_facts(g), hw).us == priced_by(g, n.name.c_str(), KernelClass::Extern, hw));
  }
  CHECK(sorts == 9);
}

TEST_CASE("kernel classes: finer classes of the zoo, priced by the law the profile has for them", "[cost][classes]") {
  struct Case {
    const char* graph;
    KernelClass expect;
  };
  // EfficientNet-B0 and ConvNeXt-T run their depthwise convolutions
  // channels-last (cuDNN); ViT's backward sums bias gradients over columns
  // (strided reductions); the unaligned GEMM sweep multiplies by GPT-2's
  // vocabulary; the grouped grid has its grouped rows; the scatter-add
  // experiment stores through its indices (`c1 + 24*tmp0`), alone and
  // behind a sum.
  const Case cases[] = {{"exported/efficientnet_step_0_fwd.post.json", KernelClass::DepthwiseConvolution},
                        {"exported/efficientnet_step_1_bwd.post.json", KernelClass::DepthwiseConvolutionBackward},
                        {"exported/convnext_step_0_fwd.post.json", KernelClass::DepthwiseConvolution},
                        {"exported/vit_1_bwd.post.json", KernelClass::TritonStridedReduction},
                        {"exported/gemm_unaligned_sweep_0_inf.post.json", KernelClass::GemmUnaligned},
                        {"exported/conv_grid_grouped_0_fwd.post.json", KernelClass::GroupedConvolution},
                        {"experiments/scatter_add/h100/scatter_add_sweep_0_inf.post.json", KernelClass::TritonScatter},
                        {"experiments/scatter_add/h100/scatter_add_sweep_1_inf.post.json", KernelClass::TritonScatterReduction}};
  for (const Case& c : cases) {
    INFO(c.graph);
    const Graph g = load_graph_file(test::data_path(c.graph));
    for (const char* profile : {"h100-sxm", "h200"}) {
      const HardwareProfile& hw = builtin_profile(profile);
      const Pricing p = price_graph(g, hw, {});
      int found = 0;
      for (NodeId v = 0; v < g.num_nodes(); ++v) {
        if (p.kernel_classes[v] != c.expect) continue;
        ++found;
        CHECK(p.classes[v] == base_class(c.expect));
        // Its own law where the profile has one (scripts/fit-profiles.sh's
        // class_laws), else its base class's, as before the finer classes.
        const KernelClass law = law_class(*hw.time_model, c.expect);
        CHECK((law == c.expect || law == base_class(c.expect)));
        CHECK(p.calibrated_us[v] == priced_by(g, g.nodes[v].name.c_str(), law, hw));
      }
      CHECK(found > 0);
    }
  }
}

TEST_CASE("kernel classes: a profile's law of a finer class prices it", "[cost][classes]") {
  const Graph g = load_graph(kEmbeddingBag);
  HardwareProfile hw = builtin_profile("h100-sxm");
  ClassLaw law;
  law[LawTerm::Fixed] = 3.0;
  law[LawTerm::Memory] = 2.0;
  hw.time_model->laws[KernelClass::Indexing] = law;
  CHECK(law_class(*hw.time_model, KernelClass::Indexing) == KernelClass::Indexing);
  const double expect = 3.0 + 2.0 * static_cast<double>(moved_bytes(g, g.nodes[0], KernelClass::Indexing, cost_facts(g))) / hw.dram_bytes_per_s * 1e6;
  CHECK(us(g, "op0", hw) == Approx(expect));
  // It reads and writes back with the profile.
  const HardwareProfile back = hardware_profile_from_json(hardware_profile_to_json(hw));
  CHECK(back.time_model->laws.count(KernelClass::Indexing) == 1);
  CHECK(us(g, "op0", back) == Approx(expect));
}

// ATen calls that read a count back to the host (core/cost/kernel_class.h
// reads_back_to_host): the launch path then holds the host until their
// kernels are done. The class sweep's embedding-bag backward graph has six
// such calls (ATen's dense embedding-bag backward sizes its segments with
// `.item()`); its forward, six bags, none; the extern sweep's three
// nonzeros do.
TEST_CASE("kernel classes: calls that read a device value back hold the host", "[cost][classes][launch]") {
  auto extern_node = [](std::string kernel) {
    Node n;
    n.kind = NodeKind::Extern;
    n.kernel = std::move(kernel);
    return n;
  };
  CHECK(reads_back_to_host(extern_node("torch.ops.aten.nonzero.default")));
  CHECK(reads_back_to_host(extern_node("torch.ops.aten._embedding_bag_backward.default")));
  CHECK(reads_back_to_host(extern_node("torch.ops.aten._local_scalar_dense.default")));
  CHECK_FALSE(reads_back_to_host(extern_node("torch.ops.aten._embedding_bag.default")));
  CHECK_FALSE(reads_back_to_host(extern_node("extern_kernels.mm")));
  Node pointwise = extern_node("torch.ops.aten.nonzero.default");
  pointwise.kind = NodeKind::Pointwise;
  CHECK_FALSE(reads_back_to_host(pointwise));
  const HardwareProfile& hw = builtin_profile("h100-sxm");
  for (auto [graph, waits] : {std::pair{"class_sweep/h100/embedding_bag_sweep_1_bwd.post.json", 6},
                              std::pair{"class_sweep/h100/embedding_bag_sweep_0_fwd.post.json", 0},
                              std::pair{"exported/extern_sweep_0_inf.post.json", 3}}) {
    INFO(graph);
    const Graph g = load_graph_file(test::data_path(graph));
    const Pricing p = price_graph(g, hw, {});
    CHECK(std::count(p.launch.host_waits.begin(), p.launch.host_waits.end(), 1) == waits);
    CHECK(launch_path(g, p, false).host_waits == p.launch.host_waits);
    CHECK(launch_path(g, p, true).host_waits.empty());  // a CUDA graph replays without its host
  }
}

// Index expressions split into their top-level terms (core/cost/kernel_class.h
// index_terms), which the strided and scatter rules read: parentheses kept
// whole, blank terms (a hostile graph's " + tmp0") dropped.
TEST_CASE("kernel classes: an index expression's top-level terms", "[cost][classes]") {
  using Terms = std::vector<std::string_view>;
  CHECK(index_terms("32*d1 + d2 + 256*tmp0") == Terms{"32*d1", "d2", "256*tmp0"});
  CHECK(index_terms("d0 - 4096") == Terms{"d0", "4096"});
  CHECK(index_terms("ModularIndexing(d0 + 1, 2, 3) + d1") == Terms{"ModularIndexing(d0 + 1, 2, 3)", "d1"});
  CHECK(index_terms(" + tmp0") == Terms{"tmp0"});
  CHECK(index_terms("   ").empty());
}

TEST_CASE("kernel classes: an index coefficient longer than any int64 reads as a stride, not an error", "[cost][classes]") {
  // A libFuzzer finding: std::stoll threw out_of_range on a 23-digit factor.
  const Graph g = load_graph(R"({"format": "schedgraph/1", "inputs": [{"name": "x", "bytes": 64}], "outputs": ["y"],
    "nodes": [{"name": "p", "kind": "pointwise", "group": [32, 1], "outputs": [{"name": "y", "bytes": 64}],
               "reads": [{"name": "x", "dep": "memory", "index": "99999999999999999999999*c1 + 99999999999999999999999*c1 + c0",
                          "size": [4, 8], "bytes": 64}]}]})");
  CHECK(classify_kernel(g, g.nodes[0]) == KernelClass::TritonStridedPointwise);
}
