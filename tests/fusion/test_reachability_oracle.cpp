// The fuser's ancestry and cycle answers against plain searches, on random
// DAGs shaped like the adversarial corpus's irregular_dag (each node reads up
// to three earlier outputs, sizes chosen so that about a third of the pairs
// fuse): Reachability's label-pruned searches against whole ancestor sets,
// and the engine's will_fusion_create_cycle against a breadth-first search
// over the fused graph.
#include <catch2/catch.hpp>

#include <algorithm>
#include <deque>
#include <random>
#include <set>
#include <string>

#include "core/deps/dependencies.h"
#include "core/fusion/fusion_engine.h"
#include "core/io/graph_reader.h"

using namespace schedlab;

namespace {

std::string random_dag(std::mt19937& rng, int n) {
  auto pick = [&](int k) { return static_cast<int>(rng() % static_cast<unsigned>(k)); };
  const int sizes[] = {16, 32, 64};
  std::set<int> read;
  std::string nodes;
  for (int i = 0; i < n; ++i) {
    std::set<int> srcs;
    for (int k = i ? pick(4) : 0; k > 0; --k) srcs.insert(pick(i));
    const std::string size = std::to_string(sizes[pick(3)]);
    std::string reads;
    for (int s : srcs) {
      read.insert(s);
      reads += std::string(reads.empty() ? "" : ",") + R"({"name":"buf)" + std::to_string(s) + R"(","dep":"memory","index":"d0","size":[)" + size + R"(],"bytes":64})";
    }
    const std::string name = std::to_string(i);
    nodes += std::string(i ? "," : "") + R"({"name":"op)" + name + R"(","kind":")" + (pick(3) == 0 ? "reduction" : "pointwise") +
             R"(","group":[)" + size + "," + (pick(10) < 7 ? "1" : "4") + R"(],"outputs":[{"name":"buf)" + name + R"(","bytes":64}],"reads":[)" + reads +
             R"(],"writes":[{"name":"buf)" + name + R"(","dep":"memory","index":"d0","size":[)" + size + R"(],"bytes":64}]})";
  }
  std::string outputs;
  for (int i = 0; i < n; ++i)
    if (!read.count(i)) outputs += std::string(outputs.empty() ? "" : ",") + R"("buf)" + std::to_string(i) + R"(")";
  return R"({"format":"schedgraph/1","world_size":1,"inputs":[],"outputs":[)" + outputs + R"(],"nodes":[)" + nodes + "]}";
}

struct Prepared {
  Graph g;
  DependencyInfo deps;
  Order schedule;
};

Prepared prepare(const std::string& text) {
  Prepared p{load_graph(text), {}, {}};
  p.deps = analyze_dependencies(p.g);
  Order sorted = topological_sort_schedule(p.g, p.deps, p.g.baseline_order());
  p.schedule = topological_sort_schedule(p.g, p.deps, eliminate_dead_nodes(p.g, p.deps, sorted).kept);
  return p;
}

}  // namespace

TEST_CASE("label-pruned ancestry equals whole ancestor sets on random DAGs", "[deps][oracle]") {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 60; ++trial) {
    Prepared p = prepare(random_dag(rng, 20 + static_cast<int>(rng() % 150)));
    Reachability reach(p.g, p.deps, p.schedule);
    const auto n = static_cast<NodeId>(p.g.nodes.size());
    std::vector<std::vector<bool>> is_anc(static_cast<std::size_t>(n), std::vector<bool>(static_cast<std::size_t>(n), false));
    for (NodeId v = 0; v < n; ++v)
      for (NodeId a : reach.ancestors(v)) is_anc[a][v] = true;
    for (NodeId a = 0; a < n; ++a)
      for (NodeId b = 0; b < n; ++b) REQUIRE(reach.is_ancestor(a, b) == is_anc[a][b]);
    // Sets, small (targets checked one by one) and large (the box alone).
    for (int q = 0; q < 400; ++q) {
      std::vector<NodeId> as, bs;
      for (int k = 1 + static_cast<int>(rng() % (q % 2 ? 24 : 4)); k > 0; --k) as.push_back(static_cast<NodeId>(rng() % n));
      for (int k = 1 + static_cast<int>(rng() % (q % 3 ? 4 : 24)); k > 0; --k) bs.push_back(static_cast<NodeId>(rng() % n));
      bool expected = false;
      for (NodeId a : as)
        for (NodeId b : bs) expected = expected || is_anc[a][b];
      REQUIRE(reach.any_ancestor(as, bs) == expected);
    }
  }
}

TEST_CASE("the fuser's cycle check equals a plain search over the fused graph on random DAGs", "[fusion][oracle]") {
  std::mt19937 rng(34);
  int cycles = 0, checks = 0;
  for (int trial = 0; trial < 40; ++trial) {
    Prepared p = prepare(random_dag(rng, 40 + static_cast<int>(rng() % 160)));
    FusionOptions opts;
    fusion_detail::FusionEngine engine(p.g, p.deps, p.schedule, opts);
    engine.run();
    Reachability reach(p.g, p.deps, p.schedule);
    const std::vector<fusion_detail::GroupId> nodes = engine.order();
    // Inductor's question: a path from one of the pair through another node to the other.
    auto path_through_another = [&](fusion_detail::GroupId from, fusion_detail::GroupId to) {
      std::set<fusion_detail::GroupId> seen;
      std::deque<fusion_detail::GroupId> queue;
      auto push_succs = [&](fusion_detail::GroupId x) {
        for (NodeId m : engine.group(x).members)
          for (NodeId s : reach.succs(m)) {
            fusion_detail::GroupId t = engine.group_of(s);
            if (t != from && t != to && seen.insert(t).second) queue.push_back(t);
          }
      };
      push_succs(from);
      while (!queue.empty()) {
        fusion_detail::GroupId x = queue.front();
        queue.pop_front();
        for (NodeId m : engine.group(x).members)
          for (NodeId s : reach.succs(m))
            if (engine.group_of(s) == to) return true;
        push_succs(x);
      }
      return false;
    };
    for (int q = 0; q < 300 && nodes.size() > 1; ++q) {
      fusion_detail::GroupId a = nodes[rng() % nodes.size()], b = nodes[rng() % nodes.size()];
      if (a == b) continue;
      const bool expected = path_through_another(a, b) || path_through_another(b, a);
      REQUIRE(engine.will_fusion_create_cycle(a, b) == expected);
      ++checks;
      cycles += expected;
    }
  }
  // The random graphs must exercise both answers.
  CHECK(cycles > checks / 20);
  CHECK(cycles < checks);
}
