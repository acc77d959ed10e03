// Fusion legality on hand-built graphs, with the reference's reasons.
#include <catch2/catch.hpp>

#include "core/fusion/fusion.h"
#include "core/io/graph_reader.h"
#include "core/io/graph_writer.h"

#include <limits>
#include "tests/test_util.h"

using namespace schedlab;

namespace {

std::vector<std::vector<std::string>> groups_of(const Graph& g) {
  FrontEndResult fe = run_front_end(g, true, FusionOptions{});
  std::vector<std::vector<std::string>> out;
  for (const auto& grp : fe.fusion.groups) out.push_back(test::names(g, grp));
  return out;
}

std::string pw(const std::string& name, const std::string& out, const std::string& reads, long numel, long rnumel = 1,
               const char* kind = "pointwise", const std::string& write_index = "d0") {
  return R"({"name":")" + name + R"(","kind":")" + kind + R"(","group":[)" + std::to_string(numel) + "," + std::to_string(rnumel) +
         R"(],"outputs":[{"name":")" + out + R"(","bytes":4096,"dtype":"f32"}],"reads":[)" + reads + R"(],"writes":[{"name":")" + out +
         R"(","index":")" + write_index + R"(","size":[1024],"bytes":4096}]})";
}

std::string rd(const std::string& buf, const std::string& index = "d0") {
  return R"({"name":")" + buf + R"(","index":")" + index + R"(","size":[1024],"bytes":4096})";
}

Graph fusion_graph(const std::vector<std::string>& nodes, const std::string& outputs) {
  std::string text = R"({"format":"schedgraph/1","inputs":[{"name":"x","bytes":4096}],"outputs":[)" + outputs + R"(],"nodes":[)";
  for (std::size_t i = 0; i < nodes.size(); ++i) text += (i ? "," : "") + nodes[i];
  return load_graph(text + "]}");
}

}  // namespace

TEST_CASE("a pointwise chain with matching indices fuses into one node", "[fusion]") {
  Graph g = fusion_graph({pw("a", "ab", rd("x"), 1024), pw("b", "bb", rd("ab"), 1024), pw("c", "cb", rd("bb"), 1024)}, R"("cb")");
  CHECK(groups_of(g) == std::vector<std::vector<std::string>>{{"a", "b", "c"}});
}

TEST_CASE("refusals carry the reference's reasons", "[fusion]") {
  SECTION("mismatched index: no shared data, or (sharing x) memory deps did not match") {
    Graph alone = fusion_graph({pw("a", "ab", rd("x"), 1024), pw("b", "bb", rd("ab", "1023 - d0"), 1024)}, R"("bb")");
    CHECK(explain_fusion(alone, 0, 1, FusionOptions{}).final_reason == "no shared data");
    Graph g = fusion_graph({pw("a", "ab", rd("x"), 1024), pw("b", "bb", rd("ab", "1023 - d0") + "," + rd("x"), 1024)}, R"("bb")");
    auto ex = explain_fusion(g, 0, 1, FusionOptions{});
    CHECK_FALSE(ex.fused);
    CHECK(ex.final_reason == "memory deps did not match");
    REQUIRE_FALSE(ex.refusals.empty());
    CHECK(ex.refusals[0].reason == "memory deps did not match");
  }
  SECTION("different iteration spaces") {
    Graph g = fusion_graph({pw("a", "ab", rd("x"), 1024), pw("b", "bb", rd("ab"), 512)}, R"("bb")");
    CHECK(explain_fusion(g, 0, 1, FusionOptions{}).final_reason == "numel/rnumel mismatch (non-reduce) (1024, 512), (1, 1)");
  }
  SECTION("extern kernels never fuse") {
    Graph g = load_graph(R"({"format":"schedgraph/1","inputs":[{"name":"x","bytes":4096}],"outputs":["bb"],"nodes":[
      {"name":"mm","kind":"extern","outputs":[{"name":"ab","bytes":4096}],"reads":[{"name":"x","dep":"star","bytes":4096}],"writes":[{"name":"ab","dep":"star","bytes":4096}]},
      )" + pw("b", "bb", rd("ab"), 1024) + "]}");
    CHECK(explain_fusion(g, 0, 1, FusionOptions{}).final_reason == "node1 is extern or nop");
    CHECK(groups_of(g).size() == 2);
  }
  SECTION("reductions need equal (numel, rnumel); a pointwise consumer of numel x rnumel fuses in") {
    Graph g = fusion_graph({pw("p", "pb", rd("x"), 1024), pw("r1", "r1b", rd("pb"), 8, 128, "reduction"),
                     pw("r2", "r2b", rd("pb"), 16, 64, "reduction")},
                    R"("r1b","r2b")");
    auto groups = groups_of(g);
    CHECK(groups == std::vector<std::vector<std::string>>{{"p", "r1"}, {"r2"}});
    CHECK(explain_fusion(g, 1, 2, FusionOptions{}).final_reason.rfind("numel/rnumel mismatch (reduce)", 0) == 0);
  }
  SECTION("horizontal fusion needs enough shared bytes and proximity") {
    // Two readers of x sharing only an 8-byte read: below the threshold of 10.
    Graph g = load_graph(R"({"format":"schedgraph/1","inputs":[{"name":"x","bytes":8}],"outputs":["ab","bb"],"nodes":[
      {"name":"a","kind":"pointwise","group":[2,1],"outputs":[{"name":"ab","bytes":8}],"reads":[{"name":"x","index":"d0","size":[2],"bytes":8}],"writes":[{"name":"ab","index":"d0","size":[2],"bytes":8}]},
      {"name":"b","kind":"pointwise","group":[2,1],"outputs":[{"name":"bb","bytes":8}],"reads":[{"name":"x","index":"d0","size":[2],"bytes":8}],"writes":[{"name":"bb","index":"d0","size":[2],"bytes":8}]}]})");
    CHECK(explain_fusion(g, 0, 1, FusionOptions{}).final_reason == "score_fusion_memory_threshold");
  }
}

