// native-cuda/host — the GPU-free half of the CUDA executor: what to allocate,
// run and free at each step (this file), which stand-in kernel runs each node
// (stand_in.h), how calibration measurements become a hardware profile
// (calibration.h) and how a run is reported (run_report.h). Everything here
// is plain C++ that the normal suite tests without a GPU; native-cuda/src/
// only turns these plans into CUDA, cuBLAS and NCCL calls.
//
// This file: an order -> the device allocations that reproduce core/memory's
// estimate exactly. Each planned buffer that owns storage becomes one device
// block, allocated before its producer's step and released after its last
// use (graph outputs: after the last step), straight from
// compute_memory_timeline. A multi_output container owns no block itself: it
// allocates its items' storage at its own step and each item is released on
// its own schedule (the estimator's (sum, 0) / (0, b) pairs). Buffers that
// own no storage (mutations, layout "none") are views.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/memory/planning_info.h"
#include "core/plan/plan.h"

namespace schedlab::gpu {

struct DeviceBlock {
  BufId buf = kNone;             // the buffer whose storage this is (an item, for a container's storage)
  std::int64_t bytes = 0;
  std::int32_t alloc_step = 0;   // allocated before this step runs
  std::int32_t last_step = 0;    // released after this step (the last step when live_to_end)
  bool live_to_end = false;      // a graph output: released after the whole run
};

struct ExecutionStep {
  NodeId node = kNone;
  std::vector<std::int32_t> allocate;  // block indices, before the node runs
  std::vector<std::int32_t> release;   // block indices, after the node ran
};

// A planned buffer whose (alloc, free) sizes no allocation pattern can
// reproduce (e.g. a multi_output item whose container allocates nothing):
// it gets no block, so the measured peak can differ from the estimate by it.
struct UnbackedBuffer {
  BufId buf = kNone;
  std::int64_t size_alloc = 0, size_free = 0;
};

struct ExecutionSchedule {
  Order order;
  std::vector<DeviceBlock> blocks;
  std::vector<ExecutionStep> steps;              // one per order entry
  std::vector<std::int32_t> release_at_end;      // live_to_end blocks
  std::vector<std::int64_t> live_bytes;          // while step t runs: its allocations done, its releases not
  std::int64_t peak_bytes = 0;
  std::int32_t peak_step = 0;                    // first step reaching the peak
  std::vector<UnbackedBuffer> unbacked;
};

// `info` must come from compute_planning_info(g, baseline) as the plan's
// estimate does; `order` must be a permutation of all nodes (Error otherwise).
ExecutionSchedule build_execution_schedule(const Graph& g, const MemoryPlanningInfo& info, const Order& order);

// What an executor run executes, planned as every front end plans: run_plan
// (core/plan) on the graph as it is (no fusion, no comm passes) with
// `method` alone as the memory method ("baseline", or a core/memory method:
// "lpmf", "bfs", "dfs") on `hw`; with a schedplan/1 document's text, that
// plan's `order` instead, its peak estimated with the plan's planning info.
// Throws Error naming the unknown node or method, or a node missing from the plan.
struct ExecutionPlan {
  PlanResult plan;
  Order order;                     // what runs
  std::int64_t estimated_peak = 0;  // the memory methods' estimator over `order`
};
ExecutionPlan plan_execution(std::shared_ptr<const Graph> g, const HardwareProfile& hw, std::string_view method,
                             std::string_view plan_json_text = {});
Order order_from_plan_json(const Graph& g, std::string_view plan_json_text);

}  // namespace schedlab::gpu
