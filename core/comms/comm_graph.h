// core/comms — communication/computation overlap: Inductor's comm passes
// (comms.py, PyTorch 2.11), an overlap scheduler of our own, and a generator
// of distributed test graphs.
//
// Contract: every pass is a pure function (CommGraph, order, knobs) ->
// (new order, per-collective report); none mutates the Graph. A CommGraph is
// the dependency view the passes share, built once per graph: node roles
// (collective / wait / gemm-like), the buffers each node waits on (Inductor's
// `unmet_dependencies`, including fake weak deps, which order but carry no
// data), the runtimes, and the fake deps earlier passes added
// (decide_global_ordering_of_comms). One rank and one process group are
// modelled: collectives of different process groups are not told apart.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "core/graph/graph.h"
#include "core/memory/planning_info.h"
#include "core/util/adjacency.h"

namespace schedlab {

// A dependency a pass adds: `node` must run after `buf`'s producer, without
// keeping `buf` alive. By default a fake weak one, which only orders
// (Inductor's WeakDep(is_fake=True): decide_global_ordering_of_comms).
// `data`: it stands for a real read that no node of the graph has yet (a
// bucket's merged collective reads every member's input, bucketing.cpp
// bucket_unit_deps), so every later pass keeps it.
struct FakeDep {
  NodeId node = kNone;
  BufId buf = kNone;
  bool data = false;
};

enum NodeRole : std::uint8_t {
  kRoleCollective = 1,       // contains_collective
  kRoleAsyncCollective = 2,  // a collective that is not synchronous (not shard_dim_alltoall)
  kRoleWait = 4,             // contains_wait
  kRoleGemmLike = 8,         // extern_kernels.* or flash attention (contains_gemm_like)
  kRoleReadsCollective = 16, // has a data dependency on some collective's output
};

struct CollectiveBucket;  // core/comms/bucketing.h
struct Simulation;        // core/sim/simulate.h

// Prices of collectives and copies that are no node of the graph yet (a
// bucket merges collectives): the plan fills them from the hardware profile
// (core/plan comms stage: the profile's collective model and the roofline of
// a copy), tests with their own laws.
struct CollectivePrices {
  // One collective of `payload_bytes` (the format's payload: output bytes).
  std::function<double(CollectiveOp, std::int64_t payload_bytes, std::int64_t group_size)> collective_us;
  // A copy kernel that reads `bytes` and writes as many.
  std::function<double(std::int64_t bytes, std::string_view dtype)> copy_us;
  // The simulated step of `order` with `buckets` in their members' place, as
  // the plan simulates its final order (its pricing, launch path and
  // contention); empty: the two-stream simulation of the comm graph's
  // runtimes.
  std::function<double(const Order& order, const std::vector<CollectiveBucket>& buckets)> step_us;
  // The whole simulation of `order` as step_us prices it without buckets
  // (which collective stalled which node: defer_stalled_compute); empty:
  // the two-stream simulation of the comm graph's runtimes.
  std::function<Simulation(const Order& order)> simulation;
};

struct CommGraph {
  const Graph* graph = nullptr;
  std::vector<std::uint8_t> role;   // per node, NodeRole bits
  std::vector<double> runtime_us;   // per node, as given (no multipliers)
  // Per buffer: graph->buffers[b].producer, flat: the passes read it at
  // every step, and through the graph's buffers each read is a cache miss.
  std::vector<NodeId> producers;
  // Per node: distinct buffers produced by *other* nodes that it depends on
  // through any dependency (fake ones and pass-added ones included), in
  // first-dependency order. These decide readiness.
  Adjacency unmet_bufs;
  // Per node: the non-fake subset (Inductor's node_dep_sets: data deps).
  Adjacency data_bufs;
  // Per buffer: nodes with an unmet dependency on it (any kind).
  Adjacency buffer_users;
  std::vector<FakeDep> added_fake_deps;
  std::shared_ptr<const CollectivePrices> prices;  // null: no prices (bucketing refuses to run)
  // The memory planning info of one order of the graph (run_comm_passes:
  // its input's), which every pass re-plans for its own order
  // (planning_info_of) instead of planning from scratch; null: none.
  std::shared_ptr<const MemoryPlanningInfo> planning;

  std::int32_t num_nodes() const { return static_cast<std::int32_t>(role.size()); }
  bool is_collective(NodeId v) const { return role[v] & kRoleCollective; }
  bool is_async_collective(NodeId v) const { return role[v] & kRoleAsyncCollective; }
  bool is_wait(NodeId v) const { return role[v] & kRoleWait; }
  bool is_gemm_like(NodeId v) const { return role[v] & kRoleGemmLike; }
  NodeId producer(BufId b) const { return producers[b]; }
  // True when `v` has a data (non-fake) dependency on an output of `producer_node`.
  bool reads_output_of(NodeId v, NodeId producer_node) const;
};

// `runtime_us` is indexed by NodeId (the plan fills it from the nodes'
// `runtime_us` or the cost model). `extra_fake_deps` are deps added by
// earlier passes. Throws Error on a size mismatch or a dep naming a buffer
// no node produces.
CommGraph build_comm_graph(const Graph& g, std::vector<double> runtime_us, std::vector<FakeDep> extra_fake_deps = {});

// Per node, the lowest index (among collectives, counted in `order`) of a
// collective it is an ancestor of; a collective gets its own index; nodes
// that block no collective get INT32_MAX. Ancestry is Inductor's: from the
// graph's `operations` when present (a fused node's ancestors are the union
// of its members' ancestors minus its members), else from the node graph.
// Throws Error when a member names no operation or the operations form a cycle.
std::vector<std::int32_t> lowest_blocked_collective(const CommGraph& cg, const Order& order);

// compute_planning_info(graph, order), by re-planning cg.planning where the
// comm graph holds one (planning_info_for_order: the same info, without
// sorting the uses again).
MemoryPlanningInfo planning_info_of(const CommGraph& cg, const Order& order);

// Runtimes the iterative passes use: runtime times the comm or non-comm multiplier.
std::vector<double> scaled_runtimes(const CommGraph& cg, double comm_mult, double non_comm_mult);

}  // namespace schedlab