TEST_CASE("fusion stops at max fusion size", "[fusion]") {
  std::vector<std::string> nodes{pw("n0", "b0", rd("x"), 1024)};
  for (int i = 1; i < 70; ++i) nodes.push_back(pw("n" + std::to_string(i), "b" + std::to_string(i), rd("b" + std::to_string(i - 1)), 1024));
  Graph g = fusion_graph(nodes, R"("b69")");
  auto groups = groups_of(g);
  std::size_t largest = 0;
  for (const auto& grp : groups) largest = std::max(largest, grp.size());
  CHECK(largest <= 64);
  CHECK(groups.size() >= 2);
}

TEST_CASE("the reorder round permutes a pointwise node's loops to fuse it into a reduction", "[fusion]") {
  // p writes b in (i, j, k) order; r reduces over j reading b as (i, k, j):
  // no dep is equal until p's loops are reordered (Inductor's loop_ordering_after_fusion).
  Graph g = load_graph(R"({"format":"schedgraph/1","inputs":[{"name":"x","bytes":2097152}],"outputs":["rb"],"nodes":[
    {"name":"p","kind":"pointwise","group":[524288,1],"outputs":[{"name":"b","bytes":2097152,"dtype":"f32"}],
     "reads":[{"name":"x","index":"131072*d0 + 1024*d1 + d2","size":[4,128,1024],"bytes":2097152}],
     "writes":[{"name":"b","index":"131072*d0 + 1024*d1 + d2","size":[4,128,1024],"bytes":2097152}]},
    {"name":"r","kind":"reduction","group":[4096,128],"outputs":[{"name":"rb","bytes":16384,"dtype":"f32"}],
     "reads":[{"name":"b","index":"131072*d0 + d1 + 1024*d2","size":[4,1024,128],"bytes":2097152}],
     "writes":[{"name":"rb","index":"1024*d0 + d1","size":[4,1024],"bytes":16384}]}]})");
  FrontEndResult fe = run_front_end(g, true, FusionOptions{});
  REQUIRE(fe.fusion.groups.size() == 1);
  CHECK(test::names(g, fe.fusion.groups[0]) == std::vector<std::string>{"p", "r"});
  // Before the reorder round the pair shared nothing.
  FusionOptions record;
  record.record_refusals = true;
  FusionResult res = fuse_nodes(g, fe.deps, fe.schedule, record);
  REQUIRE_FALSE(res.refusals.empty());
  CHECK(res.refusals[0].reason == "no shared data");
  CHECK(res.refusals.back().round < res.rounds);
}

