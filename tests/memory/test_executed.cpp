// Memory as executed: in-place reuse, the wrapper's reuse pool and the
// caching allocator on hand-made graphs whose allocations can be listed by hand.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <tuple>
#include <nlohmann/json.hpp>

#include "core/io/graph_reader.h"
#include "core/io/graph_writer.h"
#include "core/io/plan_writer.h"
#include "core/io/profiles.h"
#include "core/memory/estimate.h"
#include "core/memory/executed.h"
#include "core/memory/methods.h"
#include "core/memory/planning_info.h"
#include "core/plan/plan.h"
#include "core/predict/predicted.h"
#include "core/util/range_add_max_tree.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {
using schedlab::test::MiB;

// x -> mm (extern, 4 MiB) -> relu (pointwise, same index, 4 MiB) -> out.
// The relu's read of the mm result is its last use: the generated code
// writes the relu in place (`buf1 = buf0; del buf0  # reuse`).
const char* kInplace = R"({"format":"schedgraph/1","name":"inplace",
  "inputs":[{"name":"primals_1","bytes":4194304}],"outputs":["buf1"],
  "nodes":[
    {"name":"op0","kind":"extern","kernel":"extern_kernels.mm",
     "outputs":[{"name":"buf0","bytes":4194304,"dtype":"f32"}],
     "reads":[{"name":"primals_1","dep":"star","bytes":4194304}],"writes":[{"name":"buf0","dep":"star","bytes":4194304}]},
    {"name":"op1","kind":"pointwise","group":[1048576,1],
     "outputs":[{"name":"buf1","bytes":4194304,"dtype":"f32"}],
     "reads":[{"name":"buf0","index":"d0","size":[1048576],"bytes":4194304}],
     "writes":[{"name":"buf1","index":"d0","size":[1048576],"bytes":4194304}]}
  ]})";

}  // namespace

TEST_CASE("memory as executed: an output written in place over a dying input", "[memory][executed]") {
  Graph g = load_graph(kInplace);
  ExecutedMemory m = estimate_memory_as_executed(g, g.baseline_order());
  CHECK(m.inplace_reuses == 1);
  // The scheduler counts buf0 and buf1 together at op1 (8 MiB); the code holds one.
  MemoryPlanningInfo info = compute_planning_info(g, g.baseline_order());
  CHECK(estimate_peak_memory(g, info, g.baseline_order()).peak == 8 * MiB);
  CHECK(m.peak_bytes == 4 * MiB);
  // Input: one 20 MiB large segment (4 MiB split off); buf0 fits in its rest.
  CHECK(m.allocated_before_bytes == 4 * MiB);
  CHECK(m.reserved_bytes == 20 * MiB);
  REQUIRE(m.events.size() == 2);
  CHECK(m.events[1].kind == ExecutedEvent::Kind::Reuse);
  CHECK(g.buffers[m.events[1].donor].name == "buf0");
}

// A freeable input read at the index the node writes: Inductor writes the
// output into it only when AOTAutograd donated it (T5's loss backward reads
// the logits' view `view_1`, freeable but not donated, and allocates its
// gradient beside it). A file without `donated` reads it as `freeable`.
TEST_CASE("memory as executed: only a donated input is taken over in place", "[memory][executed]") {
  const auto graph = [](const std::string& donated) {
    return load_graph(R"({"format":"schedgraph/1","name":"undonated_logits",
      "inputs":[{"name":"view_1","bytes":4194304,"freeable":true)" + donated + R"(,"dtype":"f32"}],"outputs":["buf0"],
      "nodes":[{"name":"op0","kind":"pointwise","group":[1048576,1],
        "outputs":[{"name":"buf0","bytes":4194304,"dtype":"f32"}],
        "reads":[{"name":"view_1","index":"d0","size":[1048576],"bytes":4194304}],
        "writes":[{"name":"buf0","index":"d0","size":[1048576],"bytes":4194304}]}]})");
  };
  for (const auto& [field, reuses, peak] : {std::tuple{std::string(), 1, 4 * MiB},
                                             std::tuple{std::string(R"(,"donated":true)"), 1, 4 * MiB},
                                             std::tuple{std::string(R"(,"donated":false)"), 0, 8 * MiB}}) {
    CAPTURE(field);
    const Graph g = graph(field);
    CHECK(g.buffers[0].donated == (reuses == 1));
    const ExecutedMemory m = estimate_memory_as_executed(g, g.baseline_order());
    CHECK(m.inplace_reuses == reuses);
    CHECK(m.peak_bytes == peak);
    // Written back only where it differs from `freeable` (absent reads as it).
    const bool written = write_graph_json(g).find("\"donated\"") != std::string::npos;
    CHECK(written == (reuses == 0));
    CHECK(load_graph(write_graph_json(g)).buffers[0].donated == g.buffers[0].donated);
  }
}

