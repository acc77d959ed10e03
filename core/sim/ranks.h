// core/sim — several ranks of one step, each its own two-stream simulation
// (compute and comm streams, launch path, contention: core/sim/simulate.h),
// meeting at their collectives.
//
// Contract: a pure function of the ranks' (Graph, order, runtimes, launch
// model, contention model). schedgraph/1 records a collective's group size,
// not which ranks form its group, so every rank given takes part in every
// collective: the ranks' collectives are matched by their order of issue
// (the k-th collective each rank issues is one collective), and must agree
// in op, group size and payload. A collective is ready once the last rank
// has issued it: on each rank it starts no earlier than that (nor before
// its own comm stream is free, as on one rank), so a rank that arrives
// early waits, and the wait shows where it reads the collective's output.
// The ranks' comm streams meet only there: a collective that starts late
// on one rank (its stream still busy, or slowed by contention) does not
// hold the others back. With one rank, or ranks alike, each rank's
// Simulation is simulate_two_streams' exactly.
//
// Cost: one pass over every rank's order, plus ranks x collectives for the
// matching (linear in the events).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/sim/simulate.h"

namespace schedlab {

struct RankInput {
  std::string label;            // names the rank in errors: its graph file, say
  const Graph* graph = nullptr;
  Order order;
  std::vector<double> runtime_us;  // per node
  LaunchModel launch;
  ContentionModel contention;
};

// One collective across the ranks: the k-th each rank issued.
struct RankCollective {
  std::vector<NodeId> node;           // per rank
  std::int32_t earliest_rank = 0, latest_rank = 0;  // by issue time (the lowest rank on ties)
  double earliest_issue_us = 0, latest_issue_us = 0;
  double skew_us() const { return latest_issue_us - earliest_issue_us; }  // the arrival skew
};

struct RanksSimulation {
  std::vector<Simulation> ranks;           // per rank
  std::vector<RankCollective> collectives;  // in issue order
  std::int32_t slowest_rank = 0;           // the largest step time (the lowest rank on ties)
  double step_time_us() const { return ranks[slowest_rank].step_time_us; }
};

// Throws OptionError when the ranks' collectives do not match (naming the
// rank, its label and the collective's node), Error where a rank's inputs
// do not fit its graph.
RanksSimulation simulate_ranks(std::span<const RankInput> ranks);

// Rank r's compute speed: its compute nodes' runtimes times factor
// (collectives keep theirs). A factor of 1.03 makes a rank 3 % slower.
std::vector<double> with_compute_scaled(const Graph& g, std::vector<double> runtime_us, double factor);

// The indices of `sim.collectives`, the largest arrival skew first (issue
// order on ties), at most `count`.
std::vector<std::int32_t> largest_skews(const RanksSimulation& sim, std::size_t count);

}  // namespace schedlab