TEST_CASE("the reorder round leaves CPU graphs' loops alone, as Inductor's is_cpu check does", "[fusion]") {
  // The pair above on the C++ backend: no reordering, so the last round still
  // finds no shared data (with reordering it would reach the backend's loop rule).
  Graph g = load_graph(R"({"format":"schedgraph/1","device":"cpu","inputs":[{"name":"x","bytes":2097152}],"outputs":["rb"],"nodes":[
    {"name":"p","kind":"pointwise","group":[524288,1],"group_dims":[[4,128,1024],[]],"outputs":[{"name":"b","bytes":2097152,"dtype":"f32"}],
     "reads":[{"name":"x","index":"131072*d0 + 1024*d1 + d2","size":[4,128,1024],"bytes":2097152}],
     "writes":[{"name":"b","index":"131072*d0 + 1024*d1 + d2","size":[4,128,1024],"bytes":2097152}]},
    {"name":"r","kind":"reduction","group":[4096,128],"group_dims":[[4,1024],[128]],"outputs":[{"name":"rb","bytes":16384,"dtype":"f32"}],
     "reads":[{"name":"b","index":"131072*d0 + d1 + 1024*d2","size":[4,1024,128],"bytes":2097152}],
     "writes":[{"name":"rb","index":"1024*d0 + d1","size":[4,1024],"bytes":16384}]}]})");
  FrontEndResult fe = run_front_end(g, true, FusionOptions{});
  CHECK(fe.fusion.groups.size() == 2);
  FusionOptions record;
  record.record_refusals = true;
  FusionResult res = fuse_nodes(g, fe.deps, fe.schedule, record);
  REQUIRE_FALSE(res.refusals.empty());
  CHECK(res.refusals.back().round == res.rounds);
  CHECK(res.refusals.back().reason == "no shared data");
}

TEST_CASE("loop reordering keeps an index variable numbered past 64 bits as written", "[fusion][errors]") {
  // As above, with p also reading y through an index that is not affine in
  // its loops (a variable numbered with 20 digits): reordering p's loops
  // renames d0..d2 and leaves d99999999999999999999 alone instead of throwing.
  Graph g = load_graph(R"({"format":"schedgraph/1","inputs":[{"name":"x","bytes":2097152},{"name":"y","bytes":2097152}],"outputs":["rb"],"nodes":[
    {"name":"p","kind":"pointwise","group":[524288,1],"outputs":[{"name":"b","bytes":2097152,"dtype":"f32"}],
     "reads":[{"name":"x","index":"131072*d0 + 1024*d1 + d2","size":[4,128,1024],"bytes":2097152},
              {"name":"y","index":"d99999999999999999999 + d1","size":[4,128,1024],"bytes":2097152}],
     "writes":[{"name":"b","index":"131072*d0 + 1024*d1 + d2","size":[4,128,1024],"bytes":2097152}]},
    {"name":"r","kind":"reduction","group":[4096,128],"outputs":[{"name":"rb","bytes":16384,"dtype":"f32"}],
     "reads":[{"name":"b","index":"131072*d0 + d1 + 1024*d2","size":[4,1024,128],"bytes":2097152}],
     "writes":[{"name":"rb","index":"1024*d0 + d1","size":[4,1024],"bytes":16384}]}]})");
  FrontEndResult fe = run_front_end(g, true, FusionOptions{});
  REQUIRE(fe.fusion.groups.size() == 1);
  CHECK(test::names(g, fe.fusion.groups[0]) == std::vector<std::string>{"p", "r"});
}

