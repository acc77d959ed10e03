// Dependency analysis on hand-built graphs: mutation ordering, dead code,
// Inductor's DFS topological sort, ancestry.
#include <catch2/catch.hpp>

#include "core/deps/dependencies.h"
#include "core/io/graph_reader.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {

// a: x -> b1; r: reads b1; m: mutates b1 in place (b1m); after: reads b1 (the
// old name: must see the mutation); dead: nobody reads it; c: a collective
// nobody reads (side effects keep it); w waits on it.
const char* kDepsGraph = R"({"format":"schedgraph/1","world_size":2,
  "inputs":[{"name":"x","bytes":16}],
  "outputs":["after_out"],
  "nodes":[
    {"name":"a","kind":"pointwise","outputs":[{"name":"b1","bytes":16}],"reads":[{"name":"x","bytes":16}],"writes":[{"name":"b1","bytes":16}]},
    {"name":"r","kind":"pointwise","outputs":[{"name":"r_out","bytes":16}],"reads":[{"name":"b1","bytes":16}]},
    {"name":"m","kind":"pointwise","outputs":[{"name":"b1m","bytes":0,"layout":"none","mutation_of":"b1"}],"reads":[{"name":"r_out","bytes":16}]},
    {"name":"after","kind":"pointwise","outputs":[{"name":"after_out","bytes":16}],"reads":[{"name":"b1","bytes":16}]},
    {"name":"dead","kind":"pointwise","outputs":[{"name":"dead_out","bytes":16}],"reads":[{"name":"x","bytes":16}]},
    {"name":"c","kind":"collective","collective":{"op":"all_reduce","bytes":16},"outputs":[{"name":"c_out","bytes":16}],"reads":[{"name":"x","dep":"star","bytes":16}]},
    {"name":"w","kind":"wait","outputs":[{"name":"w_out","bytes":0,"layout":"none"}],"reads":[{"name":"c_out","dep":"star"}]}
  ]})";

std::vector<std::string> read_names(const Graph& g, const DependencyInfo& d, const char* node) {
  std::vector<std::string> out;
  for (const Dep& dep : d.reads[g.find_node(node)]) out.push_back(g.buffers[dep.buf].name + ":" + std::string(to_string(dep.kind)));
  return out;
}

}  // namespace

TEST_CASE("mutations: after the previous writer and earlier readers; later readers see the new version", "[deps]") {
  Graph g = load_graph(kDepsGraph);
  DependencyInfo d = analyze_dependencies(g);
  // m gets a star dep on b1 (previous version) and an ordering-only dep on r's output (r read b1).
  CHECK(read_names(g, d, "m") == std::vector<std::string>{"r_out:memory", "b1:star"});
  // `after` reads b1 by its old name: renamed to the mutation's buffer.
  CHECK(read_names(g, d, "after") == std::vector<std::string>{"b1m:memory"});
  CHECK(d.latest_version[g.find_buffer("b1")] == g.find_buffer("b1m"));
  CHECK(d.storage_root[g.find_buffer("b1m")] == g.find_buffer("b1"));
  CHECK(producer_nodes(g, d, g.find_node("after")) == std::vector<NodeId>{g.find_node("m")});
}

TEST_CASE("dead-node elimination keeps side effects and what outputs need", "[deps]") {
  Graph g = load_graph(kDepsGraph);
  DependencyInfo d = analyze_dependencies(g);
  DeadCodeResult dce = eliminate_dead_nodes(g, d, g.baseline_order());
  CHECK(test::names(g, dce.removed) == std::vector<std::string>{"dead"});
  CHECK(test::names(g, dce.kept) == std::vector<std::string>{"a", "r", "m", "after", "c", "w"});
}

TEST_CASE("a weak user alone does not keep a node alive", "[deps]") {
  Graph g = load_graph(R"({"format":"schedgraph/1","inputs":[],"outputs":["o"],"nodes":[
    {"name":"p","kind":"pointwise","outputs":[{"name":"pb","bytes":4}]},
    {"name":"q","kind":"pointwise","outputs":[{"name":"o","bytes":4}],"reads":[{"name":"pb","dep":"weak"}]}]})");
  DependencyInfo d = analyze_dependencies(g);
  CHECK(test::names(g, eliminate_dead_nodes(g, d, g.baseline_order()).removed) == std::vector<std::string>{"p"});
}

TEST_CASE("topological sort visits producers by buffer name, depth first", "[deps]") {
  // z reads "b_late" (from n2) and "a_early" (from n3): n3's buffer sorts first.
  Graph g = load_graph(R"({"format":"schedgraph/1","inputs":[],"outputs":["zo"],"nodes":[
    {"name":"n2","kind":"pointwise","outputs":[{"name":"b_late","bytes":4}]},
    {"name":"n3","kind":"pointwise","outputs":[{"name":"a_early","bytes":4}]},
    {"name":"z","kind":"pointwise","outputs":[{"name":"zo","bytes":4}],"reads":[{"name":"b_late"},{"name":"a_early"}]}]})");
  DependencyInfo d = analyze_dependencies(g);
  CHECK(test::names(g, topological_sort_schedule(g, d, {2, 0, 1})) == std::vector<std::string>{"n3", "n2", "z"});
  CHECK(test::names(g, topological_sort_schedule(g, d, g.baseline_order())) == std::vector<std::string>{"n2", "n3", "z"});
}

TEST_CASE("reachability answers ancestry without materialized sets", "[deps]") {
  Graph g = load_graph(kDepsGraph);
  DependencyInfo d = analyze_dependencies(g);
  Reachability reach(g, d, g.baseline_order());
  NodeId a = g.find_node("a"), r = g.find_node("r"), m = g.find_node("m"), after = g.find_node("after"), c = g.find_node("c");
  CHECK(reach.is_ancestor(a, after));
  CHECK(reach.is_ancestor(r, after));  // through the mutation's ordering dep
  CHECK_FALSE(reach.is_ancestor(after, a));
  CHECK_FALSE(reach.is_ancestor(c, after));
  CHECK_FALSE(reach.is_ancestor(a, a));
  CHECK(reach.any_ancestor({c, r}, {m}));
  CHECK(test::names(g, reach.ancestors(after)) == std::vector<std::string>{"a", "r", "m"});
  CHECK(reach.depth(after) == 3);
}
