// The fast memory methods against plain transcriptions of Inductor's
// quadratic loops (the oracles below), on random graphs with many ties.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <set>

#include "core/gen/generators.h"
#include "core/memory/methods.h"
#include "tests/test_util.h"

using namespace schedlab;

namespace {

// Inductor's LPMF as written: rescan every ready node each step.
Order oracle_lpmf(const Graph& g, const MemoryPlanningInfo& info, const Order& input) {
  std::vector<int> indegree(g.nodes.size()), outdegree(g.buffers.size());
  std::vector<std::int64_t> to_free(g.nodes.size(), 0);
  std::set<NodeId> ready;
  for (NodeId v : input) {
    indegree[v] = info.pred_nodes.degree(v);
    if (indegree[v] == 0) ready.insert(v);
  }
  std::int64_t live = 0, outputs = 0;
  for (BufId b = 0; b < g.num_buffers(); ++b) {
    if (!info.planned[b]) continue;
    outdegree[b] = info.buffer_succ_nodes.degree(b) + info.is_graph_output[b];
    if (info.is_graph_output[b]) outputs += info.size_free[b];
  }
  for (BufId b : info.freeable_inputs) live += info.size_free[b];
  std::int64_t max_memory = std::max(live, outputs);
  for (NodeId v : input) {
    for (auto b : info.pred_buffers.row(v))
      if (outdegree[b] == 1) to_free[v] += info.size_free[b];
    for (BufId b : g.nodes[v].outputs)
      if (outdegree[b] == 0) to_free[v] += info.size_free[b];
  }
  Order out;
  while (!ready.empty()) {
    auto key = [&](NodeId v) {
      return std::tuple(std::max(live + info.node_size[v], max_memory), info.node_size[v] - to_free[v], info.index[v]);
    };
    NodeId best = *std::min_element(ready.begin(), ready.end(), [&](NodeId a, NodeId b) { return key(a) < key(b); });
    ready.erase(best);
    out.push_back(best);
    live += info.node_size[best];
    max_memory = std::max(max_memory, live);
    live -= to_free[best];
    for (auto s : info.succ_nodes.row(best))
      if (--indegree[s] == 0) ready.insert(s);
    for (auto b : info.pred_buffers.row(best))
      if (--outdegree[b] == 1)
        for (auto s : info.buffer_succ_nodes.row(b)) to_free[s] += info.size_free[b];
  }
  return out;
}

// Inductor's BFS with a plain ready list and a full scan.
Order oracle_bfs(const Graph& g, const MemoryPlanningInfo& info, const Order& input) {
  std::vector<int> indegree(g.nodes.size()), ran_at(g.nodes.size(), -1);
  std::vector<NodeId> ready;
  for (NodeId v : input) {
    indegree[v] = info.pred_nodes.degree(v);
    if (indegree[v] == 0) ready.push_back(v);
  }
  auto priority = [&](NodeId v) {
    std::set<int> s;
    for (auto p : info.pred_nodes.row(v)) s.insert(ran_at[p]);
    return std::vector<int>(s.begin(), s.end());
  };
  Order out;
  while (!ready.empty()) {
    auto it = std::min_element(ready.begin(), ready.end(), [&](NodeId a, NodeId b) {
      return std::pair(priority(a), info.index[a]) < std::pair(priority(b), info.index[b]);
    });
    NodeId v = *it;
    ready.erase(it);
    ran_at[v] = static_cast<int>(out.size());
    out.push_back(v);
    for (auto s : info.succ_nodes.row(v))
      if (--indegree[s] == 0) ready.push_back(s);
  }
  return out;
}

// Inductor's DFS, recursive.
Order oracle_dfs(const Graph& g, const MemoryPlanningInfo& info, const Order& input) {
  std::vector<std::int64_t> weight(g.nodes.size());
  for (NodeId v : input) {
    weight[v] = info.node_size[v];
    for (auto b : info.pred_buffers.row(v)) weight[v] += info.size_free[b];
  }
  auto lighter = [&](NodeId a, NodeId b) { return std::pair(weight[a], info.index[a]) < std::pair(weight[b], info.index[b]); };
  std::vector<bool> seen(g.nodes.size());
  Order out;
  std::function<void(NodeId)> visit = [&](NodeId v) {
    if (seen[v]) return;
    seen[v] = true;
    auto row = info.dep_nodes.row(v);
    std::vector<NodeId> deps(row.begin(), row.end());
    std::sort(deps.begin(), deps.end(), lighter);
    for (NodeId d : deps) visit(d);
    out.push_back(v);
  };
  Order roots(input);
  std::sort(roots.begin(), roots.end(), lighter);
  for (NodeId v : roots) visit(v);
  return out;
}

}  // namespace

TEST_CASE("lpmf, bfs and dfs equal the reference loops on random graphs", "[memory][oracle]") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    LayeredSpec spec;
    spec.nodes = 20 + static_cast<std::int32_t>(seed * 7 % 180);
    spec.width = 1 + static_cast<std::int32_t>(seed % 9);
    spec.fan_in = 1 + static_cast<std::int32_t>(seed % 4);
    spec.skip = 1 + static_cast<std::int32_t>(seed % 5);
    spec.seed = seed;
    Graph g = generate_layered(spec);
    // Start from a shuffled-but-valid order too: indices then differ from ids.
    Order input = g.baseline_order();
    auto info = compute_planning_info(g, input);
    INFO("seed " << seed << ", " << g.num_nodes() << " nodes");
    CHECK(topological_sort_lpmf(g, info, input) == oracle_lpmf(g, info, input));
    CHECK(topological_sort_bfs(g, info, input) == oracle_bfs(g, info, input));
    CHECK(topological_sort_dfs(g, info, input) == oracle_dfs(g, info, input));
    Order bfs = topological_sort_bfs(g, info, input);
    auto info2 = compute_planning_info(g, bfs);
    CHECK(topological_sort_lpmf(g, info2, bfs) == oracle_lpmf(g, info2, bfs));
  }
}

TEST_CASE("methods agree with the reference loops on replicated fixtures", "[memory][oracle][fixtures]") {
  Graph base = load_graph_file(test::data_path("inductor/fsdp_1.post.json"));
  for (bool chained : {false, true}) {
    Graph g = replicate_graph(base, 5, chained);
    Order input = g.baseline_order();
    auto info = compute_planning_info(g, input);
    CHECK(topological_sort_lpmf(g, info, input) == oracle_lpmf(g, info, input));
    CHECK(topological_sort_bfs(g, info, input) == oracle_bfs(g, info, input));
    CHECK(topological_sort_dfs(g, info, input) == oracle_dfs(g, info, input));
  }
}
