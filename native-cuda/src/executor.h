// native-cuda/src — runs an ExecutionSchedule on the GPUs of a GpuRuntime:
// allocates and frees each device block exactly at the steps the schedule
// names (stream-ordered, from a memory pool of its own), runs each node's
// stand-in, and times every node with CUDA events.
//
// Streams (`overlap`): compute on rank 0's compute stream; collectives on its
// communication stream, after the compute before them, and a wait makes the
// compute stream wait for its collective, as Inductor's runtime does. With
// `overlap` off everything runs on the compute stream, one after the other,
// so each node's time is its own. The first run is the memory pass: it
// synchronizes after every step to read cudaMemGetInfo; then `warmup`
// untimed runs and `repetitions` timed ones (medians reported).
#pragma once

#include <vector>

#include "core/graph/graph.h"
#include "native-cuda/host/execution_schedule.h"
#include "native-cuda/host/run_report.h"
#include "native-cuda/host/stand_in.h"
#include "native-cuda/src/gpu_runtime.h"

namespace schedlab::gpu {

struct ExecuteOptions {
  int warmup = 3;
  int repetitions = 10;
  bool overlap = true;
};

RunMeasurements execute_schedule(GpuRuntime& rt, const Graph& g, const ExecutionSchedule& schedule,
                                 const std::vector<StandIn>& stand_ins, const ExecuteOptions& opts);

}  // namespace schedlab::gpu
