// core/cost — the calibrated time model: what a node's kernels take on a
// real GPU, and what the host and the launch path add (docs/cost-model.md,
// "Calibrated time model").
//
// Contract: one law per kernel class (core/cost/kernel_class.h), fitted to
// measurements (core/cost/fit.h), of the node's ideal roofline terms:
//
//   t = fixed_us * products + compute_factor * flops / peak[dtype]
//       + memory_factor * min(bytes, l2_bytes) / dram + spill_factor * (bytes - l2_bytes)+ / dram
//       + wave_factor * wave_us + narrow_factor * narrow_us + [f32] fp32_fixed_us
//
// where wave_us and narrow_us are the tile terms of matmuls and convolutions
// (core/cost/implicit_gemm.h: the compute padded to whole waves of output
// tiles over the GPU's `sm_count` SMs; the padded K loop of a convolution
// with narrow input channels), 0 for every other class, and fp32_fixed_us is
// paid by nodes with flops that compute in f32 (other kernels: cuDNN
// transposes f32 convolution operands for its TF32 kernels; f32 attention
// runs the memory-efficient kernel, flash and cuDNN taking 16-bit only);
// bytes up to the L2 cache's size stream at the cache's pace (a consumer
// reads what its producer just wrote), bytes beyond it at DRAM's (all bytes
// use memory_factor when l2_bytes is 0);
// `products` is 2 for a convolution backward that computes the gradients of
// both its input and its weight (two kernel sets), else 1,
// i.e. an achieved efficiency that grows with size: at size x the class
// reaches x / (x + x_half) of its large-size efficiency 1/factor, with
// x_half = fixed_us / factor. Collectives keep the NCCL-style model of the
// profile's link figures. The host (Inductor's Python wrapper) pays
// `host_us_per_kernel` per Triton launch, `host_us_per_extern` per extern
// call, `host_us_per_collective` per functional collective call (c10d's
// Python and dispatch; waits cost nothing) and `host_us_per_collective_kernel`
// per device kernel such a call launches from the host (the fake process
// group's all_gather: one copy per rank), `host_us_per_item` per
// item node (an item of a multi-output extern's result: the wrapper's tuple
// index and its size, stride and alignment asserts), `host_us_per_convolution` and
// `host_us_per_convolution_backward` per cuDNN convolution call (ATen's
// cuDNN path sets up descriptors and finds its execution plan on the host
// at every call; a backward does it for both gradients), and
// `host_call_us` per call; the device
// leaves `launch_gap_us` between back-to-back kernels; under CUDA graphs the
// host pays nothing and the gap is `cudagraph_gap_us`.
#pragma once

#include <map>
#include <string_view>

#include "core/cost/kernel_class.h"

namespace schedlab {

struct ClassLaw {
  double fixed_us = 0;          // per node: launch-to-finish floor of a tiny kernel
  double compute_factor = 0;    // 1 / achieved compute efficiency at large size
  double memory_factor = 0;     // 1 / achieved DRAM efficiency at large size (bytes up to l2_bytes)
  double kernels_per_node = 1;  // launches per node (attention backward launches several)
  double wave_factor = 0;       // per µs of compute padded to whole tile waves (gemm, convolution)
  double narrow_factor = 0;     // per µs of a narrow-channel convolution's padded K loop, per wave
  double fp32_fixed_us = 0;     // added when the node has flops and computes in f32
  double spill_factor = 0;      // memory_factor's counterpart for the bytes beyond l2_bytes
};

struct TimeModel {
  std::map<KernelClass, ClassLaw> laws;  // every class of kKernelClassesWithLaws but Collective
  double launch_gap_us = 0;              // device idle between back-to-back kernels, default mode
  double cudagraph_gap_us = 0;           // the same inside a CUDA graph
  double host_us_per_kernel = 0;         // wrapper cost per Triton kernel launch
  double host_us_per_extern = 0;         // wrapper cost per extern call (Python + ATen dispatch)
  double host_us_per_collective = 0;     // the same per functional collective call
  double host_us_per_collective_kernel = 0;  // and per device kernel the collective call launches itself
  double host_us_per_item = 0;           // per item node: `buf3 = buf2[0]` and its size/stride/alignment asserts
  double host_us_per_convolution = 0;    // the same for a cuDNN convolution call
  double host_us_per_convolution_backward = 0;  // and for a convolution backward call
  double host_call_us = 0;               // wrapper cost per call (argument handling, allocations)
  int samples = 0;                       // kernels the fit saw (0: written by hand)
  int sm_count = 0;                      // SMs the tile terms quantize over (0: no tile terms)
  std::int64_t l2_bytes = 0;             // L2 cache size splitting the memory term (0: no split)
};

// The classes a time model must have a law for.
bool class_needs_law(KernelClass c);

// The host's cost of launching one node of class `c` in default mode: one
// call per node (a Triton launch or an extern op), however many GPU kernels
// that call starts.
double host_us_per_node(const TimeModel& m, KernelClass c);

// An item node: an extern without a kernel that only names an item of a
// multi-output extern's result (or a scalar read out of one; class None).
// The host pays `host_us_per_item` for it.
bool is_item_node(const Graph& g, const Node& n);

// Read and written with the profile (core/io/profiles.h).

}  // namespace schedlab
