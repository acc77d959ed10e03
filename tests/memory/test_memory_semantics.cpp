// Memory semantics on hand-made graphs, each rule on its own (see
// docs/schedgraph-1.md "Memory semantics").
#include <catch2/catch.hpp>

#include "core/memory/methods.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {

struct Planned {
  Graph g;
  MemoryPlanningInfo info;
  PeakMemoryEstimate est;
};

Planned plan_baseline(const std::string& nodes_json, const std::string& inputs = "[]", const std::string& outputs = "[]") {
  Planned p{load_graph(R"({"format": "schedgraph/1", "inputs": )" + inputs + R"(, "outputs": )" + outputs + R"(, "nodes": )" + nodes_json + "}"), {}, {}};
  p.info = compute_planning_info(p.g, p.g.baseline_order());
  p.est = estimate_peak_memory(p.g, p.info, p.g.baseline_order());
  return p;
}

using Curve = std::vector<std::int64_t>;

}  // namespace

TEST_CASE("a buffer is freed after its last reader; one with no reader right after its step", "[memory]") {
  auto p = plan_baseline(R"([
    {"name": "a", "kind": "pointwise", "outputs": [{"name": "A", "bytes": 100}]},
    {"name": "b", "kind": "pointwise", "outputs": [{"name": "B", "bytes": 10}]},
    {"name": "c", "kind": "pointwise", "outputs": [{"name": "C", "bytes": 1}], "reads": [{"name": "A"}]}])");
  // step 0: A; step 1: A+B (B has no reader: freed after step 1); step 2: A+C, then both go.
  CHECK(p.est.curve == Curve{100, 110, 101, 0});
  CHECK(p.est.peak == 110);
  CHECK(p.est.peak_step == 1);
}

TEST_CASE("graph outputs stay to the end; non-freeable inputs are not counted", "[memory]") {
  auto p = plan_baseline(R"([
    {"name": "a", "kind": "pointwise", "outputs": [{"name": "A", "bytes": 100}], "reads": [{"name": "primals_1", "bytes": 999}]},
    {"name": "b", "kind": "pointwise", "outputs": [{"name": "B", "bytes": 10}], "reads": [{"name": "A"}]}])",
                         R"([{"name": "primals_1", "bytes": 999}])", R"(["A"])");
  // The curve's last entry is after the final step, when everything is released.
  CHECK(p.est.curve == Curve{100, 110, 0});
}

TEST_CASE("a freeable input is live from the start, sized by its last read; as an output it stays", "[memory]") {
  const std::string nodes = R"([
    {"name": "a", "kind": "pointwise", "outputs": [{"name": "A", "bytes": 1}], "reads": [{"name": "x", "bytes": 40}]},
    {"name": "b", "kind": "pointwise", "outputs": [{"name": "B", "bytes": 2}], "reads": [{"name": "x", "bytes": 50}]},
    {"name": "c", "kind": "pointwise", "outputs": [{"name": "C", "bytes": 4}]}])";
  auto freed = plan_baseline(nodes, R"([{"name": "x", "bytes": 64}])");
  // x counts 50 bytes (its last read's dep size) until after b.
  CHECK(freed.est.curve == Curve{51, 52, 4, 0});
  auto kept = plan_baseline(nodes, R"([{"name": "x", "bytes": 64}])", R"(["x"])");
  CHECK(kept.est.curve == Curve{51, 52, 54, 0});
}