TEST_CASE("the reorder round picks the common buffer with the most elements its loops touch (MemoryDep.get_numel)", "[fusion]") {
  // p writes b channels-last over (n, h, w, c) and reads a per-channel
  // vector v; q reads b as (n, c, h, w) and v by its own channel loop. Both
  // buffers differ only in loop order; v's dep lists all four of p's loops
  // but its index uses one, so it counts 64 elements, b 1152. Counting
  // every listed loop tied them, picked v (first in p's order), found the
  // two reads equal once merged and shared v's bytes without reordering:
  // "memory deps did not match" (EfficientNet-B0 backward, op8 + op10).
  Graph g = load_graph(R"({"format":"schedgraph/1","inputs":[{"name":"x","bytes":4608},{"name":"v","bytes":256}],"outputs":["qb"],"nodes":[
    {"name":"p","kind":"pointwise","group":[1152,1],"outputs":[{"name":"b","bytes":4608,"dtype":"f32"}],
     "reads":[{"name":"v","index":"d3","size":[2,3,3,64],"bytes":256},
              {"name":"x","index":"576*d0 + 192*d1 + 64*d2 + d3","size":[2,3,3,64],"bytes":4608}],
     "writes":[{"name":"b","index":"576*d0 + 192*d1 + 64*d2 + d3","size":[2,3,3,64],"bytes":4608}]},
    {"name":"q","kind":"pointwise","group":[1152,1],"outputs":[{"name":"qb","bytes":4608,"dtype":"f32"}],
     "reads":[{"name":"b","index":"576*d0 + d1 + 192*d2 + 64*d3","size":[2,64,3,3],"bytes":4608},
              {"name":"v","index":"d1","size":[2,64],"bytes":256}],
     "writes":[{"name":"qb","index":"576*d0 + 9*d1 + 3*d2 + d3","size":[2,64,3,3],"bytes":4608}]}]})");
  CHECK(groups_of(g) == std::vector<std::vector<std::string>>{{"p", "q"}});
}

TEST_CASE("a node's loops reordered twice are permuted from their current order", "[fusion]") {
  // b is [4, 8, 16]; p writes it in order, q reads it (and x) as (0, 2, 1),
  // r as (2, 0, 1). In the reorder round q's pair comes first (through x):
  // p's loops follow q's, and the pair is refused (m, an extern reading b,
  // sits between them). Then p's loops follow r's: permuting the exported
  // order instead of q's left p's deps as they were and the pair shared
  // nothing (ConvNeXt-Tiny backward, op220 + op223). q and r are more than
  // 64 nodes apart, so they do not fuse horizontally.
  std::string nodes = R"(
    {"name":"p","kind":"pointwise","group":[512,1],"outputs":[{"name":"b","bytes":2048,"dtype":"f32"}],
     "reads":[{"name":"x","index":"128*d0 + 16*d1 + d2","size":[4,8,16],"bytes":2048}],
     "writes":[{"name":"b","index":"128*d0 + 16*d1 + d2","size":[4,8,16],"bytes":2048}]},
    {"name":"m","kind":"extern","outputs":[{"name":"mb","bytes":64,"dtype":"f32"}],
     "reads":[{"name":"b","dep":"star","bytes":2048}],"writes":[{"name":"mb","dep":"star","bytes":64}]},
    {"name":"q","kind":"pointwise","group":[512,1],"outputs":[{"name":"qb","bytes":2048,"dtype":"f32"}],
     "reads":[{"name":"x","index":"128*d0 + d1 + 16*d2","size":[4,16,8],"bytes":2048},
              {"name":"b","index":"128*d0 + d1 + 16*d2","size":[4,16,8],"bytes":2048},{"name":"mb","dep":"star","bytes":64}],
     "writes":[{"name":"qb","index":"128*d0 + 8*d1 + d2","size":[4,16,8],"bytes":2048}]},)";
  std::string outputs = R"("qb","rb")";
  for (int i = 0; i < 66; ++i) {
    const std::string e = std::to_string(i);
    nodes += R"({"name":"e)" + e + R"(","kind":"extern","outputs":[{"name":"eb)" + e +
             R"(","bytes":4}],"reads":[{"name":"y","dep":"star","bytes":4}]},)";
    outputs += R"(,"eb)" + e + R"(")";
  }
  nodes += R"(
    {"name":"r","kind":"pointwise","group":[512,1],"outputs":[{"name":"rb","bytes":2048,"dtype":"f32"}],
     "reads":[{"name":"b","index":"d0 + 128*d1 + 16*d2","size":[16,4,8],"bytes":2048}],
     "writes":[{"name":"rb","index":"32*d0 + 8*d1 + d2","size":[16,4,8],"bytes":2048}]})";
  Graph g = load_graph(R"({"format":"schedgraph/1","inputs":[{"name":"x","bytes":2048},{"name":"y","bytes":4}],"outputs":[)" + outputs +
                       R"(],"nodes":[)" + nodes + "]}");
  auto groups = groups_of(g);
  CHECK(std::count(groups.begin(), groups.end(), std::vector<std::string>{"p", "r"}) == 1);
  CHECK(std::count(groups.begin(), groups.end(), std::vector<std::string>{"q"}) == 1);
}

