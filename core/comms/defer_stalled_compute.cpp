// defer_stalled_compute: schedlab's own pass (docs/comms.md). The overlap
// passes move collectives and waits; the compute order stays the memory
// planner's, so a node that reads a late collective early (a backward
// matmul that needs only the last layer's gathered weight and an input, set
// first by the memory planner) stalls the compute stream while compute that
// does not need the collective waits behind it. This pass moves such a node
// later, with what must follow it, past the compute that does not need it.
//
// On the plan's simulation of the order (CollectivePrices::simulation:
// its pricing, launch path and contention; without prices, the two-stream
// model of the pass's runtimes), the stalls are the collectives a node
// waited on (CollectiveTiming::blocked), the longest first. For a stall at
// node b, the group G = {b} moves, in its own order, to just before the
// first later node that depends on any member (every dependency kind, fake
// ones included: they order); then that node joins G and G moves again, up
// to kMaxJoined times. Moving nodes later never breaks what they read, and
// nothing between b and that first dependent reads G, so every move is a
// valid order. Each move is simulated; the shortest step within the
// peak-memory budget ((1 + overlap_schedule_peak_memory_budget) x the
// input's allocfree peak, at most overlap_schedule_memory_budget_mib) and the
// in-flight limits is kept when it is shorter than the current one, and the
// stalls are read again from its simulation. At most simulation_budget(N)
// simulations (clamp(500 000 / N, 2, 64), as bucketing), so the pass costs
// O(S x (N + E)).
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "core/comms/in_flight.h"
#include "core/comms/passes.h"
#include "core/memory/estimate.h"
#include "core/sim/simulate.h"

namespace schedlab {
namespace {

// How many later nodes a stalled node may take with it.
constexpr int kMaxJoined = 8;

class Deferral {
 public:
  Deferral(const CommGraph& cg, const Order& input, const CommKnobs& k)
      : cg_(cg),
        info_(planning_info_of(cg, input)),
        limits_(InFlightLimits::from_knobs(k)),
        sim_graph_(make_simulation_graph(*cg.graph)),
        sims_left_(simulation_budget(cg.num_nodes())),
        in_group_(static_cast<std::size_t>(cg.num_nodes()), 0),
        held_by_memory_(static_cast<std::size_t>(cg.num_nodes()), 0) {
    input_peak_ = allocfree_peak(*cg.graph, info_, input);
    budget_ = overlap_peak_budget(k, input_peak_);
  }

  Simulation simulate(const Order& o) {
    --sims_left_;
    if (cg_.prices && cg_.prices->simulation) return cg_.prices->simulation(o);
    return simulate_two_streams(*cg_.graph, sim_graph_, o, cg_.runtime_us);
  }
  bool sims_left() const { return sims_left_ > 0; }
  std::int64_t input_peak() const { return input_peak_; }

  // Whether `o` keeps to the budget and the limits; a move of the stall at
  // `blocker` refused for memory is remembered (the report's limiting factor).
  bool admits(const Order& o, NodeId blocker, std::int64_t* peak) {
    *peak = allocfree_peak(*cg_.graph, info_, o);
    if (static_cast<double>(*peak) > budget_) {
      held_by_memory_[blocker] = 1;
      return false;
    }
    return !limits_.any() || max_in_flight(cg_, o).within(limits_);
  }
  bool held_by_memory(NodeId blocker) const { return held_by_memory_[blocker]; }

  // The best move of the stall at `blocker` in `order` (its simulation
  // `current`), or nothing when none is admitted and shorter.
  struct Move {
    Order order;
    Simulation sim;
    std::int64_t peak = 0;
    std::int32_t moved = 0;
  };
  std::optional<Move> defer(const Order& order, const Simulation& current, NodeId blocker) {
    std::vector<std::int32_t> pos(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) pos[order[i]] = static_cast<std::int32_t>(i);
    std::vector<NodeId> group = {blocker};
    in_group_[blocker] = 1;
    std::optional<Move> best;
    double best_us = current.step_time_us;
    for (int joined = 0; joined <= kMaxJoined && sims_left(); ++joined) {
      const std::int32_t limit = first_dependent(order, pos[blocker]);
      // Something besides the group lies before the limit: the group can pass it.
      if (limit - pos[blocker] > static_cast<std::int32_t>(group.size())) {
        Order moved = moved_before(order, limit);
        std::int64_t peak = 0;
        if (admits(moved, blocker, &peak)) {
          Simulation sim = simulate(moved);
          if (sim.step_time_us < best_us) {
            best_us = sim.step_time_us;
            best = Move{std::move(moved), std::move(sim), peak, static_cast<std::int32_t>(group.size())};
          }
        }
      }
      if (limit == static_cast<std::int32_t>(order.size())) break;
      group.push_back(order[limit]);
      in_group_[order[limit]] = 1;
    }
    for (NodeId v : group) in_group_[v] = 0;
    return best;
  }