TEST_CASE("multi_output: the container allocates its items, each item frees itself", "[memory]") {
  auto p = plan_baseline(R"([
    {"name": "t", "kind": "extern", "outputs": [{"name": "T", "bytes": 0, "layout": "multi_output"}]},
    {"name": "i0", "kind": "extern", "outputs": [{"name": "I0", "bytes": 30, "layout": "multi_output_item"}], "reads": [{"name": "T", "dep": "star"}]},
    {"name": "i1", "kind": "extern", "outputs": [{"name": "I1", "bytes": 20, "layout": "multi_output_item"}], "reads": [{"name": "T", "dep": "star"}]},
    {"name": "u", "kind": "pointwise", "outputs": [{"name": "U", "bytes": 1}], "reads": [{"name": "I0"}]},
    {"name": "v", "kind": "pointwise", "outputs": [{"name": "V", "bytes": 1}], "reads": [{"name": "I1"}]}])");
  BufId t = p.g.find_buffer("T");
  CHECK(p.info.size_alloc[t] == 50);
  CHECK(p.info.size_free[t] == 0);
  CHECK(p.info.size_alloc[p.g.find_buffer("I0")] == 0);
  CHECK(p.info.size_free[p.g.find_buffer("I0")] == 30);
  // 50 at t; I0 (30) freed after u; I1 (20) after v.
  CHECK(p.est.curve == Curve{50, 50, 50, 51, 21, 0});
  // What is alive is reported against the container, summing to the curve.
  auto live = live_buffers_at(p.g, p.info, p.g.baseline_order(), 4);
  REQUIRE(live.size() == 2);
  CHECK(p.g.buffers[live[0].buf].name == "T");
  CHECK(live[0].bytes == 20);
}

TEST_CASE("a mutation is free, and its readers keep the mutated buffer alive", "[memory]") {
  auto p = plan_baseline(R"([
    {"name": "a", "kind": "pointwise", "outputs": [{"name": "A", "bytes": 100}]},
    {"name": "m", "kind": "pointwise", "outputs": [{"name": "M", "bytes": 100, "mutation_of": "A"}], "reads": [{"name": "A"}]},
    {"name": "m2", "kind": "pointwise", "outputs": [{"name": "M2", "bytes": 100, "mutation_of": "M"}], "reads": [{"name": "M"}]},
    {"name": "x", "kind": "pointwise", "outputs": [{"name": "X", "bytes": 1}]},
    {"name": "r", "kind": "pointwise", "outputs": [{"name": "R", "bytes": 1}], "reads": [{"name": "M2"}]}])");
  CHECK(p.info.size_alloc[p.g.find_buffer("M")] == 0);
  // A lives until r, which reads the end of its mutation chain.
  CHECK(p.est.curve == Curve{100, 100, 100, 101, 101, 0});
  NodeId r = p.g.find_node("r"), a = p.g.find_node("a");
  auto preds = p.info.pred_nodes.row(r);
  CHECK(std::find(preds.begin(), preds.end(), a) != preds.end());
}

TEST_CASE("a fake weak dependency orders nodes but keeps nothing alive", "[memory]") {
  const std::string nodes = R"([
    {"name": "a", "kind": "pointwise", "outputs": [{"name": "A", "bytes": 100}]},
    {"name": "b", "kind": "pointwise", "outputs": [{"name": "B", "bytes": 1}]},
    {"name": "c", "kind": "pointwise", "outputs": [{"name": "C", "bytes": 1}], "reads": [{"name": "A", "dep": "KIND"}]}])";
  auto weak = plan_baseline(std::string(nodes).replace(nodes.find("KIND"), 4, "weak"));
  auto fake = plan_baseline(std::string(nodes).replace(nodes.find("KIND"), 4, "fake_weak"));
  CHECK(weak.est.curve == Curve{100, 101, 101, 0});
  CHECK(fake.est.curve == Curve{100, 1, 1, 0});  // A has no reader that keeps it
  NodeId c = fake.g.find_node("c");
  CHECK(fake.info.pred_nodes.degree(c) == 1);
  CHECK(fake.info.pred_buffers.degree(c) == 0);
  // Every method keeps c after a.
  for (const auto& m : memory_methods()) {
    Order o = m.run(fake.g, fake.info, fake.g.baseline_order());
    CHECK(is_valid_order(fake.g, fake.info, o));
  }
}

