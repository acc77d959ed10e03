// core/predict — what a plan predicts for a real run (schedplan/1 `predicted`,
// docs/schedplan-1.md): kernel time, wall time in Inductor's default mode and
// under CUDA graphs, peak memory as executed and the allocator's reserved peak.
//
// Contract: a pure function of (Graph, order, Pricing). Times come from the
// calibrated model of the pricing (core/cost/pricing.h: the profile's fitted
// time model, else the roofline) and the three-resource simulation (core/sim: host, compute
// stream, comm stream); memory from core/memory/executed.h. Nothing here
// reads a node's `runtime_us`: that is Inductor's estimate, reported beside.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/cost/cost_model.h"
#include "core/cost/pricing.h"
#include "core/memory/executed.h"
#include "core/sim/simulate.h"

namespace schedlab {

// The launch path over one order, as core/sim takes it: the pricing's
// launch costs (core/cost/pricing.h; none without a time model). In
// Inductor's default mode the host also pays `host_us_per_allocation` per
// buffer the wrapper allocates afresh at each step of `executed`, memory as
// executed over the order (null: no allocations priced); under CUDA graphs
// the host pays nothing and the gaps are the CUDA-graph ones.
LaunchModel launch_path(const Graph& g, const Pricing& p, bool cudagraphs, const ExecutedMemory* executed = nullptr);

// The pricing's contention per node as core/sim takes it: empty when the
// profile has no contention law, when collectives are not priced, or when
// the simulation does not time by the calibrated model (contention is the
// calibrated model's, as the launch path is).
ContentionModel contention_model(const Pricing& p);

// Per node, the graph buffers the wrapper allocates afresh at its step
// (memory as executed's Allocate events; reuses and kernel workspaces left out).
std::vector<int> fresh_allocations_per_node(const Graph& g, const ExecutedMemory& executed);

struct Prediction {
  std::string hardware;
  std::string runtime_source;     // "calibrated" (fitted time model) | "roofline" (datasheet)
  double host_probe_us = 0;       // the host speed the wall's host costs hold at (time_model.host_probe_us; 0: not known)
  std::int64_t peak_bytes = 0;    // memory as executed
  std::int64_t reserved_bytes = 0;
  double kernel_time_us = 0;      // sum of GPU kernel time (collectives included)
  double wall_time_us = 0;        // Inductor's default mode: host, launch gaps, two streams
  double wall_time_us_cudagraphs = 0;
  std::optional<double> inductor_kernel_time_us;  // sum of the nodes' runtime_us, when every kernel has one
  std::map<KernelClass, double> class_time_us;    // kernel time by class
  ExecutedMemory memory;
};

// The figures of `order` under pricing `p` (price_graph with its
// price_collectives: false counts no collective in kernel time), with
// `executed`, memory as executed over the order, and `default_mode_wall_us`,
// the step time of simulating the order with p.calibrated_us and
// launch_path(g, p, false, &executed): a plan's simulation when it timed by
// the calibrated model, else default_mode_wall_us below.
Prediction predict(const Graph& g, const Order& order, const Pricing& p, ExecutedMemory executed, double default_mode_wall_us);
double default_mode_wall_us(const Graph& g, const Order& order, const Pricing& p, const ExecutedMemory& executed);

// All of it from a profile: priced, memory as executed with the
// data-dependent sizes observed (by buffer name), simulated. The accuracy
// report and the tests' way in; a plan runs its `predict` stage instead.
Prediction predict(const Graph& g, const Order& order, const HardwareProfile& hw,
                   const std::map<std::string, std::int64_t>& observed_bytes = {}, bool price_collectives = true);

// schedplan/1 `predicted` is written by core/io/plan_writer.h.
std::string prediction_to_text(const Prediction& p);

}  // namespace schedlab
