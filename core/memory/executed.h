// core/memory — memory as executed: what Inductor's generated code really
// allocates for an order, beside the scheduler's estimate (estimate.h), which
// stays exactly as Inductor decides by it (docs/memory-as-executed.md).
//
// Contract: a pure function of (Graph, order, observed sizes). It replays the
// wrapper's allocation lines node by node:
// - outputs are allocated before the node's kernel, in output order; layouts
//   none and mutations allocate nothing; a multi-output kernel allocates its
//   items itself, at its own step. A buffer allocates its storage, which a
//   padded layout makes larger than numel x itemsize (from its strides, else
//   the affine index its kernel writes it through); the reuse pool and the
//   in-place match compare storages too;
// - in-place reuse (scheduler.py decide_inplace_update / can_inplace,
//   wrapper.py can_reuse / can_match_buffer_size): a pointwise or reduction
//   output takes over a buffer its own operation reads (inside a fused node,
//   per operation, when the file has `operations`) through one identical
//   index, when no other operation still reads it, the dtype matches and the
//   output is 95..100 % of its size; of the graph inputs only freeable ones
//   (donated buffers) can be taken over;
// - a Triton kernel's output read by nothing outside the kernel is never
//   allocated (remove_kernel_local_buffers), unless its in-place chain
//   reaches a buffer that is;
// - the wrapper's reuse pool (MemoryPlanningState): a buffer freed after its
//   last use is kept under (dtype, bytes); the next allocation of the same
//   key takes the last one freed (`# reuse`) when that was at the step just
//   before or does not lift the scheduler's memory curve over its peak
//   (should_reuse_buffer); a freed buffer nobody takes is released where it
//   was freed. Buffers allocated by extern kernels themselves (fallbacks,
//   convolution) never take from the pool;
// - a kernel's workspace is allocated and released at its step, after its
//   outputs: the node's observed `workspace_bytes` where the graph has it
//   (measured on the GPU), else a convolution backward's operand copies
//   (cuDNN's layouts) or an attention backward's accumulators;
// - frees follow the node's kernel, in buffer-name order; graph outputs and
//   inputs the graph does not own stay.
// The sequence then runs through the caching allocator (core/alloc) twice:
// the allocated peak from a cache that starts with the freeable inputs, the
// held ones (parameters) in segments of their own; the reserved peak from a
// cache holding every input (file order), whose free tails the call fills.
// Given a recorded start state (the measuring process's cache at the
// call's start, schedmeasured/1 memory.allocator_at_start), both come from
// one replay from that cache instead: the inputs are among its allocated
// blocks, so nothing is allocated for them, and the freeable ones count in
// the peak with the storages their blocks hold (a view of a larger storage
// holds all of it) (accuracy only: a plan cannot know its process's cache
// and keeps the cold start).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/alloc/caching_allocator.h"
#include "core/graph/graph.h"
#include "core/memory/estimate.h"

namespace schedlab {

struct ExecutedEvent {
  enum class Kind : std::uint8_t { Allocate, Free, Reuse };  // Reuse: `buf` takes over `donor`'s storage
  Kind kind = Kind::Allocate;
  BufId buf = kNone;        // kNone: a kernel's transient workspace (an Allocate, then its Free)
  BufId donor = kNone;
  NodeId at = kNone;        // the node at whose step it happens
  std::int64_t bytes = 0;   // requested bytes (Allocate/Free)
};

// Where a node's kernel workspace comes from (plan: predicted.workspaces).
enum class WorkspaceSource : std::uint8_t {
  Observed,       // the node's `workspace_bytes`, observed on the GPU the graph was measured on
  OperandCopies,  // a convolution backward without it: its operands' bytes (cuDNN's layout copies)
  AttentionLaw,   // an attention backward: its accumulators, from the shape, per backend
  InputTransform, // a forward convolution on input channels cuDNN's kernels do not take (not a multiple of 8): a copy of its input
};
std::string_view to_string(WorkspaceSource s);

struct KernelWorkspace {
  NodeId node = kNone;
  std::string name;  // the node's
  std::int64_t bytes = 0;
  WorkspaceSource source = WorkspaceSource::Observed;
};

// The allocator's side of one event, from the replay that gives the
// allocated peak (from the cold start: the cache holding the freeable
// inputs, the held ones apart; else the recorded start), for comparing the
// model with a measured call's allocator history event by event.
struct EventBlock {
  std::int64_t address = -1;  // the simulated block's start (Allocate: the one it got; Free: the one it released; Reuse: the donor's); -1: none
  std::int64_t block_bytes = 0;
  std::int64_t allocated_after = 0, reserved_after = 0;  // the allocator's totals after the event
};

struct ExecutedMemory {
  std::vector<ExecutedEvent> events;  // in execution order
  std::vector<EventBlock> blocks;     // one per event
  std::int64_t peak_bytes = 0;        // allocator's allocated peak over what was live before the call, plus freeable inputs
  std::int64_t reserved_bytes = 0;    // allocator's reserved peak (segments holding the inputs included)
  std::int64_t allocated_before_bytes = 0, reserved_before_bytes = 0;  // the inputs, as the reserved replay holds them
  NodeId peak_node = kNone;           // the node at whose step the peak is first reached
  std::int32_t inplace_reuses = 0, pool_reuses = 0;
  // Every node priced with a workspace, in execution order: the observed
  // ones (0 bytes included) and those a rule gave bytes.
  std::vector<KernelWorkspace> workspaces;
  // Per graph input (BufId < num_inputs): the storage bytes the replays hold
  // it in (0: nothing), for replaying `events` again (capped.h).
  std::vector<std::int64_t> input_storage_bytes;
};

// `observed_bytes`: sizes of buffers whose size is data-dependent (by name),
// as measured; they replace the file's bytes. `scheduler_estimate`: the
// scheduler's own estimate over `order` (the reuse pool's peak check reads
// it) when the caller has it already, as a plan does; else computed here.
// It must equal estimate_peak_memory(g, compute_planning_info(g, order),
// order), which the info of any order gives unless
// freeable_input_sizes_depend_on_order(g). Throws Error when `order` is not
// a permutation of the nodes. `start_state`: the cache to start from, or
// null for the cold start; throws Error when a recorded segment is malformed.
ExecutedMemory estimate_memory_as_executed(const Graph& g, const Order& order,
                                           const std::map<std::string, std::int64_t>& observed_bytes = {},
                                           const PeakMemoryEstimate* scheduler_estimate = nullptr,
                                           const AllocatorState* start_state = nullptr);

}  // namespace schedlab
