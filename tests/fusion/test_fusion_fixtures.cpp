// Agreement with Inductor's fusion decisions on every fixture that records
// them (tests/data/inductor and tests/data/exported `fusion_groups`), and the
// front end feeding the rest of the pipeline.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "core/fusion/fusion.h"
#include "core/io/graph_writer.h"
#include "core/io/plan_writer.h"
#include "core/plan/plan.h"
#include "tests/test_util.h"

using namespace schedlab;
using nlohmann::json;

namespace {

// Cases with Inductor's decisions and a pre-fusion graph.
std::vector<std::string> fusion_cases() {
  std::vector<std::string> out;
  for (const auto& c : test::fixture_cases())
    if (std::filesystem::exists(test::data_path(c + ".pre.json"))) out.push_back(c);
  return out;
}

// Groups Inductor formed that we do not reproduce, by case (see docs/fusion.md
// "Remaining differences"). Every other case must match group for group.
const std::map<std::string, int> kKnownMisses = {
    // Fidelity gaps of issue 14 that these graphs expose (being fixed by the
    // fusion work; remove each entry when its case reproduces):
    {"exported/pointwise_sweep_0_inf", 1},  // 14.8: mix-order reduction fusion (softmax + sum over dim 0)
};

// Cases listed above for a fidelity gap not yet closed: left out of the
// overall agreement figure (their own misses are bounded above).
bool pending_gap(const std::string& c) {
  return c == "exported/pointwise_sweep_0_inf";
}
}  // namespace

TEST_CASE("fusion reproduces Inductor's groups on every fixture", "[fusion][fixtures]") {
  auto cases = fusion_cases();
  REQUIRE(cases.size() >= 6);
  std::size_t total = 0, reproduced = 0;
  for (const auto& c : cases) {
    json expected = json::parse(read_text_file(test::data_path(c + ".expected.json")));
    if (!expected.contains("fusion_groups")) continue;
    Graph g = load_graph_file(test::data_path(c + ".pre.json"));
    FrontEndResult fe = run_front_end(g, true, FusionOptions{});
    std::set<std::vector<std::string>> ours;
    std::vector<std::vector<std::string>> ours_in_order;
    for (const auto& grp : fe.fusion.groups) {
      ours.insert(test::names(g, grp));
      ours_in_order.push_back(test::names(g, grp));
    }
    auto theirs = expected["fusion_groups"].get<std::vector<std::vector<std::string>>>();
    int hits = 0;
    for (const auto& grp : theirs) hits += ours.count(grp) ? 1 : 0;
    if (!pending_gap(c)) {
      total += theirs.size();
      reproduced += static_cast<std::size_t>(hits);
    }
    INFO(c << ": " << hits << " of " << theirs.size() << " groups");
    auto miss = kKnownMisses.find(c);
    int allowed = miss == kKnownMisses.end() ? 0 : miss->second;
    CHECK(static_cast<int>(theirs.size()) - hits <= allowed);
    if (allowed == 0) CHECK(ours_in_order == theirs);  // exact, in Inductor's final order too
  }
  INFO("reproduced " << reproduced << " of " << total);
  CHECK(reproduced * 1000 >= total * 997);  // 1933 of 1933 when written (issue 14 asks for >= 99.5 %)
}

TEST_CASE("the fused graph loads back, keeps members and operations, and plans like Inductor's", "[fusion][fixtures]") {
  for (const auto& c : fusion_cases()) {
    if (kKnownMisses.count(c)) continue;  // different groups: a different memory plan
    json expected = json::parse(read_text_file(test::data_path(c + ".expected.json")));
    if (!expected.contains("memory")) continue;
    INFO(c);
    Graph pre = load_graph_file(test::data_path(c + ".pre.json"));
    REQUIRE(needs_fusion(pre));
    FrontEndResult fe = run_front_end(pre, true, FusionOptions{});
    Graph post = load_graph(write_graph_json(build_fused_graph(pre, fe.deps, fe.fusion.groups)));  // round trip
    CHECK_FALSE(needs_fusion(post));
    CHECK(post.operations.size() == pre.nodes.size());
    // Memory planning on our post graph reproduces Inductor's orders, for every method.
    PlanOptions opts;
    PlanResult direct = run_plan(post, opts);
    PlanResult piped = run_plan(pre, opts);  // the whole pipeline from the pre-fusion graph
    REQUIRE(piped.fused_graph);
    for (const PlanResult* r : {&direct, &piped}) {
      const Graph& planned = r->planned();
      const std::string chosen = expected["memory"]["chosen"];
      CHECK(test::names(planned, r->order) == expected["memory"][chosen]["order"].get<std::vector<std::string>>());
      CHECK(r->memory.estimate.peak == expected["memory"][chosen]["peak"].get<std::int64_t>());
      for (const auto& m : r->memory.methods)
        CHECK(test::names(planned, m.order) == expected["memory"][m.method]["order"].get<std::vector<std::string>>());
    }
    json report = json::parse(plan_text_json(opts, piped));
    CHECK(report["front_end"]["output_nodes"] == post.nodes.size());
    CHECK(report["runtime"]["nodes"].size() == post.nodes.size());
  }
}

TEST_CASE("the fused graph carries each convolution as Inductor's post graph has it, written as the exporter wrote it", "[fusion][fixtures]") {
  std::size_t carried = 0;
  for (const auto& c : fusion_cases()) {
    if (kKnownMisses.count(c)) continue;
    json theirs = json::parse(read_text_file(test::data_path(c + ".post.json")));
    std::map<std::string, json> expected;
    for (const auto& n : theirs["nodes"]) expected[n["name"]] = n.value("convolution", json());
    Graph pre = load_graph_file(test::data_path(c + ".pre.json"));
    FrontEndResult fe = run_front_end(pre, true, FusionOptions{});
    json ours = json::parse(write_graph_json(build_fused_graph(pre, fe.deps, fe.fusion.groups)));
    INFO(c);
    // A node of one name is one group (its members' names joined); a case
    // whose groups differ from Inductor's is compared where they agree.
    for (const auto& n : ours["nodes"]) {
      INFO(n["name"]);
      if (!expected.count(n["name"])) continue;
      CHECK(n.value("convolution", json()) == expected[n["name"]]);
      carried += n.contains("convolution") ? 1 : 0;
    }
  }
  CHECK(carried >= 540);  // 546 convolutions of the exported CNNs when written
}