TEST_CASE("the Triton backend keeps a node's 2-D tiling: tiling mismatch, invalid tiling for reduction", "[fusion]") {
  // p's loops are [32, 3, 64]; it reads x transposed (stride 1 on its first
  // loop), so select_tiling splits its kernel as (32, 192).
  const std::string p = R"({"name":"p","kind":"pointwise","group":[6144,1],"outputs":[{"name":"b","bytes":24576,"dtype":"f32"}],
    "reads":[{"name":"x","index":"d0 + 32*d1 + 96*d2","size":[32,3,64],"bytes":24576}],
    "writes":[{"name":"b","index":"192*d0 + 64*d1 + d2","size":[32,3,64],"bytes":24576}]})";
  auto with = [&](const std::string& second, const std::string& x_index = "d0 + 32*d1 + 96*d2") {
    std::string first = p;
    first.replace(first.find("d0 + 32*d1 + 96*d2"), std::string("d0 + 32*d1 + 96*d2").size(), x_index);
    return load_graph(R"({"format":"schedgraph/1","inputs":[{"name":"x","bytes":24576},{"name":"y","bytes":24576}],"outputs":["out"],"nodes":[)" +
                      first + "," + second + "]}");
  };
  SECTION("two pointwise nodes tiled differently") {
    // q reads b as p writes it, and y split after its second loop: (96, 64).
    // Together the first compatible tiling is p's, which q's is not.
    const std::string q = R"({"name":"q","kind":"pointwise","group":[6144,1],"outputs":[{"name":"out","bytes":24576,"dtype":"f32"}],
      "reads":[{"name":"b","index":"192*d0 + 64*d1 + d2","size":[32,3,64],"bytes":24576},
               {"name":"y","index":"3*d0 + d1 + 96*d2","size":[32,3,64],"bytes":24576}],
      "writes":[{"name":"out","index":"192*d0 + 64*d1 + d2","size":[32,3,64],"bytes":24576}]})";
    CHECK(explain_fusion(with(q), 0, 1, FusionOptions{}).final_reason == "tiling mismatch");
    // Without y, q is untiled and takes p's tiling: they fuse.
    const std::string q_untiled = R"({"name":"q","kind":"pointwise","group":[6144,1],"outputs":[{"name":"out","bytes":24576,"dtype":"f32"}],
      "reads":[{"name":"b","index":"192*d0 + 64*d1 + d2","size":[32,3,64],"bytes":24576}],
      "writes":[{"name":"out","index":"192*d0 + 64*d1 + d2","size":[32,3,64],"bytes":24576}]})";
    CHECK(groups_of(with(q_untiled)) == std::vector<std::vector<std::string>>{{"p", "q"}});
    FusionOptions off;
    off.tiling_prevents_pointwise_fusion = false;
    CHECK(explain_fusion(with(q), 0, 1, off).fused);
  }
  SECTION("a pointwise producer of a reduction") {
    // r reduces b over its last loop: (numel, rnumel) = (96, 64). p's
    // tiling (32, 192) is neither untiled nor (96, 64).
    const std::string r = R"({"name":"r","kind":"reduction","group":[96,64],"outputs":[{"name":"out","bytes":384,"dtype":"f32"}],
      "reads":[{"name":"b","index":"192*d0 + 64*d1 + d2","size":[32,3,64],"bytes":24576}],
      "writes":[{"name":"out","index":"3*d0 + d1","size":[32,3],"bytes":384}]})";
    CHECK(explain_fusion(with(r), 0, 1, FusionOptions{}).final_reason == "invalid tiling for reduction");
    // Split after its second loop instead, p tiles as (96, 64): it fuses.
    CHECK(groups_of(with(r, "3*d0 + d1 + 96*d2")) == std::vector<std::vector<std::string>>{{"p", "r"}});
  }
}

