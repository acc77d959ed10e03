// The command line as a user meets it: exit codes, one-line errors, no
// partial output files. Spawns the real binary, so native only.
#ifndef __EMSCRIPTEN__
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

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
