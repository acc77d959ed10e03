// core/sim — a two-stream timing model of one rank, and its Chrome trace.
//
// Contract: pure functions of (Graph, order, per-node runtimes in us).
// Compute nodes run one after another on the compute stream in the order
// given. A collective is issued in order at the compute stream's current
// time (issuing costs nothing) and runs on the communication stream, one at
// a time, once issued. A node that reads a collective's output (its wait,
// or any reader when there is none) blocks the compute stream until that
// collective ends: that stall is the collective's exposed time. Collectives
// still running when compute ends expose the remainder. One process group
// (one comm stream) is modelled.
#pragma once

#include <algorithm>
#include <vector>

#include "core/cost/collective_times.h"
#include "core/graph/graph.h"
#include "core/util/adjacency.h"

namespace schedlab {

struct StreamSpan {
  NodeId node = kNone;
  double start_us = 0, end_us = 0;
  bool on_comm_stream = false;
};

struct CollectiveTiming {
  NodeId collective = kNone;
  NodeId blocked = kNone;  // the node that waited on it (kNone: nobody, it ran into the step's end)
  double issue_us = 0, start_us = 0, end_us = 0;
  double exposed_us = 0;   // compute-stream stall it caused
};

// The launch path as a third resource: the host (Inductor's Python wrapper)
// spends `host_us[v]` to launch node v's kernels, in order, starting after
// `host_call_us` less its `host_call_epilogue_us`, which the host spends
// after the last launch; a kernel starts no earlier than its launch and
// `gap_us[v]` after the compute stream is free (the GPU's launch gap). A
// collective is issued once both the host and the compute stream reach it.
// A node with `host_waits[v]` reads a device value back: the host goes on
// only once its kernels are done, so the GPU idles while the host launches
// what follows. Empty vectors: no host and no gaps (the two-stream model);
// empty `host_waits`: no node waits.
struct LaunchModel {
  std::vector<double> host_us;  // per node
  std::vector<double> gap_us;   // per node
  std::vector<char> host_waits;  // per node, or empty
  double host_call_us = 0;
  double host_call_epilogue_us = 0;  // of host_call_us; at most all of it
  // When the host starts launching, and what it spends after its last launch.
  double host_prologue_us() const { return host_call_us - host_epilogue_us(); }
  double host_epilogue_us() const { return std::clamp(host_call_epilogue_us, 0.0, host_call_us); }
};

// Contention (docs/simulation.md, "Contention"), per node v its share s
// (core/cost/collective_times.h): while v's kernel runs beside a collective
// of C us alone, the collective progresses at
// 1 / contended_comm_slowdown(s, C) = 1 / (s.comm_slowdown + s.comm_delay_us / C)
// of its own speed and the kernel at 1 / s.compute_slowdown of its own
// (processor sharing: each side's runtime is its time alone). A collective
// that becomes ready while v's kernel runs starts no earlier than
// s.start_fraction of the way through that kernel's own work; one that
// becomes ready less than s.start_latency_us before v's kernel starts is
// ready beside it (the kernel takes the SMs first). No shares: overlap is
// free (the two-stream model).
//
// A collective c that starts while a kernel runs (its start falls inside the
// kernel, or it became ready beside it and takes the SMs the kernel frees)
// has beside_wait_us[c] more work: the wait for peers that drifted apart
// while they computed. One that starts on an idle compute stream has none.
struct ContentionModel {
  std::vector<ContentionShare> shares;  // per node
  std::vector<double> beside_wait_us;   // per node, or empty: none
  bool empty() const { return shares.empty(); }
};

struct Simulation {
  double step_time_us = 0;       // when both streams (and the host) are done
  double compute_busy_us = 0;    // sum of compute runtimes
  double compute_idle_us = 0;    // step time minus compute busy time
  double comm_busy_us = 0;       // sum of collective runtimes
  double exposed_comm_us = 0;    // sum of the collectives' exposed times
  double host_busy_us = 0;       // launch path: the host's work (0 without a LaunchModel)
  std::vector<StreamSpan> spans;              // in issue order
  std::vector<CollectiveTiming> collectives;  // in issue order
};

// Throws Error when `order` is not a permutation of the nodes or the
// runtimes do not match the graph.
Simulation simulate_two_streams(const Graph& g, const Order& order, const std::vector<double>& runtime_us);
Simulation simulate_two_streams(const Graph& g, const Order& order, const std::vector<double>& runtime_us, const LaunchModel& launch,
                                const ContentionModel& contention = {});

// What the simulation reads of each node, compact: a graph's nodes are large
// and a walk along an order visits them at random, so callers that simulate
// many orders of one graph (overlap_schedule weighs each candidate) build
// this once.
struct SimulationGraph {
  std::vector<std::uint8_t> is_collective;  // per node
  // Per node: the producers of its reads (fake weak deps aside) that are
  // collectives, in the reads' order, repeats kept.
  Adjacency collective_inputs;
};
SimulationGraph make_simulation_graph(const Graph& g);
Simulation simulate_two_streams(const Graph& g, const SimulationGraph& sg, const Order& order, const std::vector<double>& runtime_us,
                                const LaunchModel& launch = {}, const ContentionModel& contention = {});

// Written as Chrome trace events and as a plan's `simulation` section by
// core/io/plan_writer.h.

}  // namespace schedlab
