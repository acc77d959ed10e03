// Measured collective times and how compute and collectives slow each other
// (docs/cost-model.md, "Collectives" and "Contention").
//
// A profile may carry curves of collective time against message size,
// measured per operation and group size inside one node
// (python/dist/comm_sweep.py, fitted by scripts/fit-comm.py), and a
// contention law: per kernel class, how much slower a collective runs while a
// kernel of that class runs beside it, and how much slower that kernel runs.
// Plain data and pure functions; profiles are read by core/io/profiles.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/cost/kernel_class.h"
#include "core/graph/graph.h"

namespace schedlab {

struct CollectiveTimes {
  std::string source;  // where the sweeps ran
  // The host's cost to issue one collective and its wait on a real NCCL
  // group (the sweep's median; the fitted time model's host_us_per_collective
  // comes from the zoo's fake process group, which costs the host less).
  double host_us_per_issue = 0;
  // op -> group size -> (size in bytes, us), sizes ascending. Size is the
  // rank's larger buffer: all_gather's output, reduce_scatter's input, the
  // tensor otherwise.
  std::map<CollectiveOp, std::map<std::int64_t, std::vector<std::pair<double, double>>>> curves;
  // op -> group size -> a rank's mean wait, in µs, for the last rank of the
  // group to arrive at one collective of a real step (arrival skew: ranks of
  // equal work drift apart between collectives; python/dist/reps.py
  // --peer-waits measures it, scripts/fit-peer-waits.py fits it). The sweeps
  // behind the curves align the ranks, so the curves hold none of it;
  // measured_collective_us adds it at the group sizes measured, none at others.
  std::map<CollectiveOp, std::map<std::int64_t, double>> peer_wait_us;
  // op -> group size -> what a collective that starts beside a running
  // kernel waits for its peers beyond peer_wait_us, in µs (the ranks drift
  // further apart while they compute than while they wait on a collective:
  // reps.py --peer-waits, "beside compute" against "exposed"). Only the
  // contended loop of core/sim knows what runs beside a collective; it adds
  // this to the collective's work when it starts beside a kernel
  // (ContentionModel::beside_wait_us), at the group sizes measured.
  std::map<CollectiveOp, std::map<std::int64_t, double>> peer_wait_beside_us;
};

// The extra wait of a collective that starts beside a kernel
// (CollectiveTimes::peer_wait_beside_us) at this very group size; 0 where
// none was measured.
double peer_wait_beside_us(const CollectiveTimes& t, CollectiveOp op, std::int64_t group_size);

// The curve's size for a graph payload (core/cost collective_payload: output
// bytes, so reduce_scatter's is its shard).
double collective_curve_size(CollectiveOp op, std::int64_t payload_bytes, std::int64_t group_size);

// The time of one collective from the curves: log-log linear between swept
// sizes, the smallest size's time below the sweep, the last segment's
// per-byte cost above it. A group size never swept takes the nearest swept
// one, scaled by the ring algorithm's bus factor (all_reduce 2(n-1)/n,
// all_gather / reduce_scatter / all_to_all (n-1)/n, broadcast 1). Plus the
// profile's peer wait of the operation at this very group size, if any.
// nullopt when the profile has no curve of this operation.
std::optional<double> measured_collective_us(const CollectiveTimes& t, CollectiveOp op, std::int64_t payload_bytes,
                                             std::int64_t group_size);

// Both sides of an overlap: while a kernel of a class runs beside a
// collective, the collective takes `comm_slowdown` times its time alone plus
// `comm_delay_us` (contended_comm_slowdown) and the kernel
// `compute_slowdown` times its own (core/sim shares the interval at those
// rates).
struct ContentionShare {
  double comm_slowdown = 1.0;
  double compute_slowdown = 1.0;
  // A collective that becomes ready while a kernel of the class runs starts
  // this far into it (0: at once; 1: at its end): the NCCL kernel gets SMs
  // only as the kernel's last wave drains them.
  double start_fraction = 0.0;
  // A fixed cost on top of comm_slowdown, per collective wholly beside
  // kernels of the class: a collective's slowdown falls with its size.
  double comm_delay_us = 0.0;
  // The law's start latency (ContentionLaw::start_latency_us), carried per
  // node: a collective that becomes ready less than this before a kernel of
  // the class starts is ready beside it (the kernel takes the SMs first).
  double start_latency_us = 0.0;
};

struct ContentionLaw {
  std::map<KernelClass, ContentionShare> classes;  // the classes the sweep measured
  // How long after it becomes ready an NCCL kernel starts on an idle GPU
  // (0: at once, the law before the sweeps measured it).
  double start_latency_us = 0.0;
};

// The rate at which a collective of `comm_alone_us` (its whole time alone)
// progresses beside a kernel of share `s`: comm_slowdown + comm_delay_us /
// comm_alone_us (a collective of no time: comm_slowdown). The one place the
// contended collective's time is computed: core/sim's contended loop and
// core/measure's decontention both call it.
double contended_comm_slowdown(const ContentionShare& s, double comm_alone_us);

// The share for a class: its own, else the measured class it resembles
// (attention backward -> attention, convolution backward -> convolution,
// copies and other externs -> triton_pointwise: memory-bound), else none.
// With the law's start latency as its `start_latency_us`; a class with no
// share (collectives, nodes that launch nothing) contends with nothing.
ContentionShare contention_share(const ContentionLaw& law, KernelClass c);

}  // namespace schedlab
