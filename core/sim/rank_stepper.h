// core/sim — one rank's two-stream simulation advanced collective by
// collective: simulate_two_streams runs one alone (each collective may start
// from its own arrival); simulate_ranks (core/sim/ranks.h) runs several side
// by side, each collective ready once its last member rank has issued it.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "core/sim/simulate.h"

namespace schedlab {

// Where a rank stands once it has issued a collective.
struct CollectiveArrival {
  double start_from_us = 0;  // the earliest the collective may start on this rank alone
  double issue_us = 0;       // its CollectiveTiming::issue_us
};

class RankStepper {
 public:
  virtual ~RankStepper() = default;
  // Runs the order up to and including the issue of its next collective;
  // nullopt once the order is done.
  virtual std::optional<CollectiveArrival> next_collective() = 0;
  // The collective last issued may start from ready_us on (its own
  // start_from_us, or a later rank's); called once per collective, before
  // the next next_collective().
  virtual void start_after(double ready_us) = 0;
  // The step, once next_collective() has returned nullopt.
  virtual Simulation finish() = 0;
};

// Throws Error where the inputs do not fit the graph (as
// simulate_two_streams). Every argument must outlive the stepper.
std::unique_ptr<RankStepper> make_rank_stepper(const Graph& g, const SimulationGraph& sg, const Order& order,
                                               const std::vector<double>& runtime_us, const LaunchModel& launch,
                                               const ContentionModel& contention);

}  // namespace schedlab
