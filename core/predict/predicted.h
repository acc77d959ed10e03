// core/predict — what a plan predicts for a real run (schedplan/1 `predicted`,
// docs/schedplan-1.md): kernel time, wall time in Inductor's default mode and
// under CUDA graphs, peak memory as executed and the allocator's reserved peak.
//
// Contract: a pure function of (Graph, order, hardware profile). Times come
// from the calibrated model (core/cost: the profile's fitted time model, else
// the roofline) and the three-resource simulation (core/sim: host, compute
// stream, comm stream); memory from core/memory/executed.h. Nothing here
// reads a node's `runtime_us`: that is Inductor's estimate, reported beside.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/cost/cost_model.h"
#include "core/memory/executed.h"
#include "core/sim/simulate.h"

namespace schedlab {

// The launch path of the profile's time model for every node: per launched
// kernel, the host's wrapper cost (none under CUDA graphs) and the device's
// launch gap. A profile without a time model has neither. A collective
// call costs the host `host_us_per_collective`; `fake_collectives` (the
// graph ran on the fake process group, as the zoo's did) adds
// `host_us_per_collective_kernel` per device copy the fake group's call
// launches itself: an all_gather copies its input into each of its
// `group_size` chunks, the other collectives launch nothing. `executed`,
// memory as executed over the order to be simulated: each node's host also
// pays `host_us_per_allocation` per buffer the wrapper allocates afresh at
// its step (none when null).
LaunchModel launch_model(const Graph& g, const HardwareProfile& hw, bool cudagraphs, bool fake_collectives = false,
                         const ExecutedMemory* executed = nullptr);

// How each node's kernel and a collective beside it slow each other, by the
// node's kernel class and the profile's contention law (core/cost
// collective_times.h); empty when the profile has none.
ContentionModel contention_model(const Graph& g, const HardwareProfile& hw);

// Per node, the graph buffers the wrapper allocates afresh at its step
// (memory as executed's Allocate events; reuses and kernel workspaces left out).
std::vector<int> fresh_allocations_per_node(const Graph& g, const ExecutedMemory& executed);

// The device kernels a collective node launches from the host on the fake
// process group (0 for any other node).
int fake_collective_kernels(const Node& n);

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

// `price_collectives` false: collectives take no time (as on a fake process
// group, which launches them but moves nothing) and count in no kernel time;
// the host pays the fake group's copies (launch_model's `fake_collectives`).
Prediction predict(const Graph& g, const Order& order, const HardwareProfile& hw,
                   const std::map<std::string, std::int64_t>& observed_bytes = {}, bool price_collectives = true);

// The same figures from what a plan has already computed (collectives
// priced, nothing observed): `calibrated_us`, calibrated_runtimes_us(g, hw);
// `default_mode_wall_us`, the step time of simulating `order` with them
// and launch_model(g, hw, false), when the plan ran that very simulation
// (its default runtime source), else predict simulates it;
// `scheduler_estimate`, the scheduler's estimate over `order` as
// estimate_memory_as_executed takes it, or null; and `executed`, memory as
// executed over `order` when the plan has it already (its launch path
// priced the allocations by it), else predict estimates it.
Prediction predict(const Graph& g, const Order& order, const HardwareProfile& hw, const std::vector<double>& calibrated_us,
                   std::optional<double> default_mode_wall_us, const PeakMemoryEstimate* scheduler_estimate,
                   const ExecutedMemory* executed = nullptr);

// schedplan/1 `predicted` is written by core/io/plan_writer.h.
std::string prediction_to_text(const Prediction& p);

}  // namespace schedlab