TEST_CASE("memory as executed: no in-place reuse when the index differs or the input lives on", "[memory][executed]") {
  // The relu reads buf0 through another index (the first "index" is op1's read).
  std::string transposed = kInplace;
  transposed.replace(transposed.find(R"("index":"d0")"), 12, R"("index":"d1")");
  // A second reader after op1 keeps buf0 alive: no reuse either.
  std::string read_later = kInplace;
  read_later.replace(read_later.rfind("]}"), 2, R"(,
    {"name":"op2","kind":"pointwise","group":[1048576,1],"outputs":[{"name":"buf2","bytes":4194304,"dtype":"f32"}],
     "reads":[{"name":"buf0","index":"d0","size":[1048576],"bytes":4194304}],
     "writes":[{"name":"buf2","index":"d0","size":[1048576],"bytes":4194304}]}]})");
  read_later.replace(read_later.find(R"("outputs":["buf1"])"), 18, R"("outputs":["buf1","buf2"])");
  for (int later : {0, 1}) {
    Graph g = load_graph(later ? read_later : transposed);
    ExecutedMemory m = estimate_memory_as_executed(g, g.baseline_order());
    CHECK(m.inplace_reuses == later);  // op2 may still take buf0 over at its own last use
    CHECK(m.peak_bytes >= 8 * MiB);
  }
}

TEST_CASE("memory as executed: the reuse pool keeps a freed buffer until its taker", "[memory][executed]") {
  // op0 -> a (2 MiB, extern); op1 reads a -> b (1 MiB); a dies at op1 and goes
  // to the pool; op2 makes c (1 MiB, other dtype); op3 (extern, 2 MiB f32)
  // takes a's storage: a stays allocated from op1 to op3.
  Graph g = load_graph(R"({"format":"schedgraph/1","name":"pool",
    "inputs":[{"name":"primals_1","bytes":512}],"outputs":["b","c","d"],
    "nodes":[
      {"name":"op0","kind":"extern","kernel":"extern_kernels.mm","outputs":[{"name":"a","bytes":2097152,"dtype":"f32"}],
       "reads":[{"name":"primals_1","dep":"star","bytes":512}]},
      {"name":"op1","kind":"reduction","group":[1,1],"outputs":[{"name":"b","bytes":1048576,"dtype":"f32"}],
       "reads":[{"name":"a","dep":"star","bytes":2097152}]},
      {"name":"op2","kind":"pointwise","group":[1,1],"outputs":[{"name":"c","bytes":1048576,"dtype":"bf16"}],
       "reads":[{"name":"b","dep":"star","bytes":1048576}]},
      {"name":"op3","kind":"extern","kernel":"extern_kernels.mm","outputs":[{"name":"d","bytes":2097152,"dtype":"f32"}],
       "reads":[{"name":"c","dep":"star","bytes":1048576}]}
    ]})");
  ExecutedMemory m = estimate_memory_as_executed(g, g.baseline_order());
  CHECK(m.pool_reuses == 1);
  CHECK(m.inplace_reuses == 0);
  // Live at op2: a (pooled, 2 MiB) + b + c = 4 MiB; the scheduler frees a after op1 (3 MiB at op2, 4 MiB at op3).
  CHECK(m.peak_bytes == 4 * MiB);
  MemoryPlanningInfo info = compute_planning_info(g, g.baseline_order());
  CHECK(estimate_peak_memory(g, info, g.baseline_order()).peak == 4 * MiB);
  bool reused_a = false;
  for (const auto& e : m.events) reused_a = reused_a || (e.kind == ExecutedEvent::Kind::Reuse && g.buffers[e.donor].name == "a");
  CHECK(reused_a);
}