TEST_CASE("a pointwise node whose loops do not split over a reduction's (numel, rnumel) does not join it", "[fusion]") {
  // p loops over [3, 2048], r over (2048, 3): both 6144 elements, but 3 does
  // not divide 2048 (SIMDKernel.is_compatible). They share three scalars
  // (12 bytes), enough for a horizontal pair.
  Graph g = load_graph(R"({"format":"schedgraph/1","inputs":[{"name":"x","bytes":24576},{"name":"s1","bytes":4},{"name":"s2","bytes":4},{"name":"s3","bytes":4}],"outputs":["pb","rb"],"nodes":[
    {"name":"p","kind":"pointwise","group":[6144,1],"outputs":[{"name":"pb","bytes":24576,"dtype":"f32"}],
     "reads":[{"name":"s1","index":"0","size":[],"bytes":4},{"name":"s2","index":"0","size":[],"bytes":4},{"name":"s3","index":"0","size":[],"bytes":4},
              {"name":"x","index":"2048*d0 + d1","size":[3,2048],"bytes":24576}],
     "writes":[{"name":"pb","index":"2048*d0 + d1","size":[3,2048],"bytes":24576}]},
    {"name":"r","kind":"reduction","group":[2048,3],"outputs":[{"name":"rb","bytes":8192,"dtype":"f32"}],
     "reads":[{"name":"s1","index":"0","size":[],"bytes":4},{"name":"s2","index":"0","size":[],"bytes":4},{"name":"s3","index":"0","size":[],"bytes":4},
              {"name":"x","index":"d0 + 2048*d1","size":[2048,3],"bytes":24576}],
     "writes":[{"name":"rb","index":"d0","size":[2048],"bytes":8192}]}]})");
  CHECK(explain_fusion(g, 0, 1, FusionOptions{}).final_reason == "nodes numel/rnumel incompatibility");
}

TEST_CASE("a fused group whose joined name is taken gets the first free NAME#k", "[fusion][errors]") {
  // op0 and op1 fuse; a third node is already called op0_op1.
  Graph g = fusion_graph({pw("op0", "b0", rd("x"), 1024), pw("op1", "b1", rd("b0"), 1024),
                   R"({"name":"op0_op1","kind":"extern","outputs":[{"name":"b2","bytes":64}],"reads":[{"name":"b1","dep":"star","bytes":4096}]})"},
                  R"("b2")");
  FrontEndResult fe = run_front_end(g, true, FusionOptions{});
  Graph post = load_graph(write_graph_json(build_fused_graph(g, fe.deps, fe.fusion.groups)));
  REQUIRE(post.nodes.size() == 2);
  CHECK(post.nodes[0].name == "op0_op1#2");
  CHECK(post.nodes[0].members == std::vector<std::string>{"op0", "op1"});
  CHECK(post.nodes[1].name == "op0_op1");
}

TEST_CASE("summed runtimes past the largest double stay finite, so the fused file reloads", "[fusion][errors]") {
  auto with_runtime = [](std::string node) { return node.insert(node.size() - 1, R"(,"runtime_us":1.7e308)"); };
  Graph g = fusion_graph({with_runtime(pw("op0", "b0", rd("x"), 1024)), with_runtime(pw("op1", "b1", rd("b0"), 1024))}, R"("b1")");
  FrontEndResult fe = run_front_end(g, true, FusionOptions{});
  REQUIRE(fe.fusion.groups.size() == 1);
  Graph post = load_graph(write_graph_json(build_fused_graph(g, fe.deps, fe.fusion.groups)));
  REQUIRE(post.nodes[0].runtime_us);
  CHECK(*post.nodes[0].runtime_us == std::numeric_limits<double>::max());
}

