// core/measure — fitting a hardware profile's time model to measured graphs
// (docs/cost-model.md, "Fitting"). Deterministic: the same files give the
// same profile, byte for byte.
//
// - Per kernel class, the law's factors (core/cost/time_model.h: one per term,
//   each multiplying a feature of core/cost/law_features.h) are the
//   non-negative least-squares fit over the class's measured nodes (a node's
//   time: the sum of the kernels mapped to it), weighted by 1/t: the squared
//   relative error times the time, between absolute error (the largest
//   kernels decide everything) and relative error (the tiniest, mostly launch
//   noise, do). The base terms (fixed, compute, f32 compute, memory, spill)
//   are always fitted; a term for a specific effect (tiles, alignment,
//   layouts, convolution families, attention dropout) that fewer than kMinTermSupport of the
//   class's nodes exercise is not fitted to those few nodes, which would
//   generalize to nothing: it takes the factor of the sibling profile when
//   one is given (a GPU of the same chip: the H200 for the H100), else 0.
//   kernels_per_node is the class's mean launch count.
// - The launch gap: the median idle time between back-to-back kernels (the
//   next one already launched: start within `kBackToBackUs` of the previous
//   end). The CUDA-graph gap: the median of (wall - kernel time) / kernels
//   over graphs measured under CUDA graphs.
// - The host: host_call_us, host_us_per_kernel (Triton launches),
//   host_us_per_convolution, host_us_per_convolution_backward (cuDNN calls),
//   host_us_per_collective (functional collective calls),
//   host_us_per_collective_kernel (per device kernel those calls launched:
//   the fake process group's copies), host_us_per_item (per
//   multi-output item) and host_us_per_extern (other extern
//   calls) are a non-negative least squares fit of each call's measured
//   host time (else its wall time) on its launch counts, weighted by
//   relative error.
// - A class nobody measured, or fewer than kMinTermSupport of whose nodes
//   were, borrows a related class's law (attention and
//   convolution from gemm, backward classes from their forward, copy and
//   extern from triton_pointwise); the
//   profile says which under "borrowed".
#pragma once

#include <string>
#include <vector>

#include "core/cost/cost_model.h"
#include "core/cost/law_features.h"
#include "core/measure/measured.h"

namespace schedlab {

// The order a measured call ran in: Inductor's after its memory reordering
// (reorder_for_peak_memory with the default methods, reproduced exactly),
// not the graph file's order.
Order order_as_run(const Graph& g);
struct NodeSample {
  KernelClass cls = KernelClass::None;
  NodeId node = kNone;
  LawFeatures features{};  // on the base profile, over the measured GPU's SMs and L2
  double measured_us = 0;  // sum of its kernels' durations
  int kernels = 0;
};
// `sm_count`, `l2_bytes`: the measured GPU's SMs (the tile terms) and L2
// size (the memory term's split).
std::vector<NodeSample> node_samples(const MeasuredCase& c, const HardwareProfile& base, int sm_count, std::int64_t l2_bytes);

inline constexpr int kMinTermSupport = 5;
// `sibling`: the law whose factors the terms this data cannot fit take
// (nullptr: they are 0).
ClassLaw fit_class_law(const std::vector<NodeSample>& samples, const ClassLaw* sibling = nullptr);

// Non-negative least squares (Lawson and Hanson's active-set method):
// x >= 0 minimizing sum_i w_i (row_i . x - y_i)^2. Deterministic.
std::vector<double> nonnegative_least_squares(const std::vector<std::vector<double>>& rows, const std::vector<double>& y,
                                              const std::vector<double>& w);

struct ProfileFit {
  HardwareProfile profile;
  std::vector<std::string> borrowed;  // "attention<-gemm", ...
  std::size_t cases = 0, samples = 0;
};
// `base` gives the datasheet figures (peaks, DRAM, links); the result is it
// plus the fitted time model, named `name`. `sibling`: a fitted profile of
// a GPU of the same chip whose factors the terms this data cannot fit take
// (nullptr: none).
ProfileFit fit_profile(const std::vector<MeasuredCase>& cases, const HardwareProfile& base, const std::string& name,
                       const HardwareProfile* sibling = nullptr);

}  // namespace schedlab