// A convolution backward (cuDNN) whose graph gradient output is 2 MiB, reading
// the output's gradient (1 MiB), the input (2 MiB) and the weight (64 KiB),
// none of them freeable: the peak is the gradient plus the kernel's workspace.
std::string conv_backward_graph(const std::string& workspace_fields) {
  return R"({"format":"schedgraph/1","name":"conv_bwd",
    "inputs":[{"name":"g","bytes":1048576,"freeable":false},{"name":"x","bytes":2097152,"freeable":false},
              {"name":"w","bytes":65536,"freeable":false}],"outputs":["gi"],
    "nodes":[{"name":"op0","kind":"extern","kernel":"torch.ops.aten.convolution_backward.default")" + workspace_fields + R"(,
      "outputs":[{"name":"gi","bytes":2097152,"dtype":"f32"}],
      "reads":[{"name":"g","dep":"star","bytes":1048576},{"name":"x","dep":"star","bytes":2097152},{"name":"w","dep":"star","bytes":65536}]}]})";
}

TEST_CASE("memory as executed: a kernel's observed workspace replaces the operand-copy rule", "[memory][executed]") {
  {  // no observation: the rule, copies of the three operands
    Graph g = load_graph(conv_backward_graph(""));
    ExecutedMemory m = estimate_memory_as_executed(g, g.baseline_order());
    CHECK(m.peak_bytes == 2 * MiB + (1 + 2) * MiB + 65536);
    REQUIRE(m.workspaces.size() == 1);
    CHECK(m.workspaces[0].name == "op0");
    CHECK(m.workspaces[0].source == WorkspaceSource::OperandCopies);
    CHECK(m.workspaces[0].bytes == 3 * MiB + 65536);
  }
  {  // observed on the GPU: what cuDNN's chosen engine allocated there
    Graph g = load_graph(conv_backward_graph(R"(,"workspace_bytes":524288,"workspace_source":"observed")"));
    ExecutedMemory m = estimate_memory_as_executed(g, g.baseline_order());
    CHECK(m.peak_bytes == 2 * MiB + 512 * 1024);
    REQUIRE(m.workspaces.size() == 1);
    CHECK(m.workspaces[0].source == WorkspaceSource::Observed);
    CHECK(m.workspaces[0].bytes == 512 * 1024);
    CHECK(to_string(m.workspaces[0].source) == "observed");
  }
  {  // observed none: no transient at all, and the node still says where that came from
    Graph g = load_graph(conv_backward_graph(R"(,"workspace_bytes":0,"workspace_source":"observed")"));
    ExecutedMemory m = estimate_memory_as_executed(g, g.baseline_order());
    CHECK(m.peak_bytes == 2 * MiB);
    REQUIRE(m.workspaces.size() == 1);
    CHECK(m.workspaces[0].bytes == 0);
    CHECK(m.events.size() == 1);  // gi's allocation, no workspace block
  }
}

TEST_CASE("memory as executed: observed sizes replace data-dependent ones", "[memory][executed]") {
  Graph g = load_graph(kInplace);
  ExecutedMemory m = estimate_memory_as_executed(g, g.baseline_order(), {{"buf0", 6 * MiB}});
  // buf0 is now larger than buf1's 4 MiB by more than 5 %: no in-place reuse, both live at op1.
  CHECK(m.inplace_reuses == 0);
  CHECK(m.peak_bytes == 10 * MiB);
  CHECK_THROWS(estimate_memory_as_executed(g, Order{0}));
}

