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
// - The host: one figure per host term (core/cost/host_terms.def: the call,
//   its inputs, Triton launches, convolution and convolution backward calls,
//   collective calls and the device kernels they launched, multi-output
//   items, other extern calls, fresh allocations), a non-negative least
//   squares fit of each call's measured host time (else its wall time) on
//   its counts per term, weighted by relative error.
// - A class nobody measured, or fewer than kMinTermSupport of whose nodes
//   were, borrows a related class's law (attention and
//   convolution from gemm, backward classes from their forward, copy and
//   extern from triton_pointwise); the
//   profile says which under "borrowed".
#pragma once

#include <map>
#include <optional>
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
  KernelClass cls = KernelClass::None;  // its finest class (classify_kernel); gather_samples files it under the class it fits
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
// (nullptr: they are 0); `sibling_terms`: terms that take the sibling's
// factor however many nodes exercise them (a term whose sweep was measured
// on the sibling's GPU alone: this data exercises it without telling it
// apart from the base terms). `parent`: a finer class's law parent, fitted
// on more data: a base term beyond the required ones (law_terms.def: f32
// compute, spill) that fewer than kMinTermSupport of this class's nodes
// exercise takes the parent's factor instead of a free fit on those few
// (two 1-D convolutions beyond the L2 gave convolution_1d a spill factor
// of 39, which priced held-out ones with large operands at 2x).
ClassLaw fit_class_law(const std::vector<NodeSample>& samples, const ClassLaw* sibling = nullptr,
                       const std::vector<LawTerm>& sibling_terms = {}, const ClassLaw* parent = nullptr);

// Non-negative least squares (Lawson and Hanson's active-set method):
// x >= 0 minimizing sum_i w_i (row_i . x - y_i)^2. Deterministic.
std::vector<double> nonnegative_least_squares(const std::vector<std::vector<double>>& rows, const std::vector<double>& y,
                                              const std::vector<double>& w);

// The fit's four jobs, in the order fit_profile runs them.
//
// 1. The samples: the GPU the files were measured on (its SMs, which the
// tile terms quantize over, and its L2 size, the memory term's split; files
// that do not say are from H100s and H200s, 50 MiB of L2), and every node
// with measured kernels, by class.
struct MeasuredGpu {
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
};
MeasuredGpu measured_gpu(const std::vector<MeasuredCase>& cases);
// Which finer classes (kernel_class.h: below None) get a law of their own
// when they have kMinTermSupport samples or more; the samples of the
// others join their law parent's (the law that prices them). By default
// the classes whose law parent is not their base class (indexing, scatter,
// extern_memory: no zoo graph runs them), so that a fit of the zoo's files
// is the fit it was; `all_fine_classes()` fits every one with its sweeps.
std::vector<KernelClass> default_own_law_classes();
std::vector<KernelClass> all_fine_classes();
std::map<KernelClass, std::vector<NodeSample>> gather_samples(const std::vector<MeasuredCase>& cases, const HardwareProfile& base,
                                                              const MeasuredGpu& gpu,
                                                              const std::vector<KernelClass>& own_laws = default_own_law_classes(),
                                                              const std::vector<MeasuredCase>& class_sweeps = {});

// 2. The laws: each class with kMinTermSupport samples or more fitted
// (fit_class_law), the others borrowing a related class's law (or fitted on
// their few when none is). Throws Error when a class has neither.
struct LawFit {
  std::map<KernelClass, ClassLaw> laws;
  std::vector<std::string> borrowed;  // "attention<-gemm", ...
  std::size_t samples = 0;            // the samples the fitted laws saw
};
LawFit fit_laws(const std::map<KernelClass, std::vector<NodeSample>>& by_class, const HardwareProfile* sibling,
                const std::vector<LawTerm>& sibling_terms = {});

// The finer classes among `classes` that `into` has no law of its own for
// (fewer than kMinTermSupport of its nodes measured: no sweep of that GPU)
// take `from`'s law, where `from` has one: a profile of the same chip (the
// H200 takes the laws the H100's class sweeps fitted). The laws are factors
// on features priced with each profile's own peaks and bandwidths. Returns
// the classes carried.
std::vector<KernelClass> carry_class_laws(const HardwareProfile& from, const std::vector<KernelClass>& classes, HardwareProfile& into);

// 3. The launch path: the launch gaps, the host's speed (the median probe
// of the files that record one) and one figure per host term
// (core/cost/host_terms.def), fitted to each call's counts
// (measured_host_counts: the call, its inputs, its nodes' host terms with
// the collective kernels as measured, the fresh allocations in the order it
// ran).
HostCounts measured_host_counts(const MeasuredCase& c);
// Of the call's own cost (`us_per`'s host_call_us), what comes after its
// last launch (TimeModel::host_call_epilogue_us): the call's cost less the
// median prologue of the device-bound calls among `cases` (each call's
// measured lead, its wall less the span of its profiled kernels, restated at
// `host_probe_us`, less what its host terms priced before its first launch
// and the launch gap before that kernel), clamped to the call's cost; 0 when
// no call is device-bound.
double fit_call_epilogue(const std::vector<MeasuredCase>& cases, const HostCounts& us_per, double host_probe_us, double launch_gap_us);
struct LaunchPathFit {
  double launch_gap_us = 0, cudagraph_gap_us = 0, host_probe_us = 0;
  HostCounts host{};  // µs per host term
  double host_call_epilogue_us = 0;
};
// The epilogue is fitted on `launch_sweeps` where given, else on `cases`.
// With `item` (the wrapper's item timed alone on this GPU's host), the
// per-item figure is that cost restated at the fit's host speed, and the
// other terms are fitted to what the calls' items leave: an item costs the
// wrapper a tuple index and an assert (0.4 µs), while fitted freely the
// column takes 3-5 µs of what the calls that return tuples (attention,
// convolution backward, sorts) cost beside it.
LaunchPathFit fit_launch_path(const std::vector<MeasuredCase>& cases, const std::vector<MeasuredCase>& launch_sweeps = {},
                              const std::optional<WrapperItemCost>& item = std::nullopt);

// 4. The profile: `base` with the time model the three jobs fitted.
struct ProfileFit {
  HardwareProfile profile;
  std::vector<std::string> borrowed;  // "attention<-gemm", ...
  std::size_t cases = 0, samples = 0;
};
// `base` gives the datasheet figures (peaks, DRAM, links); the result is it
// plus the fitted time model, named `name`. `sibling`: a fitted profile of
// a GPU of the same chip whose factors the terms this data cannot fit take
// (nullptr: none), and the `sibling_terms` whatever this data exercises.
// `launch_sweeps` (class_sweep.py's launch_path_sweep): calls whose
// device-bound leads fit the call's epilogue in place of `cases`' own
// (fit_call_epilogue); they fit no host figure and no law. `item`: the
// per-item host figure from the wrapper timed alone (fit_launch_path).
ProfileFit fit_profile(const std::vector<MeasuredCase>& cases, const HardwareProfile& base, const std::string& name,
                       const HardwareProfile* sibling = nullptr, const std::vector<KernelClass>& own_laws = default_own_law_classes(),
                       const std::vector<MeasuredCase>& class_sweeps = {}, const std::vector<LawTerm>& sibling_terms = {},
                       const std::vector<MeasuredCase>& launch_sweeps = {}, const std::optional<WrapperItemCost>& item = std::nullopt);

}  // namespace schedlab
