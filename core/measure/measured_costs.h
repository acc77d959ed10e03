// core/measure — measured costs fed back (`plan --measured-trace`): the GPU
// kernels of real runs of a graph (torch.profiler Chrome traces, one file per
// rank, core/io/trace_reader.h reads them), mapped to the graph's nodes, and
// the pricing (core/cost/pricing.h) with their measured times in the
// model's place. The plan's `pricing` stage applies it (core/plan), so that
// plan, simulate and simulate --compare all see the same times.
//
// Contract:
// - map_measured_traces is a pure function of (Graph, Pricing, contention
//   law, traces). A trace is the kernels of a run of the graph's node order
//   (its baseline: the order the file lists), possibly inside a longer step
//   (a training step's forward and backward graphs in one trace): the
//   graph's compute nodes are aligned to the step's compute kernels, and its
//   collectives to the step's NCCL kernels in issue order per kind
//   (AllGather, ReduceScatter, AllReduce, SendRecv for all_to_all,
//   Broadcast), each by a fitting alignment (a longest common subsequence
//   of kernel classes that may start and end anywhere in the step), so an
//   extra kernel (a memset before a cuBLAS GEMM) or a missing one shifts
//   nothing else. A node's measured time is the median over the steps of
//   every trace of its kernels' time (its first kernel and the following
//   unmapped kernels of the same class: an attention backward's several).
// - Contention (issue 26, item 3): a kernel that ran beside another
//   (a collective beside a compute kernel) ran slower than alone. The
//   measured time is taken back to its time alone with the profile's
//   contention law (core/cost/collective_times.h: the overlapped part of a
//   collective progressed at 1/contended_comm_slowdown of its speed, its
//   priced time alone setting the delay's share, that of a compute kernel
//   at 1/compute_slowdown), so that the simulation, which applies the
//   same law to the intervals that overlap in the order it simulates,
//   reproduces the measured times for the order that ran and predicts those
//   of another order. Without a contention law the measured times are kept.
// - Nodes no kernel maps to are interpolated by size: an unmapped node is
//   scaled by the measured / predicted ratio of the mapped node of its
//   kernel class whose predicted time is nearest its own (log scale; the
//   prediction already holds each node's sizes and FLOPs, so the ratio
//   carries the measured speed over to it, and a ratio measured on small,
//   latency-bound kernels does not scale a large one); a class without
//   mapped nodes keeps the model's price.
// - apply_measured_costs sets both the calibrated times (what the
//   simulation and the prediction time by) and the comm passes' times
//   (pass_us: the passes plan with the measured costs), each interpolated by
//   its own ratio.
//
// The twin of the kernel-name classes is web/js/measured.js kernelClass and
// python/schedlab_export/measure.py _kernel_class; of the step splitting,
// python/dist/trace_analysis.py split_steps and web/js/measured.js rawSteps.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cost/collective_times.h"
#include "core/cost/kernel_class.h"
#include "core/cost/pricing.h"
#include "core/graph/graph.h"

namespace schedlab {

// One GPU kernel (or copy, or memset) of a measured step.
struct TraceKernel {
  std::string name;
  double start_us = 0, duration_us = 0;
  bool comm = false;  // an NCCL kernel (its own stream)
};

// A trace file's kernels, split into the steps it profiled.
struct MeasuredTrace {
  std::string path;                             // for errors and the report
  std::string format;                           // "torch.profiler" | "lanes" (python/dist's measured trace)
  std::vector<std::vector<TraceKernel>> steps;  // each by start time
};

// The class token a kernel's name maps to: "gemm", "attention",
// "convolution", "triton", "copy" (memcpy), "memset" (never mapped),
// "other"; NCCL kernels "nccl:<op>" with op one of CollectiveOp's names
// (to_string), or "nccl:other".
std::string kernel_token(std::string_view kernel_name);

struct MeasuredClassRatio {
  KernelClass kernel_class = KernelClass::None;
  int mapped = 0;          // nodes of the class with a measured time
  int interpolated = 0;    // unmapped nodes of the class scaled by the ratio
  double ratio = 1.0;      // median measured / calibrated over the mapped ones (reported; interpolation takes the nearest in size)
  double pass_ratio = 1.0; // median measured / pass_us (what the comm passes read)
};

// A node with a measured time, beside what the model priced it at: the
// plan's per-node report (schedplan/1 `measured_costs.nodes`), from which
// a fit of a law reads measured steps (scripts/fit-sustained-rate.py).
struct MeasuredNode {
  std::string name;
  KernelClass kernel_class = KernelClass::None;  // its finest class (classify_kernel)
  double measured_us = 0;                        // alone (contention taken back)
  double priced_us = 0;                          // the calibrated model's time, before feedback
};

struct MeasuredCosts {
  std::vector<std::string> traces;  // the files, as given
  int steps = 0;                    // steps read over every trace
  std::vector<double> measured_us;  // per node: its measured time alone (median), negative when unmapped
  int compute_nodes = 0, mapped_compute_nodes = 0;  // nodes that launch kernels, collectives aside
  int collectives = 0, mapped_collectives = 0;
  std::int64_t kernels = 0, unmapped_kernels = 0;   // over every step (memsets counted as unmapped)
  double unmapped_kernel_us = 0;                    // their time, over every step
  // The median over steps of the span from the first kernel mapped to the
  // graph to the end of the last: the graph's own time in the measured step
  // (what a step's other graphs, its eager kernels and the idle time
  // between them leave out).
  double span_us = 0;
  double decontended_us = 0;  // the measured time taken back to alone by the contention law (per step, median over steps)
  std::vector<MeasuredClassRatio> classes;  // per base class with mapped nodes, in KernelClass order
  std::vector<MeasuredNode> nodes;          // the mapped nodes, in node order
  bool mapped(NodeId v) const { return measured_us[static_cast<std::size_t>(v)] >= 0; }
};

// Throws Error "<trace path>: ..." for a trace none of whose kernels maps
// to the graph, or whose steps are too large to align (more than 2^26
// node × kernel cells).
MeasuredCosts map_measured_traces(const Graph& g, const Pricing& p, const std::optional<ContentionLaw>& contention,
                                  const std::vector<MeasuredTrace>& traces);

// The measured times of `m` (mapped on the graph `from`, the one whose order
// ran) carried to the graph `to` (another order of the same nodes: the
// graph a plan reorders) by node name, with `to`'s counts and ratios
// against its pricing `p`. Throws Error when no node of `to` has a measured
// time.
MeasuredCosts carry_measured_costs(const MeasuredCosts& m, const Graph& from, const Graph& to, const Pricing& p);

// `p` with the measured times in the model's place (calibrated_us and
// pass_us; pass_sources "measured" or "interpolated") and `measured` set.
void apply_measured_costs(Pricing& p, const MeasuredCosts& m);

}  // namespace schedlab