// x -> op0 (pointwise) writes buf0, [1024, 1000] f32, through `index`;
// op1 and op2 (extern_kernels.mm with out=) make buf1 and buf2, 4,096,000
// bytes each, contiguous. buf0 dies at op1, one step before buf2's
// allocation, so the reuse pool offers it to buf2.
std::string padded_graph(const std::string& index, const std::string& size) {
  return R"({"format":"schedgraph/1","name":"padded",
  "inputs":[{"name":"x","bytes":4096000}],"outputs":["buf2"],
  "nodes":[
    {"name":"op0","kind":"pointwise","group":[1024000,1],
     "outputs":[{"name":"buf0","bytes":4096000,"dtype":"f32"}],
     "reads":[{"name":"x","index":"d0","size":[1024000],"bytes":4096000}],
     "writes":[{"name":"buf0","index":")" + index + R"(","size":)" + size + R"(,"bytes":4096000}]},
    {"name":"op1","kind":"extern","kernel":"extern_kernels.mm",
     "outputs":[{"name":"buf1","bytes":4096000,"dtype":"f32"}],
     "reads":[{"name":"buf0","dep":"star","bytes":4096000}],"writes":[{"name":"buf1","dep":"star","bytes":4096000}]},
    {"name":"op2","kind":"extern","kernel":"extern_kernels.mm",
     "outputs":[{"name":"buf2","bytes":4096000,"dtype":"f32"}],
     "reads":[{"name":"buf1","dep":"star","bytes":4096000}],"writes":[{"name":"buf2","dep":"star","bytes":4096000}]}
  ]})";
}

TEST_CASE("memory as executed: a padded layout allocates its storage, which keys the reuse pool", "[memory][executed]") {
  {  // contiguous: 4,096,000 bytes, and buf2 takes buf0 over from the pool
    Graph g = load_graph(padded_graph("c0", "[1024000]"));
    ExecutedMemory m = estimate_memory_as_executed(g, g.baseline_order());
    CHECK(m.pool_reuses == 1);
    CHECK(m.peak_bytes == 2 * 4096000);
  }
  {  // rows padded to 1024 (Inductor's comprehensive padding): empty_strided's
     // storage is 1 + 1023 x 1024 + 999 elements, 4,194,208 bytes (4 MiB
     // rounded); buffer_reuse_key is that storage, so buf2 is a fresh block
    Graph g = load_graph(padded_graph("1024*c0 + c1", "[1024, 1000]"));
    ExecutedMemory m = estimate_memory_as_executed(g, g.baseline_order());
    CHECK(m.pool_reuses == 0);
    CHECK(m.peak_bytes == 4 * MiB + 4096000);
    REQUIRE(m.events.size() >= 1);
    CHECK(m.events[0].bytes == 4194208);
    // The replay's side of each event: buf0's block, beside x (an input the
    // graph may free, 4,096,000 bytes) in x's 20 MiB segment, and the totals after it.
    REQUIRE(m.blocks.size() == m.events.size());
    CHECK(m.blocks[0].address == 4096000);
    CHECK(m.blocks[0].block_bytes == 4 * MiB);
    CHECK(m.blocks[0].allocated_after == 4096000 + 4 * MiB);
    CHECK(m.blocks[0].reserved_after == 20 * MiB);
    // The scheduler's own estimate keeps the file's bytes.
    CHECK(estimate_peak_memory(g, compute_planning_info(g, g.baseline_order()), g.baseline_order()).peak == 2 * 4096000);
  }
  {  // not affine in the loops (an indirect load's tmp0, a symbol): the file's bytes
    for (const char* index : {"1024*c0 + tmp0", "s0*c0 + c1"}) {
      Graph g = load_graph(padded_graph(index, "[1024, 1000]"));
      CHECK(estimate_memory_as_executed(g, g.baseline_order()).events[0].bytes == 4096000);
    }
  }
  {  // ... unless the buffer carries its strides (schedgraph/1 `stride`)
    std::string text = padded_graph("1024*c0 + tmp0", "[1024, 1000]");
    const std::string out = R"("outputs":[{"name":"buf0","bytes":4096000,"dtype":"f32"})";
    text.replace(text.find(out), out.size(), R"("outputs":[{"name":"buf0","bytes":4096000,"dtype":"f32","shape":[1024,1000],"stride":[1024,1]})");
    Graph g = load_graph(text);
    ExecutedMemory m = estimate_memory_as_executed(g, g.baseline_order());
    CHECK(m.events[0].bytes == 4194208);
    CHECK(m.pool_reuses == 0);
  }
}