TEST_CASE("sizes with symbols compare as Inductor's sympy expressions: u0 and u1 differ at equal hints", "[fusion]") {
  // Two experts' pointwise kernels reading one buffer: both hinted 0 elements.
  auto expert = [](const std::string& name, const std::string& sym) {
    return R"({"name":")" + name + R"(","kind":"pointwise","group":[0,1],"group_expr":["256*)" + sym + R"(","1"],
      "outputs":[{"name":"b)" + name + R"(","bytes":0}],
      "reads":[{"name":"x","index":"d0","size":[1024],"bytes":4096}],
      "writes":[{"name":"b)" + name + R"(","index":"d0","size":[0],"size_expr":["256*)" + sym + R"("],"bytes":0}]})";
  };
  CHECK(groups_of(fusion_graph({expert("e0", "u0"), expert("e1", "u1")}, R"("be0","be1")")) ==
        std::vector<std::vector<std::string>>{{"e0"}, {"e1"}});
  CHECK(groups_of(fusion_graph({expert("e0", "u0"), expert("e1", "u0")}, R"("be0","be1")")) ==
        std::vector<std::vector<std::string>>{{"e0", "e1"}});
}

TEST_CASE("CPU graphs follow the C++ backend: loop tuples, outer-loop fusion after a reduction", "[fusion]") {
  auto node = [](const std::string& name, const char* kind, const std::string& out, const std::string& in, const std::string& dims,
                 long numel, long rnumel) {
    return R"({"name":")" + name + R"(","kind":")" + kind + R"(","group":[)" + std::to_string(numel) + "," + std::to_string(rnumel) +
           R"(],"group_dims":)" + dims + R"(,"outputs":[{"name":")" + out + R"(","bytes":4096}],"reads":[{"name":")" + in +
           R"(","index":"d0","size":[128],"bytes":4096}],"writes":[{"name":")" + out + R"(","index":"d0","size":[128],"bytes":4096}]})";
  };
  auto cpu_graph = [](const std::vector<std::string>& nodes, const std::string& outputs) {
    std::string text = R"({"format":"schedgraph/1","device":"cpu","inputs":[{"name":"x","bytes":4096}],"outputs":[)" + outputs + R"(],"nodes":[)";
    for (std::size_t i = 0; i < nodes.size(); ++i) text += (i ? "," : "") + nodes[i];
    return load_graph(text + "]}");
  };
  // A row reduction then a pointwise op over the same 128 rows: one outer loop (cpu_mlp).
  CHECK(groups_of(cpu_graph({node("r", "reduction", "br", "x", "[[128],[256]]", 128, 256),
                             node("p", "pointwise", "bp", "br", "[[128],[]]", 128, 1)},
                            R"("bp")")) == std::vector<std::vector<std::string>>{{"r", "p"}});
  // Outer loops [4, 32] and [128]: nothing shared, so no fusion, where Triton would fuse 128 == 128 (cpu_convnet).
  CHECK(groups_of(cpu_graph({node("r", "reduction", "br", "x", "[[4,32],[1024]]", 128, 1024),
                             node("p", "pointwise", "bp", "br", "[[128],[]]", 128, 1)},
                            R"("bp")")) == std::vector<std::vector<std::string>>{{"r"}, {"p"}});
}

TEST_CASE("CPU graphs: outer-loop pairs wait for a round without ordinary pairs (the C++ backend's pair priority)", "[fusion]") {
  // a: a row reduction over x; b: pointwise over [128, 64] reading a (and x,
  // sharing far more with a than with e); e: pointwise over b's loops.
  // (a, b) is an outer-loop pair, (b, e) an ordinary one. Taken by score
  // alone, a+b would fuse first (depth 1) and then refuse e (depth 2); the
  // priority keeps only (b, e) in round 1, and a joins b+e in round 2.
  auto dep = [](const std::string& buf, const char* index, const char* size, long bytes) {
    return R"({"name":")" + buf + R"(","index":")" + index + R"(","size":)" + size + R"(,"bytes":)" + std::to_string(bytes) + "}";
  };
  auto node = [](const std::string& name, const char* kind, const char* dims, long numel, long rnumel, const std::string& out,
                 const std::string& write, const std::string& reads) {
    return R"({"name":")" + name + R"(","kind":")" + kind + R"(","group":[)" + std::to_string(numel) + "," + std::to_string(rnumel) +
           R"(],"group_dims":)" + dims + R"(,"outputs":[{"name":")" + out + R"(","bytes":8192}],"reads":[)" + reads +
           R"(],"writes":[)" + write + "]}";
  };
  const std::string x = dep("x", "64*d0 + d1", "[128,64]", 262144);
  Graph g = load_graph(R"({"format":"schedgraph/1","device":"cpu","inputs":[{"name":"x","bytes":262144}],"outputs":["e"],"nodes":[)" +
                       node("a", "reduction", "[[128],[64]]", 128, 64, "a", dep("a", "d0", "[128]", 512), x) + "," +
                       node("b", "pointwise", "[[128,64],[]]", 8192, 1, "b", dep("b", "64*d0 + d1", "[128,64]", 8192),
                            dep("a", "d0", "[128,64]", 512) + "," + x) + "," +
                       node("e", "pointwise", "[[128,64],[]]", 8192, 1, "e", dep("e", "64*d0 + d1", "[128,64]", 8192),
                            dep("b", "64*d0 + d1", "[128,64]", 8192)) + "]}");
  CHECK(groups_of(g) == std::vector<std::vector<std::string>>{{"a", "b", "e"}});
}