TEST_CASE("an empty graph and a single node plan cleanly", "[memory]") {
  Graph empty = load_graph(R"({"format": "schedgraph/1", "inputs": [], "outputs": [], "nodes": []})");
  MemoryPlan p0 = reorder_for_peak_memory(empty, empty.baseline_order(), default_memory_methods());
  CHECK(p0.estimate.peak == 0);
  CHECK(p0.estimate.curve == Curve{0});
  CHECK(p0.order().empty());
  CHECK(p0.peak_live.empty());

  Graph one = load_graph(R"({"format": "schedgraph/1", "inputs": [], "outputs": ["A"], "nodes": [
      {"name": "a", "kind": "pointwise", "outputs": [{"name": "A", "bytes": 7}]}]})");
  MemoryPlan p1 = reorder_for_peak_memory(one, one.baseline_order(), default_memory_methods());
  CHECK(p1.estimate.curve == Curve{7, 0});
  CHECK(p1.methods[p1.chosen].method == "baseline");  // ties go to the first method
  REQUIRE(p1.peak_live.size() == 1);
  CHECK(p1.peak_live[0].bytes == 7);
}

TEST_CASE("unknown or empty method lists are usage errors", "[memory][errors]") {
  Graph one = load_graph(R"({"format": "schedgraph/1", "inputs": [], "outputs": [], "nodes": [{"name": "a", "kind": "nop"}]})");
  CHECK_THROWS_WITH(reorder_for_peak_memory(one, one.baseline_order(), {"lpmf", "fastest"}),
                    Catch::Contains("unknown method \"fastest\" (known: baseline, lpmf, bfs, dfs)"));
  CHECK_THROWS_WITH(reorder_for_peak_memory(one, one.baseline_order(), {}), Catch::Contains("empty"));
}

TEST_CASE("alloc/free estimate agrees with the step curve on every fixture", "[memory][fixtures]") {
  for (const char* name : {"mlp_2", "gpt2_2", "convnet_2", "ckpt_1", "fsdp_1", "ddp_1"}) {
    INFO(name);
    Graph g = load_graph_file(test::data_path(std::string("inductor/") + name + ".post.json"));
    Order order = g.baseline_order();
    auto info = compute_planning_info(g, order);
    auto est = estimate_peak_memory(g, info, order);
    auto af = estimate_peak_memory_allocfree(g, info, order);
    CHECK(af.peak == est.peak);
    for (std::size_t t = 0; t < order.size(); ++t) {
      // The curve's step t is t's post-alloc memory.
      CHECK(af.post_alloc[t] == est.curve[t]);
      std::int64_t live_sum = 0;
      for (const auto& lb : live_buffers_at(g, info, order, static_cast<std::int32_t>(t))) live_sum += lb.bytes;
      CHECK(live_sum == est.curve[t]);
    }
    for (BufId b : g.outputs) CHECK(af.last_use[b] == kNone);
  }
}

TEST_CASE("an item whose node reads two multi_output containers is allocated by both (2.11)", "[memory]") {
  auto p = plan_baseline(R"([
    {"name": "t1", "kind": "extern", "outputs": [{"name": "T1", "bytes": 0, "layout": "multi_output"}]},
    {"name": "t2", "kind": "extern", "outputs": [{"name": "T2", "bytes": 0, "layout": "multi_output"}]},
    {"name": "i", "kind": "extern", "outputs": [{"name": "I", "bytes": 8, "layout": "multi_output_item"}],
     "reads": [{"name": "T1", "dep": "star"}, {"name": "T2", "dep": "star"}, {"name": "T2", "dep": "weak"}]}])");
  // compute_size_for_scheduler_buffer adds the item to every container its
  // node reads (a node reading one container twice counts once).
  CHECK(p.info.size_alloc[p.g.find_buffer("T1")] == 8);
  CHECK(p.info.size_alloc[p.g.find_buffer("T2")] == 8);
  CHECK(p.est.peak == 16);
}

