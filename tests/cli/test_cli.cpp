// The command line as a user meets it: exit codes, one-line errors, no
// partial output files. Spawns the real binary, so native only.
#ifndef __EMSCRIPTEN__
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/io/graph_reader.h"
#include "core/memory/estimate.h"
#include "core/memory/planning_info.h"
#include "tests/test_util.h"

namespace {

using schedlab::test::run_cli;
using Run = schedlab::test::CliRun;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("schedlab_cli_test_" + name)).string();
}

}  // namespace

TEST_CASE("plan writes schedplan/1 and prints the report", "[cli]") {
  std::string out = temp_path("mlp.plan.json");
  std::filesystem::remove(out);
  Run r = run_cli("plan " + schedlab::test::data_path("inductor/mlp_2.post.json") + " -o " + out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("<- chosen"));
  CHECK_THAT(r.out, Catch::Contains("live at the peak, largest first"));
  std::ifstream in(out);
  auto plan = nlohmann::json::parse(in);
  CHECK(plan["format"] == "schedplan/1");
  CHECK(plan["memory"]["chosen"] == "lpmf");
  CHECK(plan["memory"]["peak"] == 37842984);
  CHECK(plan["order"].size() == 16);
  std::filesystem::remove(out);
}

TEST_CASE("after comm passes, plan reports the final order's peak, with the memory method's beside it", "[cli][final]") {
  // The comm passes raise this graph's peak within their budget: the final
  // order peaks higher than the memory method's order did.
  const std::string graph = schedlab::test::data_path("exported/fsdp_step_0_inf.post.json");
  std::string out = temp_path("fsdp_final.plan.json");
  std::filesystem::remove(out);
  Run r = run_cli("plan " + graph +
                  " --comm-passes reorder_communication_preserving_peak_memory,sink_waits_iterative,overlap_schedule -o " + out);
  REQUIRE(r.code == 0);
  std::ifstream in(out);
  auto plan = nlohmann::json::parse(in);
  const auto& fin = plan["final"];
  const std::int64_t final_peak = fin["peak_bytes"];
  const std::int32_t final_step = fin["peak_step"];
  const std::int64_t method_peak = plan["memory"]["peak"];
  const std::int32_t method_step = plan["memory"]["peak_step"];
  CHECK(final_peak == 15728640);   // 15.00 MiB
  CHECK(method_peak == 11796480);  // 11.25 MiB
  CHECK(fin["peak_node"] == plan["order"][final_step]);

  // Recomputed independently from the graph and the plan's final order.
  schedlab::Graph g = schedlab::load_graph_file(graph);
  schedlab::Order order;
  for (const auto& name : plan["order"]) order.push_back(g.find_node(name.get<std::string>()));
  auto est = schedlab::estimate_peak_memory(g, schedlab::compute_planning_info(g, g.baseline_order()), order);
  CHECK(est.peak == final_peak);
  CHECK(est.peak_step == final_step);

  // The text report: the final order's peak and node, then the memory
  // method's peak with its own step and the node its own order runs there.
  const std::string chosen = plan["memory"]["chosen"];
  const auto& method_order = plan["memory"]["methods"][chosen]["order"];
  CHECK_THAT(r.out, Catch::Contains("peak 15.00 MiB at step " + std::to_string(final_step) + " of " + std::to_string(order.size()) +
                                    " (while running " + fin["peak_node"].get<std::string>() + ")"));
  CHECK_THAT(r.out, Catch::Contains("memory method's (" + chosen + ") peak 11.25 MiB at step " + std::to_string(method_step) + " of " +
                                    std::to_string(order.size()) + " (while running " +
                                    method_order[method_step].get<std::string>() + ")"));
  std::filesystem::remove(out);
}

TEST_CASE("without comm passes the final peak is the memory method's", "[cli][final]") {
  std::string out = temp_path("mlp_final.plan.json");
  REQUIRE(run_cli("plan " + schedlab::test::data_path("inductor/mlp_2.post.json") + " -o " + out).code == 0);
  std::ifstream in(out);
  auto plan = nlohmann::json::parse(in);
  CHECK(plan["final"]["peak_bytes"] == plan["memory"]["peak"]);
  CHECK(plan["final"]["peak_step"] == plan["memory"]["peak_step"]);
  CHECK(plan["final"]["peak_node"] == plan["order"][plan["memory"]["peak_step"].get<int>()]);
  std::filesystem::remove(out);
}

TEST_CASE("a refused graph exits 1 with one line naming the place, leaving no file", "[cli][errors]") {
  std::string bad = temp_path("bad.json");
  std::ofstream(bad) << R"({"format": "schedgraph/1", "inputs": [], "outputs": [], "nodes": [{"name": "op7", "kind": "pointwise", "reads": [{"name": "bufX"}]}]})";
  std::string out = temp_path("bad.plan.json");
  std::filesystem::remove(out);
  Run r = run_cli("plan " + bad + " -o " + out);
  CHECK(r.code == 1);
  CHECK(r.out == "schedlab plan: " + bad + ": nodes[0] \"op7\": reads[0]: unknown buffer \"bufX\"\n");
  CHECK_FALSE(std::filesystem::exists(out));
  std::filesystem::remove(bad);
}