 private:
  // The position of the first node after `from` outside the group that
  // depends on a member; the order's size when none does.
  std::int32_t first_dependent(const Order& order, std::int32_t from) const {
    for (std::size_t i = static_cast<std::size_t>(from) + 1; i < order.size(); ++i) {
      const NodeId v = order[i];
      if (in_group_[v]) continue;
      for (BufId b : cg_.unmet_bufs.row(v))
        if (in_group_[cg_.producer(b)]) return static_cast<std::int32_t>(i);
    }
    return static_cast<std::int32_t>(order.size());
  }

  // `order` with the group's members taken out and put, in their order,
  // just before position `limit` (the end when limit is the size). O(N).
  Order moved_before(const Order& order, std::int32_t limit) const {
    Order out;
    out.reserve(order.size());
    for (std::int32_t i = 0; i < static_cast<std::int32_t>(order.size()); ++i) {
      if (i == limit)
        for (NodeId v : order) if (in_group_[v]) out.push_back(v);
      if (!in_group_[order[i]]) out.push_back(order[i]);
    }
    if (limit == static_cast<std::int32_t>(order.size()))
      for (NodeId v : order) if (in_group_[v]) out.push_back(v);
    return out;
  }

  const CommGraph& cg_;
  const MemoryPlanningInfo info_;
  const InFlightLimits limits_;
  const SimulationGraph sim_graph_;
  std::int32_t sims_left_;
  std::vector<std::uint8_t> in_group_;
  std::vector<std::uint8_t> held_by_memory_;  // per node: a move of its stall broke the memory budget
  std::int64_t input_peak_ = 0;
  double budget_ = 0;
};

// The stalls of a simulation, the longest first: the collectives a node
// waited on (CollectiveTiming::blocked) with exposed time.
std::vector<CollectiveTiming> stalls_of(const Simulation& sim) {
  std::vector<CollectiveTiming> out;
  for (const CollectiveTiming& ct : sim.collectives)
    if (ct.blocked != kNone && ct.exposed_us > 0) out.push_back(ct);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.exposed_us > b.exposed_us; });
  return out;
}

}  // namespace

CommPassResult defer_stalled_compute(const CommGraph& cg, const Order& order, const CommKnobs& k) {
  Deferral d(cg, order, k);
  const Simulation before = d.simulate(order);
  Order current = order;
  Simulation sim = before;
  std::int64_t peak = d.input_peak();
  std::vector<std::uint8_t> tried(static_cast<std::size_t>(cg.num_nodes()), 0);
  std::vector<std::int32_t> moved_for(static_cast<std::size_t>(cg.num_nodes()), 0);  // per collective: nodes moved for its stall
  for (bool improved = true; improved && d.sims_left();) {
    improved = false;
    for (const CollectiveTiming& stall : stalls_of(sim)) {
      if (tried[stall.blocked] || !d.sims_left()) continue;
      tried[stall.blocked] = 1;
      if (auto move = d.defer(current, sim, stall.blocked)) {
        current = std::move(move->order);
        sim = std::move(move->sim);
        peak = move->peak;
        moved_for[stall.collective] += move->moved;
        improved = true;
        break;  // the stalls change with the order: read them again
      }
    }
  }
  CommPassResult result;
  result.order = current;
  result.peak_before = d.input_peak();
  result.peak_after = peak;
  result.step_before_us = before.step_time_us;
  result.step_after_us = sim.step_time_us;
  std::vector<double> exposed_before(static_cast<std::size_t>(cg.num_nodes()), 0);
  for (const CollectiveTiming& ct : before.collectives) exposed_before[ct.collective] = ct.exposed_us;
  for (const CollectiveTiming& ct : sim.collectives) {
    OverlapStat s;
    s.node = ct.collective;
    s.comm_time_us = cg.runtime_us[ct.collective];
    s.comp_time_us = s.comm_time_us - ct.exposed_us;
    s.initial_exposed_us = exposed_before[ct.collective];
    s.final_exposed_us = ct.exposed_us;
    s.moves = moved_for[ct.collective];
    s.limiting_factor = ct.exposed_us <= 0                                        ? "None"
                        : ct.blocked != kNone && d.held_by_memory(ct.blocked) ? "peak memory budget"
                                                                              : "dependencies";
    result.stats.push_back(std::move(s));
  }
  return result;
}

}  // namespace schedlab
