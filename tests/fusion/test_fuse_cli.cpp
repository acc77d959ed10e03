// `schedlab fuse` end to end: the written graph loads back, explain answers,
// bad input is refused with the right exit code. Spawns the real binary, so
// native only.
#ifndef __EMSCRIPTEN__
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/io/graph_reader.h"
#include "tests/test_util.h"

using namespace schedlab;

using Run = test::CliRun;
using test::run_cli;

TEST_CASE("fuse writes a post-fusion graph that validates and plans", "[fusion][cli]") {
  auto dir = std::filesystem::temp_directory_path() / ("schedlab_fuse_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string pre = test::data_path("inductor/mlp_2.pre.json"), post = (dir / "mlp_2.post.json").string();
  Run r = run_cli("fuse " + pre + " -o " + post);
  CHECK(r.code == 0);
  CHECK(r.out.find("19 nodes -> 16 (2 fused groups)") != std::string::npos);
  Graph g = load_graph_file(post);
  CHECK(g.find_node("op9_op10_op15") != kNone);
  CHECK(g.nodes[g.find_node("op11_op13")].members == std::vector<std::string>{"op11", "op13"});
  CHECK(run_cli("plan " + post).code == 0);
  // A fused graph is not fused again.
  Run again = run_cli("fuse " + post);
  CHECK(again.code == 2);
  CHECK(again.out.find("already fused") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("fuse --explain says whether and why not", "[fusion][cli]") {
  std::string pre = test::data_path("inductor/mlp_2.pre.json");
  Run yes = run_cli("fuse " + pre + " --explain op9 op15");
  CHECK(yes.code == 0);
  CHECK(yes.out.find("fuse: both in op9_op10_op15") != std::string::npos);
  Run no = run_cli("fuse " + pre + " --explain op0 op4");
  CHECK(no.code == 0);
  CHECK(no.out.find("node1 is extern or nop") != std::string::npos);
  Run bad = run_cli("fuse " + pre + " --explain op0 nope");
  CHECK(bad.code == 2);
  CHECK(bad.out.find("no node named \"nope\"") != std::string::npos);
  CHECK(run_cli("fuse " + pre + " --explain op0").code == 2);
  CHECK(run_cli("fuse /nonexistent.json").code == 1);
}
#endif