TEST_CASE("fake weak readers of a freeable input neither keep it alive nor count as its readers (2.11)", "[memory]") {
  auto p = plan_baseline(R"([
    {"name": "a", "kind": "pointwise", "outputs": [{"name": "A", "bytes": 1}], "reads": [{"name": "x", "bytes": 40}]},
    {"name": "b", "kind": "pointwise", "outputs": [{"name": "B", "bytes": 2}]},
    {"name": "c", "kind": "pointwise", "outputs": [{"name": "C", "bytes": 4}], "reads": [{"name": "x", "dep": "fake_weak", "bytes": 50}]}])",
                         R"([{"name": "x", "bytes": 64}])");
  BufId x = p.g.find_buffer("x");
  // Still planned, sized by its last read (the fake one), freed after a.
  CHECK(p.info.size_free[x] == 50);
  CHECK(p.est.curve == Curve{51, 2, 4, 0});
  NodeId c = p.g.find_node("c");
  CHECK(p.info.pred_buffers.degree(c) == 0);
  REQUIRE(p.info.buffer_succ_nodes.degree(x) == 1);
  CHECK(p.info.buffer_succ_nodes.row(x)[0] == p.g.find_node("a"));
}

TEST_CASE("a mutation chain's readers use the chain's first buffer, not every version (2.11 mutation_real_name)", "[memory]") {
  auto p = plan_baseline(R"([
    {"name": "a", "kind": "pointwise", "outputs": [{"name": "A", "bytes": 100}]},
    {"name": "m", "kind": "pointwise", "outputs": [{"name": "M", "bytes": 100, "mutation_of": "A"}], "reads": [{"name": "A"}]},
    {"name": "m2", "kind": "pointwise", "outputs": [{"name": "M2", "bytes": 100, "mutation_of": "M"}], "reads": [{"name": "M"}]},
    {"name": "r", "kind": "pointwise", "outputs": [{"name": "R", "bytes": 1}], "reads": [{"name": "M2"}]}])");
  NodeId r = p.g.find_node("r");
  std::vector<std::string> preds;
  for (NodeId v : p.info.pred_nodes.row(r)) preds.push_back(p.g.nodes[v].name);
  CHECK(preds == std::vector<std::string>{"a", "m2"});
}

TEST_CASE("a method whose order is invalid raises, naming the method and the node; skipping is an option", "[memory][errors]") {
  // m mutates A without reading it. DFS follows only direct reads and weighs
  // r by what it keeps alive (nothing, its read is fake weak), so it runs r
  // before a, which r's read of A's chain through M orders first.
  Graph g = load_graph(R"({"format": "schedgraph/1", "inputs": [], "outputs": [], "nodes": [
    {"name": "a", "kind": "pointwise", "outputs": [{"name": "A", "bytes": 100}]},
    {"name": "m", "kind": "pointwise", "outputs": [{"name": "M", "bytes": 1, "mutation_of": "A"}]},
    {"name": "r", "kind": "pointwise", "outputs": [{"name": "R", "bytes": 1}], "reads": [{"name": "M", "dep": "fake_weak"}]}]})");
  MemoryPlanningInfo info = compute_planning_info(g, g.baseline_order());
  CHECK(order_violation(g, info, topological_sort_dfs(g, info, g.baseline_order())) ==
        "node \"r\" runs before \"a\", which it depends on");
  CHECK_THROWS_WITH(reorder_for_peak_memory(g, g.baseline_order(), {"baseline", "dfs"}),
                    Catch::StartsWith("memory planning: method \"dfs\" produced an invalid order: node \"r\" runs before \"a\""));
  MemoryPlan skipped = reorder_for_peak_memory(g, g.baseline_order(), {"baseline", "dfs"}, InvalidOrderPolicy::Skip);
  CHECK(skipped.methods[skipped.chosen].method == "baseline");
  CHECK(skipped.methods[1].error == "node \"r\" runs before \"a\", which it depends on");
  CHECK(order_violation(g, info, {0, 1}) == "it ordered 2 of 3 nodes (node \"r\" is missing)");
  CHECK(order_violation(g, info, {0, 0, 1}) == "node \"a\" is scheduled twice");
}
