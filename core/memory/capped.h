// core/memory — memory as executed under a cap on the caching allocator
// (torch.cuda.set_per_process_memory_fraction, or the device itself): whether
// a step runs, and the smallest cap it runs under ("will it fit?",
// core/predict/device_fit).
//
// Contract: a pure function of the graph and memory as executed's events.
// The caching allocator (core/alloc) replays the events under the cap from
// the cache the reserved replay starts from (every input, file order), after
// `resident_bytes` allocated and held (PyTorch's cuBLAS workspace, taken at
// the first matmul and kept). Under a cap the allocator releases its wholly
// free cached segments before it refuses a new one, so a step runs under
// caps well below its uncapped reserved peak: how far depends on which
// segments its live blocks pin. A refused request is the out-of-memory
// error. Without `workspaces`, kernel workspaces are left out: cuDNN and
// cuBLASLt try algorithms that need less when a workspace allocation fails
// (PyTorch catches the error and takes the next plan), so a step's
// workspaces may shrink to nothing under a tight cap.
#pragma once

#include <cstdint>

#include "core/graph/graph.h"
#include "core/memory/executed.h"

namespace schedlab {

struct CapReplayOptions {
  std::int64_t resident_bytes = 0;  // allocated before the step and held through it
  bool workspaces = true;           // replay the kernels' workspaces
};

struct CappedRun {
  bool ran = true;
  NodeId oom_at = kNone;               // the node whose allocation was refused
  std::int64_t oom_request_bytes = 0;  // the refused request
  std::int64_t peak_reserved_bytes = 0;
};

// `cap_bytes` 0: no cap.
CappedRun run_under_cap(const Graph& g, const ExecutedMemory& ex, std::int64_t cap_bytes, const CapReplayOptions& o);

// The smallest cap under which run_under_cap runs: a multiple of 2 MiB (every
// segment is one), found by bisection below the uncapped reserved peak (which
// always runs). Whether a step runs is monotone in the cap in practice, not
// by construction (a release leaves other holes); bisection reports the
// boundary it finds, in O(log(peak / 2 MiB)) replays.
std::int64_t smallest_running_cap(const Graph& g, const ExecutedMemory& ex, const CapReplayOptions& o);

}  // namespace schedlab