TEST_CASE("fusion carries a convolution's geometry: an extern alone, a template with its epilogue", "[fusion]") {
  const std::string conv = R"("convolution":{"input":[1,4,16,16],"weight":[4,1,3,3],"output":[1,4,16,16],"stride":[1,1],)"
                           R"("padding":[1,1],"dilation":[1,1],"groups":4,"transposed":false,"memory_format":"channels_last"})";
  auto with_conv = [&conv](std::string node, const char* kind) {
    node.replace(node.find("\"pointwise\""), 11, std::string("\"") + kind + "\"");
    return node.insert(node.size() - 1, "," + conv);
  };
  for (const char* kind : {"template", "extern"}) {
    INFO(kind);
    Graph g = fusion_graph({with_conv(pw("conv", "cb", rd("x"), 1024), kind), pw("relu", "rb", rd("cb"), 1024)}, R"("rb")");
    FrontEndResult fe = run_front_end(g, true, FusionOptions{});
    Graph post = load_graph(write_graph_json(build_fused_graph(g, fe.deps, fe.fusion.groups)));
    const bool fused = std::string(kind) == "template";  // an extern kernel takes no epilogue
    REQUIRE(post.nodes.size() == (fused ? 1u : 2u));
    CHECK(post.nodes[0].members == (fused ? std::vector<std::string>{"conv", "relu"} : std::vector<std::string>{}));
    CHECK(post.nodes[0].convolution == g.nodes[0].convolution);
    if (!fused) CHECK_FALSE(post.nodes[1].convolution);
  }
}

TEST_CASE("fusion unites its members' reduction types and carries an attention call unchanged", "[fusion]") {
  auto with = [](std::string node, const std::string& field) { return node.insert(node.size() - 1, "," + field); };
  const std::string attention = R"("attention":{"query":[1,2,16,32],"key":[1,2,16,32],"value":[1,2,16,32],"causal":true,"bias":false,"dropout_p":0.1})";
  std::string attn = with(pw("attn", "ab", rd("x"), 1024), attention);
  attn.replace(attn.find("\"pointwise\""), 11, "\"extern\"");
  Graph g = fusion_graph({attn, with(pw("a", "bb", rd("ab"), 1024), R"("reduction_types":["sum","welford_reduce"])"),
                   with(pw("b", "cb", rd("bb"), 1024), R"("reduction_types":["max","sum"])"), pw("c", "db", rd("cb"), 1024)},
                  R"("db")");
  FrontEndResult fe = run_front_end(g, true, FusionOptions{});
  Graph post = load_graph(write_graph_json(build_fused_graph(g, fe.deps, fe.fusion.groups)));
  REQUIRE(post.nodes.size() == 2u);  // an extern kernel takes no epilogue
  CHECK(post.nodes[0].attention == g.nodes[0].attention);
  CHECK(post.nodes[0].reduction_types.empty());
  CHECK(post.nodes[1].members == std::vector<std::string>{"a", "b", "c"});
  CHECK(post.nodes[1].reduction_types == std::vector<std::string>{"max", "sum", "welford_reduce"});
  CHECK_FALSE(post.nodes[1].attention);
}
