// core/cost — the calibrated time model: what a node's kernels take on a
// real GPU, and what the host and the launch path add (docs/cost-model.md,
// "Calibrated time model").
//
// Contract: one law per kernel class (core/cost/kernel_class.h), fitted to
// measurements (core/cost/fit.h), of the node's ideal roofline terms:
//
//   t = fixed_us + compute_factor * flops / peak[dtype] + memory_factor * bytes / dram
//
// i.e. an achieved efficiency that grows with size: at size x the class
// reaches x / (x + x_half) of its large-size efficiency 1/factor, with
// x_half = fixed_us / factor. Collectives keep the NCCL-style model of the
// profile's link figures. The host (Inductor's Python wrapper) pays
// `host_us_per_kernel` per Triton launch, `host_us_per_extern` per extern
// call or collective, and `host_call_us` per call; the device
// leaves `launch_gap_us` between back-to-back kernels; under CUDA graphs the
// host pays nothing and the gap is `cudagraph_gap_us`.
#pragma once

#include <map>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/cost/kernel_class.h"

namespace schedlab {

struct ClassLaw {
  double fixed_us = 0;          // per node: launch-to-finish floor of a tiny kernel
  double compute_factor = 0;    // 1 / achieved compute efficiency at large size
  double memory_factor = 0;     // 1 / achieved DRAM efficiency at large size
  double kernels_per_node = 1;  // launches per node (attention backward launches several)
};

struct TimeModel {
  std::map<KernelClass, ClassLaw> laws;  // every class of kKernelClassesWithLaws but Collective
  double launch_gap_us = 0;              // device idle between back-to-back kernels, default mode
  double cudagraph_gap_us = 0;           // the same inside a CUDA graph
  double host_us_per_kernel = 0;         // wrapper cost per Triton kernel launch
  double host_us_per_extern = 0;         // wrapper cost per extern call or collective (Python + ATen dispatch)
  double host_call_us = 0;               // wrapper cost per call (argument handling, allocations)
  int samples = 0;                       // kernels the fit saw (0: written by hand)
};

// The classes a time model must have a law for.
bool class_needs_law(KernelClass c);

// Throws Error naming the missing or bad field ("time_model.laws.gemm.fixed_us").
TimeModel time_model_from_json(const nlohmann::json& j, std::string_view where);
nlohmann::json time_model_to_json(const TimeModel& m);

}  // namespace schedlab
