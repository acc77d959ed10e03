// `schedlab simulate` with several ranks as a user meets it: the report, its
// JSON, the per-rank trace, and one-line errors (exit 2) for ranks that do
// not belong together and for bad --rank-skew. Spawns the real binary, so
// native only.
#ifndef __EMSCRIPTEN__
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "tests/test_util.h"

namespace {

using schedlab::test::run_cli;
using Run = schedlab::test::CliRun;

std::string ranks_temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("schedlab_cli_ranks_test_" + name)).string();
}

std::string rank_graph(int r) { return schedlab::test::data_path("dist4/ranks/ddp_default/ddp_0_inf.rank" + std::to_string(r) + ".post.json"); }

std::string all_ranks() { return rank_graph(0) + " " + rank_graph(1) + " " + rank_graph(2) + " " + rank_graph(3); }

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST_CASE("simulate several ranks: report, JSON and one trace process per rank", "[cli][ranks]") {
  Run text = run_cli("simulate " + all_ranks() + " --memory-methods baseline --hardware h100-sxm --rank-skew 2:1.03");
  REQUIRE(text.code == 0);
  CHECK_THAT(text.out, Catch::Contains("4 ranks, 8 collectives each"));
  CHECK_THAT(text.out, Catch::Contains("slowest rank: 2 (" + rank_graph(2) + "), step 6895.1 us"));
  CHECK_THAT(text.out, Catch::Contains("largest arrival skews"));

  const std::string trace = ranks_temp_path("trace.json");
  std::filesystem::remove(trace);
  Run json = run_cli("simulate " + rank_graph(0) + " --ranks 3 --memory-methods baseline --hardware h100-sxm --format json --rank-skew 1:1.1 --trace " +
                     trace);
  REQUIRE(json.code == 0);
  const auto report = nlohmann::json::parse(json.out);
  REQUIRE(report["ranks"].size() == 3);
  CHECK(report["slowest_rank"] == 1);
  CHECK(report["ranks"][1]["compute_factor"] == 1.1);
  CHECK(report["step_time_us"] == report["ranks"][1]["step_time_us"]);
  CHECK(report["collectives"].size() == 8);
  CHECK(report["collectives"][0]["collective"] == "op1");
  CHECK(report["collectives"][0]["latest_rank"] == 1);
  CHECK(report["collectives"][0]["skew_us"].get<double>() > 0);
  std::ifstream in(trace);
  const auto events = nlohmann::json::parse(in);
  std::set<int> pids;
  for (const auto& e : events["traceEvents"]) pids.insert(e["pid"].get<int>());
  CHECK(pids == std::set<int>{1, 2, 3});

  // One graph: the one-rank step, as the table's first row.
  Run one = run_cli("simulate " + rank_graph(0) + " --memory-methods baseline --hardware h100-sxm --format json");
  REQUIRE(one.code == 0);
  CHECK(nlohmann::json::parse(one.out)["ranks"].size() == 1);
}

TEST_CASE("plan --rank-graphs adds simulation.ranks and leaves the rest of the plan as it was", "[cli][ranks]") {
  const std::string alone = ranks_temp_path("alone.plan.json"), ranked = ranks_temp_path("ranked.plan.json");
  Run a = run_cli("plan " + rank_graph(0) + " --memory-methods baseline --hardware h100-sxm -o " + alone);
  REQUIRE(a.code == 0);
  Run b = run_cli("plan " + rank_graph(0) + " --rank-graphs " + rank_graph(1) + " " + rank_graph(2) + " " + rank_graph(3) +
                  " --memory-methods baseline --hardware h100-sxm -o " + ranked);
  REQUIRE(b.code == 0);
  CHECK_THAT(b.out, Catch::Contains("several ranks: 4, slowest rank 0, step 6716.6 us"));
  std::ifstream ia(alone), ib(ranked);
  auto pa = nlohmann::json::parse(ia), pb = nlohmann::json::parse(ib);
  CHECK_FALSE(pa["simulation"].contains("ranks"));
  const auto ranks = pb["simulation"]["ranks"];
  REQUIRE(ranks["ranks"].size() == 4);
  CHECK(ranks["ranks"][3]["graph"] == "ddp_0_inf.rank3.post");
  CHECK(ranks["ranks"][3]["label"] == rank_graph(3));
  CHECK(ranks["step_time_us"] == pa["simulation"]["step_time_us"]);  // ranks alike: the one-rank step
  pb["simulation"].erase("ranks");
  CHECK(pa == pb);
}

TEST_CASE("simulate several ranks: ranks that do not match, and bad flags, get one line and exit 2", "[cli][ranks]") {
  // Rank 1's third all-reduce carries one byte more.
  std::ifstream in(rank_graph(1));
  auto g = nlohmann::json::parse(in);
  for (auto& n : g["nodes"])
    if (n["name"] == "op9") n["collective"]["bytes"] = n["collective"]["bytes"].get<std::int64_t>() + 1;
  const std::string odd = ranks_temp_path("odd.rank1.json");
  std::ofstream(odd) << g.dump();
  Run r = run_cli("simulate " + rank_graph(0) + " " + odd + " --memory-methods baseline");
  CHECK(r.code == 2);
  CHECK(lines(r.out) == 1);
  CHECK_THAT(r.out, Catch::Contains("rank 1 (" + odd + "): collective #3 \"op9\""));
  CHECK_THAT(r.out, Catch::Contains("does not match rank 0's"));

  for (const char* bad : {"--rank-skew 4:1.1", "--rank-skew 1:0", "--rank-skew x", "--rank-skew 1:1.1x", "--ranks 3", "--compare", "--overlap-view"}) {
    CAPTURE(bad);
    Run b = run_cli("simulate " + rank_graph(0) + " " + rank_graph(1) + " " + bad);
    CHECK(b.code == 2);
    CHECK(lines(b.out) == 1);
  }
}
#endif