// Freeable inputs from a recorded start: the measured peak counts their
// storages (schedmeasured/1 freeable_inputs_bytes), which the recorded
// blocks tell. q (1 MiB) alone in a 3 MiB block: a view of a larger storage
// (the allocator would have split off a rest over 1 MiB), freed whole, 3 MiB.
// s0, s1, s2 (1 MiB each) share a 4 MiB block: one 3 MiB storage they tile,
// whose 1 MiB rest stayed unsplit (each, [2, 262144] bf16 with stride
// 786432, reaches 2 MiB from its own start: a bound from below, which
// neither start counts three times). t (2 MiB) in a 2.5 MiB block: its own.
TEST_CASE("memory as executed: freeable inputs count their storages from a recorded start", "[memory][executed]") {
  Graph g = load_graph(R"({"format":"schedgraph/1","name":"views",
    "inputs":[{"name":"q","bytes":1048576,"freeable":true},
              {"name":"s0","bytes":1048576,"freeable":true,"dtype":"bf16","shape":[2,262144],"stride":[786432,1]},
              {"name":"s1","bytes":1048576,"freeable":true,"dtype":"bf16","shape":[2,262144],"stride":[786432,1]},
              {"name":"s2","bytes":1048576,"freeable":true,"dtype":"bf16","shape":[2,262144],"stride":[786432,1]},
              {"name":"t","bytes":2097152,"freeable":true}],
    "outputs":["buf0"],
    "nodes":[{"name":"op0","kind":"extern","kernel":"extern_kernels.mm",
      "outputs":[{"name":"buf0","bytes":1048576,"dtype":"f32"}],
      "reads":[{"name":"q","dep":"star","bytes":1048576},{"name":"s0","dep":"star","bytes":1048576},
               {"name":"s1","dep":"star","bytes":1048576},{"name":"s2","dep":"star","bytes":1048576},
               {"name":"t","dep":"star","bytes":2097152}],
      "writes":[{"name":"buf0","dep":"star","bytes":1048576}]}]})");
  const std::int64_t half = MiB / 2;
  AllocatorState start{CachedSegment{false, 20 * MiB,
                                     {CachedBlock{3 * MiB, true, {"q"}}, CachedBlock{4 * MiB, true, {"s0", "s1", "s2"}},
                                      CachedBlock{2 * MiB + half, true, {"t"}}, CachedBlock{10 * MiB + half, false, {}}}}};
  const ExecutedMemory m = estimate_memory_as_executed(g, g.baseline_order(), {}, nullptr, &start);
  CHECK(m.peak_bytes == 1 * MiB + (3 + 3 + 2) * MiB);  // buf0 over the start, plus the three storages
  CHECK(m.reserved_bytes == 22 * MiB);  // buf0, 1 MiB, is a small-pool request: a 2 MiB segment of its own
  // From the cold start the graph alone says 1 MiB per view.
  CHECK(estimate_memory_as_executed(g, g.baseline_order()).peak_bytes == 1 * MiB + 6 * MiB);
}

// The generated wrappers' `# reuse` lines (tests/data/measured/h100/
// wrapper_reuses.json: 41 measured graphs whose exports are checked in),
// against the in-place and pool reuses the model replays in the order the
// call ran. What is left are choices between equal candidates (another
// donor of the same key, the in-place candidates' order:
// docs/memory-as-executed.md). Before session 5 the model agreed on 300
// and differed on 234, before session 8 (an extern's items refused as
// in-place donors) on 363 and 26; the bounds are today's figures.
TEST_CASE("memory as executed: the wrapper's reuse lines of 41 measured graphs", "[memory][executed][measured]") {
  const auto data = nlohmann::json::parse(read_text_file(test::data_path("measured/h100/wrapper_reuses.json")));
  REQUIRE(data.at("cases").size() == 41);
  int agree = 0, differ = 0;
  for (const auto& [name, c] : data.at("cases").items()) {
    INFO(name);
    Graph g = load_graph_file(test::data_path("exported/" + name + ".post.json"));
    const MemoryPlan ran = reorder_for_peak_memory(g, g.baseline_order(), default_memory_methods());
    std::map<std::string, std::string> model;
    for (const ExecutedEvent& e : estimate_memory_as_executed(g, ran.order()).events)
      if (e.kind == ExecutedEvent::Kind::Reuse) model[g.buffers[e.buf].name] = g.buffers[e.donor].name;
    std::map<std::string, std::string> wrapper = c.at("reuses").get<std::map<std::string, std::string>>();
    for (const auto& [taker, donor] : wrapper) (model.count(taker) && model[taker] == donor ? agree : differ) += 1;
    for (const auto& [taker, donor] : model) differ += !wrapper.count(taker);
  }
  CHECK(agree >= 374);
  CHECK(differ <= 14);
}

