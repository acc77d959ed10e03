#include "core/sim/ranks.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "core/sim/rank_stepper.h"
#include "core/util/error.h"

namespace schedlab {

namespace {

// What matching compares: a graph built in code may leave it out.
Collective collective_of(const Node& n) { return n.collective ? *n.collective : Collective{}; }

std::string describe(const Graph& g, NodeId v) {
  const Collective c = collective_of(g.nodes[v]);
  return "\"" + g.nodes[v].name + "\" (" + std::string(to_string(c.kind)) + ", group size " + std::to_string(c.group_size) + ", " +
         std::to_string(c.bytes) + " bytes)";
}

std::string ordinal(std::size_t k) { return "collective #" + std::to_string(k + 1); }

// Each rank's collectives in its order of issue; throws OptionError where a
// rank's k-th does not match rank 0's.
std::vector<std::vector<NodeId>> matched_collectives(std::span<const RankInput> ranks) {
  std::vector<std::vector<NodeId>> issued(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const Graph& g = *ranks[r].graph;
    for (NodeId v : ranks[r].order)
      if (v >= 0 && v < g.num_nodes() && g.nodes[v].kind == NodeKind::Collective) issued[r].push_back(v);
  }
  const Graph& g0 = *ranks[0].graph;
  for (std::size_t r = 1; r < ranks.size(); ++r) {
    const Graph& g = *ranks[r].graph;
    const std::string rank = "rank " + std::to_string(r) + " (" + ranks[r].label + ")";
    const std::size_t common = std::min(issued[r].size(), issued[0].size());
    for (std::size_t k = 0; k < common; ++k) {
      const Collective a = collective_of(g0.nodes[issued[0][k]]), b = collective_of(g.nodes[issued[r][k]]);
      if (a.kind != b.kind || a.group_size != b.group_size || a.bytes != b.bytes)
        throw OptionError(rank + ": " + ordinal(k) + " " + describe(g, issued[r][k]) + " does not match rank 0's " + describe(g0, issued[0][k]) +
                          " (" + ranks[0].label + ")");
    }
    if (issued[r].size() != issued[0].size()) {
      const bool more = issued[r].size() > issued[0].size();
      throw OptionError(rank + ": issues " + std::to_string(issued[r].size()) + " collectives, rank 0 (" + ranks[0].label + ") " +
                        std::to_string(issued[0].size()) + "; " + ordinal(common) + " " +
                        (more ? describe(g, issued[r][common]) + " has no match on rank 0"
                              : "of rank 0, " + describe(g0, issued[0][common]) + ", has no match"));
    }
  }
  return issued;
}

}  // namespace

RanksSimulation simulate_ranks(std::span<const RankInput> ranks) {
  if (ranks.empty()) throw OptionError("several ranks: no rank given");
  for (const RankInput& rank : ranks)
    if (!rank.graph) throw Error("several ranks: " + rank.label + ": no graph");
  std::vector<SimulationGraph> graphs;
  graphs.reserve(ranks.size());
  std::vector<std::unique_ptr<RankStepper>> steppers;
  for (const RankInput& rank : ranks) {
    graphs.push_back(make_simulation_graph(*rank.graph));
    steppers.push_back(make_rank_stepper(*rank.graph, graphs.back(), rank.order, rank.runtime_us, rank.launch, rank.contention));
  }
  const std::vector<std::vector<NodeId>> issued = matched_collectives(ranks);
  RanksSimulation out;
  const std::size_t count = issued[0].size();
  out.collectives.reserve(count);
  std::vector<CollectiveArrival> arrived(ranks.size());
  // Collective by collective: every rank runs up to its issue of the k-th,
  // which can then start on each from the last arrival on. A rank reaches
  // its k-th having waited only on earlier ones, whose starts are known.
  for (std::size_t k = 0; k < count; ++k) {
    RankCollective rc;
    rc.node.resize(ranks.size());
    double ready = 0;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      const std::optional<CollectiveArrival> a = steppers[r]->next_collective();
      if (!a) throw Error("several ranks: rank " + std::to_string(r) + " (" + ranks[r].label + ") did not issue " + ordinal(k));
      arrived[r] = *a;
      rc.node[r] = issued[r][k];
      ready = r == 0 ? a->start_from_us : std::max(ready, a->start_from_us);
      if (r == 0 || a->issue_us < rc.earliest_issue_us) {
        rc.earliest_issue_us = a->issue_us;
        rc.earliest_rank = static_cast<std::int32_t>(r);
      }
      if (r == 0 || a->issue_us > rc.latest_issue_us) {
        rc.latest_issue_us = a->issue_us;
        rc.latest_rank = static_cast<std::int32_t>(r);
      }
    }
    for (auto& stepper : steppers) stepper->start_after(ready);
    out.collectives.push_back(std::move(rc));
  }
  out.ranks.reserve(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (steppers[r]->next_collective()) throw Error("several ranks: rank " + std::to_string(r) + " issued more collectives than it holds");
    out.ranks.push_back(steppers[r]->finish());
    if (out.ranks[r].step_time_us > out.ranks[out.slowest_rank].step_time_us) out.slowest_rank = static_cast<std::int32_t>(r);
  }
  return out;
}

std::vector<double> with_compute_scaled(const Graph& g, std::vector<double> runtime_us, double factor) {
  if (!(factor > 0) || !std::isfinite(factor)) throw OptionError("compute speed factor " + std::to_string(factor) + " is not a positive number");
  if (runtime_us.size() != g.nodes.size()) throw Error("several ranks: the runtimes do not match the graph's nodes");
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    if (g.nodes[v].kind != NodeKind::Collective) runtime_us[v] *= factor;
  return runtime_us;
}

std::vector<std::int32_t> largest_skews(const RanksSimulation& sim, std::size_t count) {
  std::vector<std::int32_t> index(sim.collectives.size());
  for (std::size_t k = 0; k < index.size(); ++k) index[k] = static_cast<std::int32_t>(k);
  std::stable_sort(index.begin(), index.end(),
                   [&](std::int32_t a, std::int32_t b) { return sim.collectives[a].skew_us() > sim.collectives[b].skew_us(); });
  if (index.size() > count) index.resize(count);
  return index;
}

}  // namespace schedlab
