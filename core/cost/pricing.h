// core/cost — one face for timing: a graph priced once on one hardware
// profile (XLA's LatencyEstimator, as a plain value). Every consumer reads
// the same Pricing: the comm passes (pass_us, Inductor's inputs), the
// simulation (simulated_us and the launch path), the prediction
// (core/predict), the fit and the accuracy report (core/measure), the WASM
// module and schedlab-gpu, all through the plan's `pricing` stage
// (core/plan) or price_graph directly where no plan runs.
//
// Contract: price_graph is a pure function of (Graph, HardwareProfile,
// PricingOptions). It prices what does not depend on the order; what does
// (the host's per-allocation cost, which follows memory as executed over an
// order) is added per order by core/predict's launch_path.
//
// Where a new thing goes (docs/architecture.md, "Where new things go"):
// a law term is a row of core/cost/law_terms.def and its feature in
// core/cost/law_features.cpp; a host term a row of core/cost/host_terms.def
// and its count in host_term_counts (core/cost/time_model.cpp); a
// collective model a function beside estimate_collective_algorithms
// (core/cost/cost_model.cpp) chosen per op, group and world size and
// topology (HardwareProfile: ranks_per_node, links) in
// estimate_node_runtime, measured curves in a profile's `collectives`
// (core/cost/collective_times.h); a contention rule a field of
// ContentionShare (collective_times.h), carried per node in `contention`
// here, which core/sim's contended loop applies to the overlapped intervals.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/cost/cost_model.h"
#include "core/cost/kernel_class.h"
#include "core/graph/graph.h"

namespace schedlab {

// What the simulation times nodes by.
enum class SimulatedTimes : std::uint8_t {
  Calibrated,  // the profile's fitted model (calibrated_us) and its launch path
  PassTimes,   // what the comm passes read (pass_us: runtime_us, else the roofline), no launch path
};

struct PricingOptions {
  // false: every node is timed by the cost model, its runtime_us ignored
  // (`simulate --model-runtimes`).
  bool use_graph_runtimes = true;
  SimulatedTimes simulated = SimulatedTimes::Calibrated;
  // false (a fake process group, which launches collectives but moves
  // nothing: the zoo's measurements): collectives take no calibrated time
  // and count in no kernel time, and the host pays the fake group's copies.
  bool price_collectives = true;
};

// The launch path of the calibrated model, what of it does not depend on
// the order: per node, the host's wrapper cost in Inductor's default mode
// (the fresh allocations aside) and the device's launch gap in default mode
// and under CUDA graphs. Empty vectors: the profile has no time model (no
// host, no gaps).
struct LaunchCosts {
  std::vector<double> host_us;            // per node, default mode, allocations aside
  std::vector<double> gap_us;             // per node, default mode
  std::vector<double> cudagraph_gap_us;   // per node, inside a CUDA graph
  double host_call_us = 0;                // per call, its inputs included (default mode)
  double host_call_epilogue_us = 0;       // of host_call_us, what comes after the last launch
  double host_us_per_allocation = 0;      // per buffer the wrapper allocates afresh
  std::vector<char> host_waits;           // per node: the call reads a device value back (reads_back_to_host)
  bool empty() const { return host_us.empty(); }
};

struct Pricing {
  std::string hardware;           // the profile's name
  std::string model;              // "calibrated" (a fitted time model) | "roofline" (a datasheet profile)
  double host_probe_us = 0;       // the host speed the host costs hold at (0: not known)
  SimulatedTimes simulated = SimulatedTimes::Calibrated;
  bool price_collectives = true;
  std::vector<KernelClass> classes;  // per node: its base class (classify_node), which plans report time by
  std::vector<KernelClass> kernel_classes;  // per node: its finest class (classify_kernel), which `accuracy` reports
  std::vector<KernelClass> law_classes;     // per class (kKernelClasses): the class whose law prices it; empty without a time model
  // Per node, what the comm passes read, as Inductor does: the node's
  // runtime_us (Inductor's estimate), else the roofline and the collective
  // model; and which of them gave it.
  std::vector<double> pass_us;
  std::vector<std::string_view> pass_sources;  // "runtime_us" | "roofline" | "collective" | "none"
  // Per node, the calibrated model (core/cost/time_model.h; the roofline
  // without one): what the reports time by. Zero for collectives when
  // !price_collectives.
  std::vector<double> calibrated_us;
  // The calibrated model's launch path (empty without a time model): the
  // prediction's, and the simulation's when it times by the calibrated model.
  LaunchCosts launch;
  // Per node, how its kernel and a collective beside it slow each other
  // (the profile's contention law, core/cost/collective_times.h); empty
  // without one, or when collectives are not priced. core/sim applies it to
  // the intervals where they overlap, when it times by the calibrated model.
  std::vector<ContentionShare> contention;
  // Per node, with `contention`: a collective's extra wait for its peers when
  // it starts beside a kernel (the profile's collectives.peer_wait_beside_us,
  // inside one node); 0 for every other node. Empty without the law.
  std::vector<double> beside_wait_us;

  const std::vector<double>& simulated_us() const { return simulated == SimulatedTimes::Calibrated ? calibrated_us : pass_us; }
  bool simulates_launch_path() const { return simulated == SimulatedTimes::Calibrated && !launch.empty(); }
  // Whether the launch path over an order needs memory as executed over it
  // (the host pays per fresh allocation).
  bool prices_allocations() const { return !launch.empty() && launch.host_us_per_allocation > 0; }
};

Pricing price_graph(const Graph& g, const HardwareProfile& hw, const PricingOptions& opts = {});

// The device kernels a collective node launches from the host on the fake
// process group (0 for any other node): an all_gather copies its input into
// each of its group's chunks.
int fake_collective_kernels(const Node& n);

}  // namespace schedlab