TEST_CASE("range add / range max tree: Inductor's SegmentedTree against a plain array", "[memory][executed]") {
  std::vector<std::int64_t> plain = {5, -3, 8, 0, 2, 9, -1, 4, 7};
  RangeAddMaxTree tree(plain);
  std::uint32_t seed = 7;
  auto next = [&seed](std::uint32_t mod) { return (seed = seed * 1103515245u + 12345u) / 65536u % mod; };
  for (int round = 0; round < 200; ++round) {
    std::int32_t lo = static_cast<std::int32_t>(next(9)), hi = static_cast<std::int32_t>(next(9));
    if (round % 2) {
      const std::int64_t v = static_cast<std::int64_t>(next(11)) - 5;
      tree.add(lo, hi, v);
      for (std::int32_t i = lo; i <= hi; ++i) plain[static_cast<std::size_t>(i)] += v;
    } else {
      std::int64_t expect = 0;  // the identity, for an empty range
      for (std::int32_t i = lo; i <= hi; ++i) expect = i == lo ? plain[static_cast<std::size_t>(i)] : std::max(expect, plain[static_cast<std::size_t>(i)]);
      CHECK(tree.max(lo, hi) == expect);
    }
  }
}

// A checked-in graph exported with --measure: the plan's `predicted`
// names each convolution's workspace as observed (schedplan/1
// predicted.workspaces), and the held-out UNet's peak convolution carries
// the 8,430,247 B its cuDNN call allocated on the H100
// (docs/memory-as-executed.md, item 4).
TEST_CASE("memory as executed: predicted.workspaces says where each node's workspace came from", "[memory][executed][measured]") {
  const Graph g = load_graph_file(test::data_path("exported/unet_gn_1_bwd.post.json"));
  const MemoryPlan ran = reorder_for_peak_memory(g, g.baseline_order(), default_memory_methods());
  const auto predicted = nlohmann::json::parse(prediction_section_json(predict(g, ran.order(), builtin_profile("h100-sxm"))));
  const auto& workspaces = predicted.at("workspaces");
  REQUIRE(workspaces.size() == 19);
  std::map<std::string, std::int64_t> bytes;
  for (const auto& ws : workspaces) {
    CHECK(ws.at("source") == "observed");
    bytes[ws.at("node").get<std::string>()] = ws.at("bytes").get<std::int64_t>();
  }
  CHECK(bytes.at("op33") == 8430247);
  CHECK(bytes.at("op2") == 1536);
}

// `plan PRE.json` fuses first: an extern node keeps its name and its observed
// workspace through fusion (the exporter writes it into both graphs), so the
// prediction is the post graph's.
TEST_CASE("memory as executed: observed workspaces survive fusion of the pre-fusion graph", "[memory][executed][measured]") {
  const Graph pre = load_graph_file(test::data_path("exported/unet_gn_1_bwd.pre.json"));
  const Graph post = load_graph_file(test::data_path("exported/unet_gn_1_bwd.post.json"));
  const PlanOptions opts;
  const PlanResult from_pre = run_plan(pre, opts), from_post = run_plan(post, opts);
  REQUIRE(from_pre.fused_graph);
  CHECK(from_pre.predicted.peak_bytes == from_post.predicted.peak_bytes);
  REQUIRE(from_pre.predicted.memory.workspaces.size() == 19);
  for (const KernelWorkspace& ws : from_pre.predicted.memory.workspaces) CHECK(ws.source == WorkspaceSource::Observed);
}

