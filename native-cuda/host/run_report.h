// native-cuda/host — the report of one executor run (see
// execution_schedule.h for the folder's contract): per node the cost
// model's estimate next to the measured time, totals per stand-in kind, and
// the memory estimator's peak next to the bytes the executor really held.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cost/cost_model.h"
#include "native-cuda/host/execution_schedule.h"
#include "native-cuda/host/stand_in.h"

namespace schedlab::gpu {

struct NodeMeasurement {
  bool executed = false;
  double us = 0;            // median over the timed repetitions
  std::string not_executed; // why not, when !executed and the node has work
};

struct MemoryMeasurement {
  std::int64_t live_peak_bytes = 0;      // the executor's own count of bytes allocated and not yet freed
  std::int32_t live_peak_step = 0;
  std::int64_t pool_used_high_bytes = 0;     // the CUDA memory pool's high-water mark (rounded allocations)
  std::int64_t pool_reserved_high_bytes = 0; // what the pool took from the device
  std::int64_t device_used_delta_bytes = 0;  // cudaMemGetInfo: peak used minus used before the run
};

struct RunMeasurements {
  std::string device_name;
  int device_count = 1;
  std::int64_t collective_ranks = 1;  // ranks the collectives ran over (1: not executed)
  int repetitions = 0;
  std::vector<NodeMeasurement> steps;  // by step of the schedule
  double wall_us = 0;                  // median wall time of one whole run (stream events), allocation included
  MemoryMeasurement memory;
};

// The estimate the report compares a node with: the cost model's, ignoring
// the graph's own runtime_us (`trust_graph_runtime` false). A collective is
// modelled with the stand-in's payload (the file's, except for in-place
// collectives) at the group size it ran with (`collective_ranks`), or at the
// graph's group when it did not run.
double comparable_estimate_us(const Graph& g, NodeId v, const StandIn& s, const HardwareProfile& hw, std::int64_t collective_ranks);

nlohmann::json run_report_json(const Graph& g, const ExecutionSchedule& schedule, const std::vector<StandIn>& stand_ins,
                               const HardwareProfile& hw, std::int64_t estimated_peak_bytes, const RunMeasurements& m);

}  // namespace schedlab::gpu