TEST_CASE("a memory method with an invalid order exits 1 naming it, unless asked to skip it", "[cli][errors]") {
  // m mutates A without reading it; DFS then runs r before a (see test_memory_semantics).
  std::string graph = temp_path("invalid_order.json");
  std::ofstream(graph) << R"({"format": "schedgraph/1", "inputs": [], "outputs": [], "nodes": [
    {"name": "a", "kind": "pointwise", "outputs": [{"name": "A", "bytes": 100}]},
    {"name": "m", "kind": "pointwise", "outputs": [{"name": "M", "bytes": 1, "mutation_of": "A"}]},
    {"name": "r", "kind": "pointwise", "outputs": [{"name": "R", "bytes": 1}], "reads": [{"name": "M", "dep": "fake_weak"}]}]})";
  std::string out = temp_path("invalid_order.plan.json");
  std::filesystem::remove(out);
  Run r = run_cli("plan " + graph + " --no-fuse -o " + out);
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::StartsWith("schedlab plan: memory planning: method \"dfs\" produced an invalid order: node \"r\" runs before \"a\""));
  CHECK_FALSE(std::filesystem::exists(out));
  Run skipped = run_cli("plan " + graph + " --no-fuse --skip-invalid-memory-methods --format text");
  CHECK(skipped.code == 0);
  CHECK_THAT(skipped.out, Catch::Contains("dfs       failed: node \"r\" runs before \"a\", which it depends on"));
  std::filesystem::remove(graph);
}

TEST_CASE("usage errors exit 2", "[cli][errors]") {
  CHECK(run_cli("").code == 2);
  CHECK(run_cli("frobnicate").code == 2);
  Run r = run_cli("plan " + schedlab::test::data_path("inductor/mlp_2.post.json") + " --memory-methods lpmf,,dfs");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("empty item"));
  CHECK(run_cli("plan " + schedlab::test::data_path("inductor/mlp_2.post.json") + " --memory-methods best").code == 2);
  CHECK(run_cli("plan " + schedlab::test::data_path("inductor/mlp_2.post.json") + " --format yaml").code == 2);
  CHECK(run_cli("plan").code == 2);
  CHECK(run_cli("plan /nonexistent.json").code == 1);
}

TEST_CASE("gen writes graphs that load and plan", "[cli][gen]") {
  std::string out = temp_path("layered.json");
  Run g = run_cli("gen layered --nodes 500 --width 16 --seed 3 -o " + out);
  REQUIRE(g.code == 0);
  CHECK(run_cli("validate " + out).code == 0);
  std::string rep = temp_path("rep.json");
  REQUIRE(run_cli("gen replicate " + schedlab::test::data_path("inductor/ddp_1.post.json") + " --copies 3 --chained -o " + rep).code == 0);
  Run v = run_cli("validate " + rep);
  CHECK(v.code == 0);
  CHECK_THAT(v.out, Catch::Contains("120 nodes"));
  CHECK(run_cli("gen layered --nodes -5 -o " + out).code == 2);
  std::filesystem::remove(out);
  std::filesystem::remove(rep);
}
#endif

#ifndef __EMSCRIPTEN__
// The issue's case: ddp_step_0_inf's overlap_schedule row under --compare
// read 642,060.9 us (the passes' runtime_us, no host) while
// --comm-passes overlap_schedule read 1,205.2 us. The rows are the plan's now.
TEST_CASE("simulate --compare rows read as simulate --comm-passes with those passes", "[cli][compare]") {
  const std::string graph = schedlab::test::data_path("exported/ddp_step_0_inf.post.json");
  const auto row = [](const std::string& out, const std::string& label) {
    const std::size_t at = out.find("\n" + label + " ");
    REQUIRE(at != std::string::npos);
    std::string line = out.substr(at + 1, out.find('\n', at + 1) - at - 1);
    return line.substr(label.size());
  };
  const Run compared = run_cli("simulate " + graph + " --compare");
  REQUIRE(compared.code == 0);
  const Run alone = run_cli("simulate " + graph + " --comm-passes overlap_schedule");
  REQUIRE(alone.code == 0);
  std::string after = row(alone.out, "after 1 comm passes");
  after = after.substr(after.find_first_not_of(' '));
  std::string os = row(compared.out, "overlap_schedule");
  os = os.substr(os.find_first_not_of(' '));
  CHECK(os == after);
  CHECK_THAT(compared.out, !Catch::Contains("642060.9"));
}
#endif
