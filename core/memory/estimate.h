// core/memory — the one peak-memory estimator every method and every pass
// shares (Inductor's estimate_peak_memory and estimate_peak_memory_allocfree).
//
// Semantics (docs/schedgraph-1.md "Memory semantics"): a buffer is allocated
// at its producer's step and freed after its last successor's step (or right
// after its own step when nothing reads it); graph outputs stay to the end;
// freeable inputs are live from step 0. The 2.11 release subtracts graph
// outputs at step 0 (a bug); this estimator keeps them to the end, as the
// documents and the fixtures do.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/memory/planning_info.h"

namespace schedlab {

struct BufferLifetime {
  BufId buf = kNone;
  std::int64_t size_alloc = 0;
  std::int64_t size_free = 0;
  std::int32_t start_step = 0;
  std::int32_t end_step = 0;   // last step it is live
  bool live_to_end = false;    // a graph output: never freed
};

// Lifetimes of every planned buffer under `order` (a permutation of all nodes).
std::vector<BufferLifetime> compute_memory_timeline(const Graph& g, const MemoryPlanningInfo& info, const Order& order);

struct PeakMemoryEstimate {
  std::int64_t peak = 0;
  std::int32_t peak_step = 0;        // first step reaching the peak
  std::vector<std::int64_t> curve;   // memory after each step's allocations and the previous frees; n+1 entries
};

PeakMemoryEstimate estimate_peak_memory(const Graph& g, const MemoryPlanningInfo& info, const Order& order);

struct AllocFreeEstimate {
  std::int64_t peak = 0;
  std::vector<std::int64_t> post_alloc;  // per step
  std::vector<std::int64_t> post_free;   // per step
  std::vector<std::int64_t> node_alloc;  // per NodeId: bytes allocated at its step
  std::vector<std::int64_t> node_free;   // per NodeId: bytes freed after its step
  std::vector<NodeId> last_use;          // per BufId: node after which it is freed; kNone if never
};

// Counted by core/memory/memory_tracker.h's MemoryTracker in one walk of `order`.
AllocFreeEstimate estimate_peak_memory_allocfree(const Graph& g, const MemoryPlanningInfo& info, const Order& order);
// Its peak alone, without the per-step and per-node tables.
std::int64_t allocfree_peak(const Graph& g, const MemoryPlanningInfo& info, const Order& order);

struct LiveBuffer {
  BufId buf = kNone;
  std::int64_t bytes = 0;
};

// What is alive at `step` (allocations of the step counted, its frees not),
// largest first; the bytes sum to the curve's value at that step. A
// multi_output container is reported with what its items still hold.
std::vector<LiveBuffer> live_buffers_at(const Graph& g, const MemoryPlanningInfo& info, const Order& order, std::int32_t step);

// The stacked-lifetime view of an order: bands of bytes held over steps,
// whose sum at every step t in [0, order.size()] equals
// estimate_peak_memory's curve[t] (a test walks every step of every
// checked-in graph). A plain buffer is one band over its life. A
// multi_output container allocates its items' bytes at its own step and
// each is freed after that item's last use, so the container is one band
// per item it owns (`buf` the item, `owner` the container, from the
// container's step to the item's last use) plus, when its allocation counts
// items it does not own (an item whose node reads two containers is
// allocated by both), one band of those bytes never freed (`end` =
// order.size(), `never_freed`).
struct HeldBand {
  BufId buf = kNone;    // the buffer the bytes are (an item for a container's share)
  BufId owner = kNone;  // the buffer that holds them (the container; else `buf`)
  std::int64_t bytes = 0;
  std::int32_t start = 0;  // first step held
  std::int32_t end = 0;    // last step held
  bool live_to_end = false;  // a graph output (held through the last node)
  bool never_freed = false;  // held after the last step too
};
std::vector<HeldBand> held_bands(const Graph& g, const MemoryPlanningInfo& info, const Order& order);

// True when `order` is a permutation of all nodes that meets every unmet
// dependency (weak ones included) and every mutation chain it reads through.
bool is_valid_order(const Graph& g, const MemoryPlanningInfo& info, const Order& order);
// Why `order` is not a valid schedule of every node, naming the node; "" when it is.
std::string order_violation(const Graph& g, const MemoryPlanningInfo& info, const Order& order);

}  // namespace schedlab