namespace {

// torch.stack of 9 [4096, 64] f32 tensors, lowered by Inductor to a
// concatenation (ConcatKernel: more inputs than max_pointwise_cat_inputs)
// whose 9 producers write their slices straight into its storage
// (NonOwningLayout, `view_of`); then a sum over the 9 slices.
std::string stacked_graph(bool views) {
  std::string nodes;
  for (int i = 0; i < 9; ++i) {
    const std::string buf = "buf" + std::to_string(i);
    nodes += R"({"name":"op)" + std::to_string(i) + R"(","kind":"pointwise","group":[262144,1],
     "outputs":[{"name":")" + buf + R"(","bytes":1048576,"dtype":"f32","shape":[4096,64])" + (views ? R"(,"view_of":"buf9")" : "") + R"(}],
     "reads":[{"name":"primals_1","index":"d0","size":[262144],"bytes":1048576}],
     "writes":[{"name":")" + buf + R"(","index":"d0","size":[262144],"bytes":1048576}]},)";
  }
  std::string slices;
  for (int i = 0; i < 9; ++i) slices += std::string(i ? "," : "") + R"({"name":"buf)" + std::to_string(i) + R"(","dep":"star","bytes":1048576})";
  return R"({"format":"schedgraph/1","name":"stack9",
  "inputs":[{"name":"primals_1","bytes":1048576}],"outputs":["buf10"],
  "nodes":[)" + nodes + R"(
    {"name":"op9","kind":"nop","outputs":[{"name":"buf9","bytes":9437184,"dtype":"f32","shape":[9,4096,64]}],"reads":[)" + slices + R"(]},
    {"name":"op10","kind":"reduction","group":[262144,9],
     "outputs":[{"name":"buf10","bytes":1048576,"dtype":"f32","shape":[4096,64]}],
     "reads":[{"name":"buf9","index":"d0 + 262144*d1","size":[262144,9],"bytes":9437184}],
     "writes":[{"name":"buf10","index":"d0","size":[262144],"bytes":1048576}]}
  ]})";
}

}  // namespace

TEST_CASE("memory as executed: the slices of a concatenation are views of its one allocation", "[memory][executed]") {
  const Graph g = load_graph(stacked_graph(true));
  const ExecutedMemory m = estimate_memory_as_executed(g, g.baseline_order());
  // The concatenation's 9 MiB once (allocated at the first slice's kernel),
  // then the sum's 1 MiB: not nine 1 MiB blocks beside it.
  CHECK(m.peak_bytes == 9437184 + 1048576);
  int allocations = 0;
  for (const ExecutedEvent& e : m.events)
    if (e.kind == ExecutedEvent::Kind::Allocate) {
      ++allocations;
      if (e.buf == g.find_buffer("buf9")) CHECK(e.at == g.find_node("op0"));
    }
  CHECK(allocations == 2);
  // Without `view_of` every slice is a block of its own: 2x the peak.
  const Graph apart = load_graph(stacked_graph(false));
  CHECK(estimate_memory_as_executed(apart, apart.baseline_order()).peak_bytes == 2 * 9437184);
  // The field reads back as written, and fusion keeps it (the fused graph's
  // peak as executed is the same).
  CHECK(load_graph(write_graph_json(g)).buffers[g.find_buffer("buf3")].view_of == g.find_buffer("buf9"));
  const PlanResult plan = run_plan(load_graph(stacked_graph(true)), PlanOptions{});
  const Graph& fused = plan.planned();
  CHECK(fused.buffers[fused.find_buffer("buf3")].view_of == fused.find_buffer("buf9"));
  CHECK(estimate_memory_as_executed(fused, fused.baseline_order()).peak_bytes == 9437184 + 1048576);
}

TEST_CASE("memory as executed: a view must name a buffer with a storage of its own", "[memory][executed]") {
  std::string text = stacked_graph(true);
  text.replace(text.find(R"("view_of":"buf9")"), 16, R"("view_of":"buf1")");
  CHECK_THROWS_WITH(load_graph(text), Catch::Contains("nodes[0] \"op0\": outputs[0].view_of") && Catch::Contains("not a buffer with a storage of its own"));
  std::string missing = stacked_graph(true);
  missing.replace(missing.find(R"("view_of":"buf9")"), 16, R"("view_of":"zzz1")");
  CHECK_THROWS_WITH(load_graph(missing), Catch::Contains("outputs[0].view_of") && Catch::Contains("unknown buffer"));
}
